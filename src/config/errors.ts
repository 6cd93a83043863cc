/**
 * The config error type, kept apart from the loader so the CLI can recognise
 * it without importing the schema machinery (start-up time).
 */

export interface ConfigIssue {
  key: string;
  value: unknown;
  allowed: string;
}

/** Key leaves whose values are credentials: never shown in messages. */
const SECRET_LEAVES = new Set(["api_key", "bot_token", "access_token", "verify_token", "app_secret", "signing_secret"]);

/** The config could not be loaded: a TOML syntax error, or values the schema rejects. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly issues: ConfigIssue[],
    syntax?: string,
  ) {
    super(
      syntax
        ? `cannot parse ${file}: ${syntax}`
        : `invalid config in ${file}:\n${issues.map((i) => `  ${describeIssue(i)}`).join("\n")}`,
    );
    this.name = "ConfigError";
  }
}

export function describeIssue(issue: ConfigIssue): string {
  const shown = issue.value === undefined ? "is missing" : `= ${showValue(issue.key, issue.value)} is not valid`;
  return `${issue.key} ${shown}: expected ${issue.allowed}`;
}

function showValue(key: string, value: unknown): string {
  const leaf = key.split(".").at(-1) ?? "";
  if (SECRET_LEAVES.has(leaf)) return "[redacted]";
  return JSON.stringify(value) ?? String(value);
}
