/**
 * Config resolution, pure: TOML text, secret-store values and the environment
 * in; a validated config and its warnings out. Layers, lowest first: built-in
 * defaults < config file < keychain < environment (docs/configuration.md).
 */
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { describeError } from "../kernel/errors.ts";
import { ConfigError, type ConfigIssue } from "./errors.ts";
import { nearest } from "./nearest.ts";
import { realtimeIssues } from "./realtime.ts";
import {
  type Config,
  ConfigSchema,
  DEFAULT_BASE_URLS,
  MCP_SERVER_NAME,
  McpServerSchema,
  PROVIDER_APIS,
  type ProviderApi,
  ProviderSchema,
  SECRET_KEYS,
  schemaAt,
} from "./schema.ts";

export { ConfigError, type ConfigIssue } from "./errors.ts";

export type Env = Record<string, string | undefined>;
type Table = Record<string, unknown>;

/** Environment variables that map onto one config key (lists are comma-separated). */
export const ENV_KEYS: ReadonlyArray<readonly [variable: string, path: string, kind: "string" | "list"]> = [
  ["TELEGRAM_ALLOWED_USER_IDS", "fermix_channels.telegram.allowed_user_ids", "list"],
  ["WHATSAPP_ACCESS_TOKEN", "fermix_channels.whatsapp.access_token", "string"],
  ["WHATSAPP_PHONE_NUMBER_ID", "fermix_channels.whatsapp.phone_number_id", "string"],
  ["WHATSAPP_VERIFY_TOKEN", "fermix_channels.whatsapp.verify_token", "string"],
  ["WHATSAPP_APP_SECRET", "fermix_channels.whatsapp.app_secret", "string"],
  ["WHATSAPP_ALLOWED_SENDER_IDS", "fermix_channels.whatsapp.allowed_sender_ids", "list"],
  ["SLACK_BOT_TOKEN", "fermix_channels.slack.bot_token", "string"],
  ["SLACK_SIGNING_SECRET", "fermix_channels.slack.signing_secret", "string"],
  ["SLACK_ALLOWED_USER_IDS", "fermix_channels.slack.allowed_user_ids", "list"],
  ["DISCORD_BOT_TOKEN", "fermix_channels.discord.bot_token", "string"],
  ["DISCORD_BOT_USER_ID", "fermix_channels.discord.bot_user_id", "string"],
  ["DISCORD_ALLOWED_USER_IDS", "fermix_channels.discord.allowed_user_ids", "list"],
  ["SIGNAL_ACCOUNT", "fermix_channels.signal.account", "string"],
  ["SIGNAL_CLI_PATH", "fermix_channels.signal.cli_path", "string"],
  ["SIGNAL_ALLOWED_SENDER_IDS", "fermix_channels.signal.allowed_sender_ids", "list"],
  ["BRAVE_API_KEY", "fermix_core.web.brave_api_key", "string"],
  // TELEGRAM_BOT_TOKEN is deliberately absent: a stray shell variable must not
  // point two installs at the same bot.
];

/** Provider API keys from the environment, for the provider or transcription backend of that name. */
export const PROVIDER_KEY_ENV: Readonly<Record<string, string>> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  xai: "XAI_API_KEY",
  deepgram: "DEEPGRAM_API_KEY",
};

/** Parse config.toml; a syntax error becomes a ConfigError naming the file. */
export function parseConfigText(text: string, file: string): Table {
  try {
    return Bun.TOML.parse(text) as Table;
  } catch (error) {
    throw new ConfigError(file, [], describeError(error));
  }
}

/** Dotted paths of every secret the keychain layer may supply for this file. */
export function secretPaths(file: Table): string[] {
  const paths = SECRET_KEYS.map(([section, key]) => `${section}.${key}`);
  for (const name of Object.keys(providersOf(file))) paths.push(`fermix_core.providers.${name}.api_key`);
  paths.push(...mcpSecretPaths(file));
  return paths;
}

/**
 * An MCP server's env and headers values are credentials: each one the file
 * names (its value may be left "") may come from the secret store under the
 * same dotted path, e.g. `fermix_core.mcp.servers.github.env.GITHUB_TOKEN`.
 */
