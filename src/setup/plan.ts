/**
 * What a setup run will write, decided without touching the disk: the
 * changes merged into the current config.toml text (keeping every key setup
 * does not manage, and the comments and layout around them), credentials
 * split off for the secret store, and the result validated by the config
 * loader itself — so a bad value fails with the loader's message before
 * anything is written.
 *
 * The TOML is edited with `@decimalturn/toml-patch`, which patches a parsed
 * document in place instead of re-serialising it: a hand-edited file keeps
 * its comments. Bun.TOML has no writer that preserves them.
 */
import { parse as parseToml, patch as patchToml, TomlFormat } from "@decimalturn/toml-patch";
import { getPath, parseConfigText, type Resolved, resolveConfig, setPath } from "../config/load.ts";
import { isSecretPath } from "./fields.ts";

type Table = Record<string, unknown>;

/** One key to set; `value: undefined` removes the key from config.toml. */
export interface SetupChange {
  path: string;
  value: unknown;
}

export interface PlanInput {
  /** The current config.toml ("" when there is none). */
  currentText: string;
  /** The secrets stored now, by dotted path (so the plan is validated as the daemon will load it). */
  currentSecrets: Readonly<Record<string, string>>;
  changes: readonly SetupChange[];
  /** config.toml's path, for messages. */
  filePath: string;
}

export interface SetupPlan {
  /** The new config.toml. */
  text: string;
  /** Credentials to put in the secret store, by dotted path. */
  secrets: Record<string, string>;
  /** The config as the daemon will load it (environment aside). */
  resolved: Resolved;
  /** Keys whose value changes, config and secrets alike (values never shown). */
  changed: string[];
}

const isTable = (value: unknown): value is Table => typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** Merge, validate and render; throws ConfigError (the loader's) on a bad value. */
export function planSetup(input: PlanInput): SetupPlan {
  // Validate the current text first with the loader's parser: a syntax error names the file as `fermix run` would.
  parseConfigText(input.currentText, input.filePath);
  const table = (input.currentText.trim() === "" ? {} : parseToml(input.currentText)) as Table;
  const secrets: Record<string, string> = {};
  const changed: string[] = [];

  for (const { path, value } of input.changes) {
    if (isSecretPath(path)) {
      // A credential found in the file moves to the store: config.toml never keeps one setup touched.
      if (getPath(table, path) !== undefined) deletePath(table, path);
      if (typeof value === "string" && value !== "" && value !== input.currentSecrets[path]) {
        secrets[path] = value;
        changed.push(path);
      }
      continue;
    }
    const before = getPath(table, path);
    if (value === undefined) {
      if (before !== undefined) {
        deletePath(table, path);
        changed.push(path);
      }
      continue;
    }
    if (!Bun.deepEquals(before, value)) {
      setPath(table, path, value);
      changed.push(path);
    }
  }

  const text = renderToml(input.currentText, table);
  const written = parseConfigText(text, input.filePath);
  const resolved = resolveConfig({ file: written, secrets: { ...input.currentSecrets, ...secrets }, env: {}, filePath: input.filePath });
  return { text, secrets, resolved, changed };
}

const NEW_FILE_HEADER = `# Fermix configuration, written by \`fermix setup\`. Edit it freely: setup keeps
# the keys it does not manage and your comments. Credentials live in the OS
# keychain or secrets.toml, never here.
`;

/**
 * The new table as TOML, patched into the current text. Tables that are new
 * get a `[header]` of their own first, so they read like a hand-written file
 * instead of dotted keys at the top.
 */
export function renderToml(currentText: string, table: Table): string {
  let base = currentText.trim() === "" ? NEW_FILE_HEADER : currentText;
  const existing = (currentText.trim() === "" ? {} : parseToml(currentText)) as Table;
  // The core's tables first, then the channels', as in the documentation.
  const order = (path: string[]) => (path[0] === "fermix_core" ? 0 : 1);
  for (const path of leafTables(table, []).sort((a, b) => order(a) - order(b))) {
    if (isTable(getPath(existing, path.join(".")))) continue;
    const candidate = `${base.replace(/\n*$/, "\n")}\n[${path.map(tomlKey).join(".")}]\n`;
    try {
      parseToml(candidate);
      base = candidate;
    } catch {
      // The table is defined another way (dotted keys, an inline table): let the patch put values there.
    }
  }
  const format = TomlFormat.autoDetectFormat(base);
  if (!/=\s*\[\s/.test(base)) format.bracketSpacing = false;
  const text = patchToml(base, table, format);
  const check = parseToml(text);
  if (!Bun.deepEquals(check, table)) {
    throw new Error("internal error: the rewritten config.toml does not read back as intended; nothing was written");
  }
  return text;
}

/** Paths of tables that hold at least one plain value (those need a `[header]`). */
function leafTables(table: Table, path: string[]): string[][] {
  const found: string[][] = [];
  const entries = Object.entries(table);
  if (path.length > 0 && entries.some(([, v]) => !isTable(v))) found.push(path);
  for (const [key, value] of entries) if (isTable(value)) found.push(...leafTables(value, [...path, key]));
  return found;
}

/** A key as TOML: bare when it can be, quoted otherwise. */
function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function deletePath(table: Table, path: string): void {
  const parts = path.split(".");
  const parent = getPath(table, parts.slice(0, -1).join("."));
  if (isTable(parent)) delete parent[parts.at(-1)!];
}
