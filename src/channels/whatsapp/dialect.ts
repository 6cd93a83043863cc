/**
 * WhatsApp: *bold*, _italic_, ~strike~, `inline code`, ```monospace```
 * blocks and "> " quotes; links read "label: url" because WhatsApp links
 * bare addresses itself. There is no escape character, so a style glued to a
 * word is left unmarked rather than shown with stray markers.
 */
import { type Dialect, linePrefix, RULE } from "../../present/dialects/base.ts";
import { type InlineSpec, keyHref, linkKey, renderInline } from "../../present/dialects/inline.ts";
import { guardFence, markerRuns, neutralizeMarkers } from "../../present/dialects/marks.ts";
import { labelTarget } from "../../present/dialects/plain.ts";
import { utf16Length } from "../../present/measure.ts";
import type { Run, Style, Unit } from "../../present/units.ts";

const MARK: Record<string, string> = { b: "*", i: "_", s: "~", code: "`" };

const inline: InlineSpec = {
  keys(style: Style): string[] {
    const keys: string[] = [];
    if (style.href !== undefined) keys.push(linkKey(style.href));
    if (style.code) return [...keys, "code"];
    if (style.bold) keys.push("b");
    if (style.italic) keys.push("i");
    if (style.strike) keys.push("s");
    return keys;
  },
  open: (key) => (keyHref(key) !== undefined ? "" : MARK[key]!),
  close: (key, label) => {
    const href = keyHref(key);
    return href !== undefined ? labelTarget(label, href) : MARK[key]!;
  },
  text: (run: Run, before, after) => (run.style.code ? run.text : neutralizeMarkers(run.text, before, after)),
  wordEdges: () => true,
};

/** The WhatsApp dialect. */
export const whatsAppDialect: Dialect = {
  name: "whatsapp",
  line(unit: Unit): string {
    if (unit.kind === "pre") return guardFence(unit.text);
    const prefix = linePrefix(unit, "> ");
    if (unit.kind === "rule") return prefix + RULE;
    return prefix + renderInline(markerRuns(unit), inline);
  },
  preOpen: () => "```",
  quoteMark: "> ",
  preClose: () => "```",
  measure: utf16Length,
};
