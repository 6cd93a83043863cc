/** Load the config from disk: read the file, pull secrets from the store, resolve layers. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { type Env, parseConfigText, type Resolved, resolveConfig, secretPaths } from "./load.ts";
import { type Paths, pathsFor, resolveHome } from "./paths.ts";
import { openSecretStore, readSecrets, type SecretStore } from "./secrets.ts";

export interface LoadedConfig extends Resolved {
  paths: Paths;
  /** False on a fresh home: no config.toml yet. */
  fileExists: boolean;
  /** The file's modification time at load, to tell when a restart is required. */
  fileMtimeMs: number | null;
  secretStore: SecretStore;
}

export async function loadConfig(env: Env): Promise<LoadedConfig> {
  const paths = pathsFor(resolveHome(env));
  const fileExists = existsSync(paths.config);
  const file = fileExists ? parseConfigText(readFileSync(paths.config, "utf8"), paths.config) : {};
  const secretStore = await openSecretStore(paths.secrets, env);
  let secrets: Record<string, string> = {};
  try {
    secrets = await readSecrets(secretStore, secretPaths(file));
  } catch {
    // An unreadable store is reported by doctor; the config still loads from the other layers.
  }
  const resolved = resolveConfig({ file, secrets, env, filePath: paths.config });
  return {
    ...resolved,
    paths,
    fileExists,
    fileMtimeMs: fileExists ? statSync(paths.config).mtimeMs : null,
    secretStore,
  };
}

/** The modification time of config.toml now, or null when it is gone. */
export function currentMtime(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}
