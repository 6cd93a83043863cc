/**
 * Applying a setup plan to disk: credentials into the secret store (the OS
 * keychain, or the 0600 secrets.toml where none answers), then config.toml
 * replaced atomically — a 0600 temp file renamed over it, the previous file
 * kept as config.toml.bak — so a crash mid-write leaves the old file or the
 * new one, never half of either.
 */
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { type Env, parseConfigText, secretPaths } from "../config/load.ts";
import { type Paths, pathsFor, resolveHome } from "../config/paths.ts";
import { openSecretStore, readSecrets, type SecretStore } from "../config/secrets.ts";
import { planSetup, type SetupChange, type SetupPlan } from "./plan.ts";

/** What is on disk now, as setup starts from it. */
export interface CurrentSetup {
  paths: Paths;
  /** config.toml's text, "" when there is none. */
  text: string;
  exists: boolean;
  store: SecretStore;
  /** The secrets stored now, by dotted path. */
  secrets: Record<string, string>;
}

export async function readCurrentSetup(env: Env): Promise<CurrentSetup> {
  const paths = pathsFor(resolveHome(env));
  const exists = existsSync(paths.config);
  const text = exists ? readFileSync(paths.config, "utf8") : "";
  const store = await openSecretStore(paths.secrets, env);
  let secrets: Record<string, string> = {};
  try {
    secrets = await readSecrets(store, secretPaths(parseConfigText(text, paths.config)));
  } catch {
    // A store that cannot be read (or a file that does not parse) starts from nothing; the plan reports a bad file.
  }
  return { paths, text, exists, store, secrets };
}

export interface AppliedSetup {
  plan: SetupPlan;
  configPath: string;
  /** Where the previous config.toml was kept, when there was one. */
  backupPath?: string;
  /** Where the credentials went ("OS keychain …" or the secrets.toml path). */
  secretStore: string;
  /** False when nothing changed and nothing was written. */
  wrote: boolean;
}

/** Plan (validating with the loader), then write secrets and config.toml. Throws ConfigError before writing anything. */
export async function applySetup(current: CurrentSetup, changes: readonly SetupChange[]): Promise<AppliedSetup> {
  const plan = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes, filePath: current.paths.config });
  const base = { plan, configPath: current.paths.config, secretStore: current.store.location };
  if (plan.changed.length === 0 && current.exists && plan.text === current.text) return { ...base, wrote: false };
  mkdirSync(current.paths.home, { recursive: true, mode: 0o700 });
  // Secrets first: a daemon that reloads on the new config.toml finds them already there.
  for (const [path, value] of Object.entries(plan.secrets)) await current.store.set(path, value);
  const backupPath = writeConfigAtomically(current.paths.config, plan.text);
  return { ...base, wrote: true, ...(backupPath ? { backupPath } : {}) };
}

/** Replace `path` with `text` (mode 0600) by rename; returns the backup of the previous file, if any. */
export function writeConfigAtomically(path: string, text: string): string | undefined {
  let backup: string | undefined;
  if (existsSync(path)) {
    backup = `${path}.bak`;
    copyFileSync(path, backup);
    chmodSync(backup, 0o600);
  }
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  chmodSync(temp, 0o600);
  renameSync(temp, path);
  return backup;
}
