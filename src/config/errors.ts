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
const SECRET_LEAVES = new Set(["api_key", "bot_token", "access_token", "verify_token", "app_secret", "signing_secret", "dashboard_token", "brave_api_key"]);

/** Whether a key's value is a credential: a secret leaf, or any value of an MCP server's env or headers. */
const isSecretKey = (key: string): boolean => SECRET_LEAVES.has(key.split(".").at(-1) ?? "") || /^fermix_core\.mcp\.servers\.[^.]+\.(env|headers)\./.test(key);

/** The config could not be loaded: a TOML syntax error, or values the schema rejects. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly issues: ConfigIssue[],
    syntax?: string,
  ) {
    super(syntax ? `cannot parse ${file}: ${syntax}` : `invalid config in ${file}:\n${issues.map((i) => `  ${describeIssue(i)}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export function describeIssue(issue: ConfigIssue): string {
  const shown = issue.value === undefined ? "is missing" : `= ${showValue(issue.key, issue.value)} is not valid`;
  return `${issue.key} ${shown}: expected ${issue.allowed}${typeHint(issue)}`;
}

/** A TOML type that is nearly right: say how to write it (a credential is never shown, not even in the hint). */
function typeHint(issue: ConfigIssue): string {
  const { value, allowed } = issue;
  if (isSecretKey(issue.key)) return typeof value === "string" ? "" : " (quote it)";
  const scalar = typeof value === "number" || typeof value === "boolean" || typeof value === "bigint";
  if (scalar && /string/.test(allowed) && !/list/.test(allowed)) return ` (quote it: "${String(value)}")`;
  if (scalar && /list/.test(allowed)) return ` (write a list: ["${String(value)}"])`;
  if (typeof value === "string" && /list/.test(allowed)) return ` (write a list: [${JSON.stringify(value)}])`;
  return "";
}

function showValue(key: string, value: unknown): string {
  if (isSecretKey(key)) return "[redacted]";
  return JSON.stringify(value) ?? String(value);
}
