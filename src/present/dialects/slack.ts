/**
 * Slack mrkdwn: *bold*, _italic_, ~strike~, `code`, ``` blocks and
 * <url|label> links; &, < and > escaped as &amp; &lt; &gt; everywhere,
 * since Slack reads them as its own control characters. Markers only work at
 * word edges, so a style glued to a word is left unmarked.
 */
import { utf16Length } from "../measure.ts";
import type { Run, Style, Unit } from "../units.ts";
import { type Dialect, linePrefix, RULE } from "./base.ts";
import { type InlineSpec, keyHref, linkKey, renderInline, unlinkable } from "./inline.ts";

/** Escape Slack's control characters. */
export function escapeSlack(text: string): string {
  if (!/[&<>]/.test(text)) return text;
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** An address safe inside <…|…>: the delimiters are percent-encoded. */
function slackUrl(href: string): string {
  return escapeSlack(href.replace(/\|/g, "%7C").replace(/>/g, "%3E").replace(/\s/g, "%20"));
}

const MARK: Record<string, string> = { b: "*", i: "_", s: "~", code: "`" };

const inline: InlineSpec = {
  keys(style: Style): string[] {
    // A link label takes no formatting in Slack.
    if (style.href !== undefined) return [linkKey(style.href)];
    if (style.code) return ["code"];
    const keys: string[] = [];
    if (style.bold) keys.push("b");
    if (style.italic) keys.push("i");
    if (style.strike) keys.push("s");
    return keys;
  },
  open: (key) => {
    const href = keyHref(key);
    return href !== undefined ? `<${slackUrl(href)}|` : MARK[key]!;
  },
  close: (key) => (keyHref(key) !== undefined ? ">" : MARK[key]!),
  text: (run: Run, before, after) => escapeSlack(run.style.code ? run.text : neutralizeMarkers(run.text, before, after)),
  wordEdges: () => true,
};

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

/** The Slack mrkdwn dialect. */
export const slack: Dialect = {
  name: "slack",
  line(unit: Unit): string {
    if (unit.kind === "pre") return escapeSlack(guardFence(unit.text));
    const prefix = linePrefix(unit, "> ");
    if (unit.kind === "rule") return prefix + RULE;
    return prefix + renderInline(unlinkable(markerRuns(unit), /^(https?:\/\/|mailto:)\S+$/i), inline);
  },
  preOpen: () => "```\n",
  quoteMark: "> ",
  preClose: () => "\n```",
  measure: utf16Length,
};