function mcpSecretPaths(file: Table): string[] {
  const paths: string[] = [];
  for (const [name, server] of Object.entries(mcpServersOf(file))) {
    if (!isTable(server)) continue;
    for (const part of ["env", "headers"] as const) {
      const values = server[part];
      if (isTable(values)) for (const key of Object.keys(values)) paths.push(`fermix_core.mcp.servers.${name}.${part}.${key}`);
    }
  }
  return paths;
}

export interface ResolveInput {
  /** The parsed config.toml ({} when there is none). */
  file: Table;
  /** Values from the keychain or secrets.toml, by dotted path. */
  secrets: Readonly<Record<string, string>>;
  env: Env;
  /** Where the file lives, for messages. */
  filePath: string;
}

export interface Resolved {
  config: Config;
  warnings: string[];
  /** Every credential value in the result, so the logger can redact them. */
  secretValues: string[];
}

/** Layer, default and validate a config; throws ConfigError listing every bad key. */
export function resolveConfig(input: ResolveInput): Resolved {
  const warnings = unknownKeys(input.file).map(({ key, suggestion }) => `unknown config key ${key}${suggestion ? ` (did you mean ${suggestion}?)` : ""}`);
  const merged = structuredClone(input.file);
  for (const [path, value] of Object.entries(input.secrets)) setPath(merged, path, value);
  applyEnv(merged, input.env);

  // No conversion: a number where a string or a list is expected (owner_user_id = 42) is an error naming
  // the key, not silently made "42". Every layer above the file already yields the right types.
  const withDefaults = Value.Default(ConfigSchema, merged) as Table;
  const providers = providersOf(withDefaults);
  for (const [name, provider] of Object.entries(providers)) {
    if (isTable(provider)) providers[name] = Value.Default(ProviderSchema, withApiDefaults(name, provider));
  }

  const servers = mcpServersOf(withDefaults);
  for (const [name, server] of Object.entries(servers)) {
    if (isTable(server)) servers[name] = Value.Default(McpServerSchema, server);
  }

  const issues = [...schemaIssues(withDefaults), ...choiceIssues(withDefaults)];
  if (issues.length > 0) throw new ConfigError(input.filePath, issues);
  const config = withDefaults as unknown as Config;
  warnings.push(...settlePrimary(config, input.filePath));
  checkProviderLimits(config, input.filePath);
  checkFallback(config, input.filePath);
  const realtime = realtimeIssues(config);
  if (realtime.length > 0) throw new ConfigError(input.filePath, realtime);
  return { config, warnings, secretValues: collectSecrets(config) };
}

/** Keys in the file that the schema does not know, each with the nearest known sibling. */
export function unknownKeys(file: Table): Array<{ key: string; suggestion?: string }> {
  const found: Array<{ key: string; suggestion?: string }> = [];
  const walk = (value: unknown, schema: TSchema, path: string[]) => {
    if (!isTable(value) || schema.type !== "object") return;
    if (schema.patternProperties) {
      const inner = Object.values(schema.patternProperties)[0] as TSchema;
      for (const [key, child] of Object.entries(value)) walk(child, inner, [...path, key]);
      return;
    }
    const known = Object.keys(schema.properties ?? {});
    for (const [key, child] of Object.entries(value)) {
      const childSchema = schema.properties?.[key] as TSchema | undefined;
      if (childSchema) {
        walk(child, childSchema, [...path, key]);
        continue;
      }
      const suggestion = nearest(key, known);
      found.push({
        key: [...path, key].join("."),
        ...(suggestion ? { suggestion: [...path, suggestion].join(".") } : {}),
      });
    }
  };
  walk(file, ConfigSchema, []);
  return found;
}

function applyEnv(target: Table, env: Env): void {
  for (const [variable, path, kind] of ENV_KEYS) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === "") continue;
    const value =
      kind === "list"
        ? raw
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : raw.trim();
    setPath(target, path, value);
  }
  const providers = providersOf(target);
  for (const [name, variable] of Object.entries(PROVIDER_KEY_ENV)) {
    const key = env[variable]?.trim();
    if (!key) continue;
    const provider = providers[name];
    if (isTable(provider)) provider.api_key = key;
  }
  const transcription = getPath(target, "fermix_core.transcription");
  const backend = (isTable(transcription) && typeof transcription.backend === "string" && transcription.backend) || "openai";
  const variable = PROVIDER_KEY_ENV[backend];
  const key = variable ? env[variable]?.trim() : undefined;
  if (key) setPath(target, "fermix_core.transcription.api_key", key);
}

