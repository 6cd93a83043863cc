/**
 * What an import did, one row per thing found in the OpenClaw home, and the
 * table the command ends with. A row never holds a credential: it names the
 * key ("bot token") and where it went, never its value.
 */

/** imported: written now; unchanged: Fermix already has exactly this; skipped: not written, with why; manual: left to the owner. */
export type Outcome = "imported" | "unchanged" | "skipped" | "manual";

export interface ImportRow {
  outcome: Outcome;
  /** What it is: "provider openai", "Telegram owner", "skill weekly-report". */
  what: string;
  /** For imported and unchanged rows what it became; for skipped rows why; for manual rows the step. */
  detail: string;
}

export const row = (outcome: Outcome, what: string, detail: string): ImportRow => ({ outcome, what, detail });

const LABEL: Record<Outcome, string> = { imported: "imported", unchanged: "unchanged", skipped: "skipped", manual: "by hand" };
const ORDER: readonly Outcome[] = ["imported", "unchanged", "skipped", "manual"];

/** The rows as a three-column table, imported first and the owner's steps last. */
export function renderTable(rows: readonly ImportRow[]): string {
  if (rows.length === 0) return "Nothing was found to import.\n";
  const sorted = ORDER.flatMap((outcome) => rows.filter((r) => r.outcome === outcome));
  const header = { outcome: "status", what: "what", detail: "detail" };
  const width = Math.max(header.what.length, ...sorted.map((r) => r.what.length));
  const statusWidth = Math.max(...sorted.map((r) => LABEL[r.outcome].length), header.outcome.length);
  const line = (status: string, what: string, detail: string) => `${status.padEnd(statusWidth)}  ${what.padEnd(width)}  ${detail}`.trimEnd();
  const lines = [line(header.outcome, header.what, header.detail), line("-".repeat(statusWidth), "-".repeat(width), "-".repeat(6))];
  for (const r of sorted) lines.push(line(LABEL[r.outcome], r.what, r.detail));
  return `${lines.join("\n")}\n`;
}

/** Counts per outcome, for the closing line. */
export function tally(rows: readonly ImportRow[]): Record<Outcome, number> {
  const counts: Record<Outcome, number> = { imported: 0, unchanged: 0, skipped: 0, manual: 0 };
  for (const r of rows) counts[r.outcome] += 1;
  return counts;
}
