/**
 * Config keys the import wants to set, grouped as the rows the owner reads
 * ("Telegram owner", "provider openai"), and the rule that keeps it from
 * overwriting Fermix: an item whose keys Fermix already holds with other
 * values is skipped unless --force; one whose keys hold exactly these
 * values is unchanged; anything else is imported. Secrets are compared with
 * the secret store, never shown.
 */
import { getPath } from "../../config/load.ts";
import { isSecretPath } from "../fields.ts";
import type { SetupChange } from "../plan.ts";
import { type ImportRow, row } from "./rows.ts";

export interface ConfigItem {
  what: string;
  /** What it becomes, for the row (never a credential). */
  detail: string;
  changes: SetupChange[];
  /** A conflict that differing keys do not show (another provider is already primary). */
  conflict?: string;
}

export interface CurrentConfig {
  /** config.toml as a table. */
  table: Record<string, unknown>;
  /** The secrets stored now, by dotted path. */
  secrets: Readonly<Record<string, string>>;
}

/** The rows, and the changes to write, for `items` against what Fermix holds now. */
export function decideItems(items: readonly ConfigItem[], current: CurrentConfig, force: boolean): { rows: ImportRow[]; changes: SetupChange[] } {
  const rows: ImportRow[] = [];
  const changes: SetupChange[] = [];
  for (const item of items) {
    const now = (path: string) => (isSecretPath(path) ? current.secrets[path] : getPath(current.table, path));
    const same = item.changes.every((c) => Bun.deepEquals(now(c.path), c.value));
    if (same && !item.conflict) {
      rows.push(row("unchanged", item.what, `already set in Fermix: ${item.detail}`));
      continue;
    }
    const differs = item.changes.filter((c) => now(c.path) !== undefined && !Bun.deepEquals(now(c.path), c.value));
    const conflict = item.conflict ?? (differs.length > 0 ? `Fermix already has ${differs.map((c) => c.path).join(", ")} set otherwise` : undefined);
    if (conflict && !force) {
      rows.push(row("skipped", item.what, `${conflict} (--force replaces it)`));
      continue;
    }
    rows.push(row("imported", item.what, conflict ? `${item.detail} (replaced what Fermix had)` : item.detail));
    changes.push(...item.changes);
  }
  return { rows, changes };
}
