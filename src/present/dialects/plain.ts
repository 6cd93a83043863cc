/**
 * Plain text: formatting markers are removed, links read "label: url", code
 * is kept verbatim and indented, quotes keep a "> " mark. Signal's dialect,
 * and the plain-text fallback on every other channel.
 */
import { utf16Length } from "../measure.ts";
import type { Run, Style, Unit } from "../units.ts";
import { type Dialect, linePrefix, RULE } from "./base.ts";
import { type InlineSpec, keyHref, linkKey, renderInline } from "./inline.ts";

/** Close a link as "label: url", or nothing when the label is the address. */
export function labelTarget(label: string, href: string): string {
  if (label === href || `mailto:${label}` === href || label === href.replace(/^mailto:/, "")) return "";
  return `: ${href}`;
}

const inline: InlineSpec = {
  keys: (style: Style) => (style.href !== undefined ? [linkKey(style.href)] : []),
  open: () => "",
  close: (key, label) => labelTarget(label, keyHref(key)!),
  text: (run: Run) => run.text,
  wordEdges: () => false,
};

const INDENT = "    ";

/** Plain text: Signal's dialect, and the plain-text fallback everywhere. */
export const plain: Dialect = {
  name: "plain",
  line(unit: Unit): string {
    if (unit.kind === "pre") return unit.role === "code" ? INDENT + unit.text.replace(/\n/g, `\n${INDENT}`) : unit.text;
    const prefix = linePrefix(unit, "> ");
    if (unit.kind === "rule") return prefix + RULE;
    return prefix + renderInline(unit.runs, inline);
  },
  preOpen: () => "",
  quoteMark: "> ",
  preClose: () => "",
  measure: utf16Length,
};
