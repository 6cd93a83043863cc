/**
 * One value checked the way the config loader checks the whole file, for a
 * prompt or a form field that wants to say "no" before the end: the value
 * is set alone in an otherwise empty config and resolved; the loader's issue
 * for that key, if any, is the message.
 */
import { ConfigError, describeIssue } from "../config/errors.ts";
import { resolveConfig, setPath } from "../config/load.ts";

/** The loader's complaint about `value` at `path`, or undefined when it is fine there. */
export function valueProblem(path: string, value: unknown): string | undefined {
  const file: Record<string, unknown> = {};
  const provider = /^fermix_core\.providers\.([^.]+)\./.exec(path);
  // A provider table needs its model to be a provider at all; a stand-in keeps the check on the one key.
  if (provider && !path.endsWith(".model")) setPath(file, `fermix_core.providers.${provider[1]}.model`, "stand-in");
  setPath(file, path, value);
  try {
    resolveConfig({ file, secrets: {}, env: {}, filePath: "config.toml" });
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const issue = error.issues.find((i) => i.key === path) ?? error.issues[0];
    return issue ? describeIssue(issue) : error.message;
  }
}
