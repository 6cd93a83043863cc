/** A LoadedConfig built from TOML in memory, for tests of code that takes a loaded config. */
import type { LoadedConfig } from "../../src/config/index.ts";
import { parseConfigText, resolveConfig } from "../../src/config/load.ts";
import { pathsFor } from "../../src/config/paths.ts";
import { FileStore } from "../../src/config/secrets.ts";

export function loadedFrom(toml: string | null, env: Record<string, string> = {}, home = "/home/you/.fermix"): LoadedConfig {
  const paths = pathsFor(home);
  const file = toml === null ? {} : parseConfigText(toml, paths.config);
  return {
    ...resolveConfig({ file, env, secrets: {}, filePath: paths.config }),
    paths,
    fileExists: toml !== null,
    fileMtimeMs: toml === null ? null : 1,
    secretStore: new FileStore(paths.secrets),
  };
}
