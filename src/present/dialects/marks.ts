/**
 * Marker dialects' shared pieces (Slack, WhatsApp and Markdown spell styles
 * with `*`, `_`, `~` and backticks): keeping literal markers from opening a
 * style, the runs such a dialect can mark, and fenced text that must not
 * close its own fence.
 */
import type { Run, Unit } from "../units.ts";

const OPENER = /[\s([{"'“‘]/;

/**
 * Literal `*`, `_`, `~` or a backtick where it could open a style gets a
 * zero-width space before it: neither Slack nor WhatsApp has an escape
 * character, and both only open a style after whitespace or punctuation.
 */
export function neutralizeMarkers(text: string, before: string | undefined, after: string | undefined): string {
  if (!/[*_~`]/.test(text)) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if ("*_~`".includes(ch)) {
      const prev = i > 0 ? text[i - 1] : before;
      const next = i + 1 < text.length ? text[i + 1] : after;
      if ((prev === undefined || OPENER.test(prev)) && next !== undefined && !/\s/.test(next)) out += "\u200b";
    }
    out += ch;
  }
  return out;
}

/**
 * Runs ready for a marker dialect: a heading is bold, and a code span that
 * holds a backtick loses its code marker, which cannot be escaped.
 */
export function markerRuns(unit: Unit): Run[] {
  return unit.runs.map((run) => {
    const bold = unit.role === "heading" || run.style.bold;
    const code = run.style.code && !run.text.includes("`");
    return bold === run.style.bold && code === run.style.code ? run : { ...run, style: { ...run.style, bold, code } };
  });
}

/** Fenced text must not close its own fence. */
export function guardFence(text: string): string {
  return text.replace(/```/g, "`\u200b``");
}
