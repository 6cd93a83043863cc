/**
 * Slack mrkdwn: *bold*, _italic_, ~strike~, `code`, ``` blocks and
 * <url|label> links; &, < and > escaped as &amp; &lt; &gt; everywhere,
 * since Slack reads them as its own control characters. Markers only work at
 * word edges, so a style glued to a word is left unmarked.
 */
import { type Dialect, linePrefix, RULE } from "../../present/dialects/base.ts";
import { type InlineSpec, keyHref, linkKey, renderInline, unlinkable } from "../../present/dialects/inline.ts";
import { guardFence, markerRuns, neutralizeMarkers } from "../../present/dialects/marks.ts";
import { utf16Length } from "../../present/measure.ts";
import type { Run, Style, Unit } from "../../present/units.ts";

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

/** The Slack mrkdwn dialect. */
export const slackDialect: Dialect = {
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