/** Keys that are valid alone but not together (or not apart): an MCP server's command or url, the SearXNG backend's url. */
function choiceIssues(value: Table): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [name, server] of Object.entries(mcpServersOf(value))) {
    if (!isTable(server)) continue;
    const key = `fermix_core.mcp.servers.${name}`;
    if (!new RegExp(MCP_SERVER_NAME).test(name) || name.length > 32) {
      issues.push({
        key,
        value: name,
        allowed: "a server name of letters, digits and single - or _ between them, at most 32 characters (its tools are offered as <server>__<tool>)",
      });
      continue;
    }
    if (server.command !== undefined && server.url !== undefined) {
      issues.push({ key: `${key}.url`, value: server.url, allowed: "command (a program on stdio) or url (streamable HTTP), not both" });
    } else if (server.command === undefined && server.url === undefined) {
      issues.push({ key: `${key}.command`, value: undefined, allowed: "a program to start, or url for a server over streamable HTTP" });
    }
  }
  const web = getPath(value, "fermix_core.web");
  if (isTable(web) && web.search_backend === "searxng" && web.searxng_url === undefined) {
    issues.push({ key: "fermix_core.web.searxng_url", value: undefined, allowed: 'the SearXNG instance\'s http(s) URL (search_backend = "searxng" needs it)' });
  }
  return issues;
}

function schemaIssues(value: Table): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const error of Value.Errors(ConfigSchema, value)) {
    const parts = error.path.split("/").filter(Boolean);
    const key = parts.map((p, i) => (/^\d+$/.test(p) && i > 0 ? `[${p}]` : `${i > 0 ? "." : ""}${p}`)).join("");
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ key, value: error.value, allowed: allowedFor(schemaAt(parts) ?? error.schema) });
  }
  return issues;
}

/** What a schema accepts, in words a user can act on. */
export function allowedFor(schema: TSchema): string {
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => "const" in s)) {
    return `one of ${schema.anyOf.map((s: TSchema) => JSON.stringify(s.const)).join(", ")}`;
  }
  switch (schema.type) {
    case "boolean":
      return "true or false";
    case "integer":
    case "number": {
      const noun = schema.type === "integer" ? "an integer" : "a number";
      const low =
        schema.exclusiveMinimum !== undefined
          ? `greater than ${schema.exclusiveMinimum}`
          : schema.minimum !== undefined
            ? `at least ${schema.minimum}`
            : undefined;
      const high = schema.maximum !== undefined ? `at most ${schema.maximum}` : undefined;
      return [noun, [low, high].filter(Boolean).join(" and ")].filter(Boolean).join(" ");
    }
    case "string":
      if (schema.format === "timezone") return "an IANA time zone name such as Europe/Paris or UTC";
      if (typeof schema.pattern === "string" && schema.pattern.startsWith("^https?://")) {
        return schema.pattern.includes("[^/") ? "an http(s) URL without a trailing /" : "an http(s) URL";
      }
      if (schema.format === "hostname") return "a host name such as fermix.example (no scheme, no port)";
      if (schema.format === "host-or-address") return "a host name or an IP address such as nas.home or 192.168.1.20 (no scheme, no port)";
      if (schema.pattern) return `a string matching ${schema.pattern}`;
      if (typeof schema.minLength === "number" && schema.minLength > 1) return `a string of at least ${schema.minLength} characters`;
      return "a non-empty string";
    case "array": {
      const items = schema.items as TSchema | undefined;
      if (items?.format === "hostname") return "a list of host names";
      if (items?.format === "host-or-address") return "a list of host names or IP addresses";
      if (Array.isArray(items?.anyOf) && items.anyOf.every((s: TSchema) => "const" in s))
        return `a list of ${items.anyOf.map((s: TSchema) => s.const).join(", ")}`;
      return items?.minLength ? "a list of non-empty strings" : "a list of strings";
    }
    case "object":
      return schema.patternProperties ? "a table of names to strings" : "a table";
    default:
      return "a valid value";
  }
}

/**
 * A provider's `api` and `base_url` where the file leaves them out: the table
 * named anthropic speaks Anthropic's API (as the one named openai speaks
 * OpenAI's), and each API's own service is its default URL.
 */
