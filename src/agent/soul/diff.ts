/**
 * A readable diff of two SOUL.md texts (or of two versions of another file,
 * such as a skill's SKILL.md): unified diff lines (jsdiff's
 * `structuredPatch`, three lines of context), with counts of what changed.
 * Pure; the command puts the lines in a code block.
 */
import { structuredPatch } from "diff";

export interface SoulDiff {
  /** `--- before` / `+++ after` headers, then the hunks; empty when the texts are equal. */
  lines: string[];
  added: number;
  removed: number;
}

/** The unified diff from `before` to `after`, headed with the file's name and the two labels (e.g. "revision 3", "proposed"). */
export function soulDiff(before: string, after: string, labels: { before: string; after: string }, file = "SOUL.md"): SoulDiff {
  const patch = structuredPatch(file, file, before, after, undefined, undefined, { context: 3 });
  if (patch.hunks.length === 0) return { lines: [], added: 0, removed: 0 };
  const lines = [`--- ${file} (${labels.before})`, `+++ ${file} (${labels.after})`];
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
      lines.push(line);
    }
  }
  return { lines, added, removed };
}
