/**
 * Files that should be the owner's alone but are not: a home other users can
 * read, a secrets file with a loose mode. Doctor fails on them; the daemon
 * logs a warning at start and lists them in health, so a running Fermix does
 * not report "ready" while its credentials lie open.
 */
import { existsSync, statSync } from "node:fs";
import type { LoadedConfig } from "../config/index.ts";

/** Why the home is exposed, or undefined when only its owner can enter it. */
export function homeExposure(home: string): string | undefined {
  if (!existsSync(home)) return undefined;
  const mode = statSync(home).mode & 0o777;
  return (mode & 0o077) !== 0 ? `${home} is readable by other users (mode ${mode.toString(8)}): run chmod 700 ${home}` : undefined;
}

/** Why the secrets file is exposed, or undefined (keychain, no file yet, or mode 600). */
export function secretsExposure(loaded: Pick<LoadedConfig, "secretStore">): string | undefined {
  const store = loaded.secretStore;
  if (store.kind === "keychain" || !existsSync(store.location)) return undefined;
  const mode = statSync(store.location).mode & 0o777;
  return (mode & 0o077) !== 0 ? `${store.location} is readable by other users (mode ${mode.toString(8)}): run chmod 600 ${store.location}` : undefined;
}

/** Every exposure, as failure lines for health. */
export function exposures(loaded: LoadedConfig): string[] {
  const home = homeExposure(loaded.paths.home);
  const secrets = secretsExposure(loaded);
  return [...(home ? [`home: ${home}`] : []), ...(secrets ? [`secrets: ${secrets}`] : [])];
}