function withApiDefaults(name: string, provider: Table): Table {
  const out = { ...provider };
  out.api ??= name === "anthropic" ? "anthropic" : "responses";
  if (out.base_url === undefined && PROVIDER_APIS.includes(out.api as ProviderApi)) out.base_url = DEFAULT_BASE_URLS[out.api as ProviderApi];
  return out;
}

/** Thinking needs room to answer after it: a budget at or above the answer's limit is refused naming the key. */
function checkProviderLimits(config: Config, filePath: string): void {
  const issues: ConfigIssue[] = [];
  for (const [name, provider] of Object.entries(config.fermix_core.providers)) {
    const budget = provider.thinking_budget_tokens;
    if (budget !== undefined && provider.max_tokens !== undefined && budget >= provider.max_tokens) {
      issues.push({
        key: `fermix_core.providers.${name}.thinking_budget_tokens`,
        value: budget,
        allowed: `less than max_tokens (${provider.max_tokens}): the answer comes after the thinking, within the same limit`,
      });
    }
  }
  if (issues.length > 0) throw new ConfigError(filePath, issues);
}

/** `fallback` names configured providers other than the primary, each once. */
function checkFallback(config: Config, filePath: string): void {
  const { providers, fallback } = config.fermix_core;
  const names = Object.keys(providers);
  const primary = names.find((name) => providers[name]!.primary === true);
  const issues: ConfigIssue[] = [];
  fallback.forEach((name, index) => {
    const key = `fermix_core.fallback[${index}]`;
    if (!Object.hasOwn(providers, name)) {
      issues.push({
        key,
        value: name,
        allowed: names.length > 0 ? `the name of a configured provider (${names.join(", ")})` : "a configured provider (none is)",
      });
    } else if (name === primary) {
      issues.push({ key, value: name, allowed: `a provider other than the primary (${name} is primary and always tried first)` });
    } else if (fallback.indexOf(name) !== index) {
      issues.push({ key, value: name, allowed: "each provider once (it is already earlier in the list)" });
    }
  });
  if (issues.length > 0) throw new ConfigError(filePath, issues);
}

/** One provider is primary: the one marked, else the only one. Two marked is an error. */
function settlePrimary(config: Config, filePath: string): string[] {
  const entries = Object.entries(config.fermix_core.providers);
  const marked = entries.filter(([, p]) => p.primary === true);
  if (marked.length > 1) {
    throw new ConfigError(filePath, [
      {
        key: `fermix_core.providers.${marked[1]![0]}.primary`,
        value: true,
        allowed: `at most one primary provider (${marked[0]![0]} is already primary)`,
      },
    ]);
  }
  if (marked.length === 1 || entries.length === 0) return [];
  entries[0]![1].primary = true;
  return entries.length === 1 ? [] : [`no provider is marked primary; using ${entries[0]![0]} (set primary = true on one provider)`];
}

function collectSecrets(config: Config): string[] {
  const values: string[] = [];
  for (const [section, key] of SECRET_KEYS) {
    const value = getPath(config as unknown as Table, `${section}.${key}`);
    if (typeof value === "string") values.push(value);
  }
  for (const provider of Object.values(config.fermix_core.providers)) {
    if (provider.api_key) values.push(provider.api_key);
  }
  for (const server of Object.values(config.fermix_core.mcp.servers)) {
    values.push(...[...Object.values(server.env), ...Object.values(server.headers)].filter((value) => value !== ""));
  }
  return values;
}

function mcpServersOf(table: Table): Table {
  const servers = getPath(table, "fermix_core.mcp.servers");
  return isTable(servers) ? servers : {};
}

function providersOf(table: Table): Table {
  const providers = getPath(table, "fermix_core.providers");
  return isTable(providers) ? providers : {};
}

function isTable(value: unknown): value is Table {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function getPath(table: Table, path: string): unknown {
  let node: unknown = table;
  for (const part of path.split(".")) {
    if (!isTable(node)) return undefined;
    node = node[part];
  }
  return node;
}

export function setPath(table: Table, path: string, value: unknown): void {
  const parts = path.split(".");
  let node = table;
  for (const part of parts.slice(0, -1)) {
    if (!isTable(node[part])) node[part] = {};
    node = node[part] as Table;
  }
  node[parts.at(-1)!] = value;
}
