/**
 * The configuration reference (docs/configuration.md), generated from the
 * TypeBox schema: every key with its table, type, default, environment
 * variable and meaning. `bun run docs` writes it; a test fails when the
 * committed file is not what the schema says, so the reference cannot drift.
 */
import type { TSchema } from "@sinclair/typebox";
import { allowedFor, ENV_KEYS } from "./load.ts";
import { ConfigSchema } from "./schema.ts";

/** One documented key. */
export interface ReferenceKey {
  /** The TOML table, e.g. "fermix_channels.telegram" or "fermix_core.providers.<name>". */
  table: string;
  key: string;
  type: string;
  default?: unknown;
  env?: string;
  description: string;
}

/** Environment variables that set a key beyond the channel table of load.ts. */
const EXTRA_ENV: Readonly<Record<string, string>> = {
  "fermix_core.providers.<name>.api_key": "OPENAI_API_KEY / ANTHROPIC_API_KEY (provider of that name)",
  "fermix_core.transcription.api_key": "OPENAI_API_KEY / XAI_API_KEY / DEEPGRAM_API_KEY (by backend)",
  "fermix_core.http.bind": "FERMIX_HTTP_BIND",
  "fermix_core.http.port": "PORT",
};

/** Every leaf key of a schema, in schema order; a record of tables is documented once as `<name>`. */
export function referenceKeys(schema: TSchema = ConfigSchema): ReferenceKey[] {
  const out: ReferenceKey[] = [];
  const env = new Map(ENV_KEYS.map(([variable, path]) => [path, variable]));
  const walk = (node: TSchema, path: string[]) => {
    if (node.type === "object" && node.properties) {
      for (const [key, child] of Object.entries(node.properties as Record<string, TSchema>)) {
        // A record of tables (`providers.<name>`) is walked; a record of strings (an MCP server's env) is one key.
        const records = child.patternProperties ? (Object.values(child.patternProperties)[0] as TSchema).type === "object" : false;
        const isTable = (child.type === "object" && (child.properties || records)) as boolean;
        if (isTable) walk(child, [...path, key]);
        else out.push(leaf(path, key, child));
      }
      return;
    }
    if (node.type === "object" && node.patternProperties) {
      walk(Object.values(node.patternProperties)[0] as TSchema, [...path, "<name>"]);
    }
  };
  const leaf = (path: string[], key: string, node: TSchema): ReferenceKey => {
    const dotted = [...path, key].join(".");
    const variable = env.get(dotted) ?? EXTRA_ENV[dotted];
    return {
      table: path.join("."),
      key,
      type: allowedFor(node),
      ...(node.default !== undefined ? { default: node.default } : {}),
      ...(variable ? { env: variable } : {}),
      description: typeof node.description === "string" ? node.description : "",
    };
  };
  walk(schema, []);
  return out;
}

const HEADER = `# Configuration reference

Generated from the configuration schema by \`bun run docs\`; do not edit by
hand. Fermix reads \`<home>/config.toml\` (\`$FERMIX_HOME\`, else
\`~/.fermix\`). Layers, lowest first: built-in defaults < config.toml < the OS
keychain (service \`fermix\`), or \`<home>/secrets.toml\` (mode 0600) where no
keychain answers < environment. An invalid value stops the load with an error
naming the key, the value and what is allowed; an unknown key is a warning
naming the nearest known key. \`fermix setup\` writes this file for you.

Environment variables always honoured: \`PORT\` (default 4030) and
\`FERMIX_HTTP_BIND\` (default 127.0.0.1) for the HTTP server, \`FERMIX_HOME\`,
\`FERMIX_LOG_LEVEL\` (debug, info, warn, error), \`FERMIX_SECRET_STORE\`
(file or keychain), the channel variables in the tables below, and
\`OPENAI_API_KEY\`, \`ANTHROPIC_API_KEY\`, \`XAI_API_KEY\`, \`DEEPGRAM_API_KEY\` for
the provider and transcription backend of that name. \`TELEGRAM_BOT_TOKEN\` is never read.

Also read, outside the configuration: \`TZ\` (the system time zone, the
default for \`[fermix_core] timezone\`), \`NO_COLOR\` (no colour in
\`fermix ask\`, \`chat\` and \`doctor\`), \`XDG_CONFIG_HOME\` (where
\`fermix service install\` puts the systemd user unit, default
\`~/.config\`), \`XDG_DATA_HOME\` (signal-cli's attachment store, default
\`~/.local/share\`), and \`FERMIX_SETUP_PROBES\` (\`host:port,…\`: the local
model servers \`fermix setup\` looks for instead of the usual ports on
127.0.0.1).
`;

/** The whole reference as Markdown. */
export function renderReference(keys: readonly ReferenceKey[] = referenceKeys()): string {
  const tables = new Map<string, ReferenceKey[]>();
  for (const key of keys) tables.set(key.table, [...(tables.get(key.table) ?? []), key]);
  const sections = [...tables].map(([table, rows]) => {
    const lines = [`## \`[${table}]\``, "", "| key | type | default | environment | meaning |", "|---|---|---|---|---|"];
    for (const row of rows) {
      lines.push(
        `| \`${row.key}\` | ${cell(row.type)} | ${row.default === undefined ? "—" : `\`${tomlValue(row.default)}\``} | ${row.env ? `\`${row.env}\`` : "—"} | ${cell(row.description)} |`,
      );
    }
    return lines.join("\n");
  });
  return `${HEADER}\n${sections.join("\n\n")}\n`;
}

/** Keys of the schema that the given reference text does not document (table heading and key row). */
export function undocumented(markdown: string, keys: readonly ReferenceKey[] = referenceKeys()): string[] {
  const missing: string[] = [];
  for (const key of keys) {
    const at = markdown.indexOf(`## \`[${key.table}]\``);
    const next = at < 0 ? -1 : markdown.indexOf("\n## ", at + 1);
    const section = at < 0 ? "" : markdown.slice(at, next < 0 ? undefined : next);
    if (!section.includes(`| \`${key.key}\` |`)) missing.push(`${key.table}.${key.key}`);
  }
  return missing;
}

function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
  if (value !== null && typeof value === "object") return "{}";
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}
