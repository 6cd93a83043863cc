/**
 * Markdown, passed through: what Discord shows, and what an editor (ACP) and
 * the terminal read. Text keeps its source spelling (escapes, entities),
 * headings stay # to ### (Discord's levels), lists stay "-" and "1.".
 * Discord renders no tables, so tables become monospace code blocks like
 * everywhere else.
 */
import { utf16Length } from "../measure.ts";
import type { Run, Style, Unit } from "../units.ts";
import { type Dialect, linePrefix, RULE } from "./base.ts";
import { type InlineSpec, keyHref, linkKey, renderInline, unlinkable } from "./inline.ts";
import { guardFence } from "./marks.ts";

const MARK: Record<string, string> = { b: "**", i: "_", s: "~~" };

/** An address safe inside (…): spaces and parentheses are percent-encoded. */
function discordUrl(href: string): string {
  return href.replace(/ /g, "%20").replace(/\(/g, "%28").replace(/\)/g, "%29");
}

/** Whether a link shows as its bare address. */
const bare = (label: string, href: string) => label === href;

const inline: InlineSpec = {
  keys(style: Style): string[] {
    const keys: string[] = [];
    if (style.href !== undefined) keys.push(linkKey(style.href));
    if (style.bold) keys.push("b");
    if (style.italic) keys.push("i");
    if (style.strike) keys.push("s");
    if (style.code) keys.push("code");
    return keys;
  },
  open: (key, label) => {
    const href = keyHref(key);
    if (href !== undefined) return bare(label, href) ? "" : "[";
    return key === "code" ? (label.includes("`") ? "`` " : "`") : MARK[key]!;
  },
  close: (key, label) => {
    const href = keyHref(key);
    if (href !== undefined) return bare(label, href) ? "" : `](${discordUrl(href)})`;
    return key === "code" ? (label.includes("`") ? " ``" : "`") : MARK[key]!;
  },
  // Backslash escapes pass through as written; Discord shows HTML entities literally, so those are decoded.
  text: (run: Run) => (!run.style.code && run.md?.startsWith("\\") ? run.md : run.text),
  // `_italic_` only works at word edges.
  wordEdges: (key) => key === "i",
};

/** Discord renders "-" and "1." lists; task boxes follow the dash. */
function discordMarker(item: { marker: string; ordered: boolean }): string {
  if (item.ordered) return item.marker;
  return item.marker === "☐" || item.marker === "☑" ? `- ${item.marker}` : "-";
}

/** The Markdown dialect: Discord's, and the one editors (ACP) and the terminal read. */
export const markdown: Dialect = {
  name: "markdown",
  line(unit: Unit): string {
    if (unit.kind === "pre") return guardFence(unit.text);
    const prefix = linePrefix(unit, "> ", discordMarker);
    if (unit.kind === "rule") return prefix + RULE;
    const heading = unit.role === "heading" && (unit.level ?? 1) <= 3;
    const runs = unit.role === "heading" && !heading ? unit.runs.map((r) => ({ ...r, style: { ...r.style, bold: true } })) : unit.runs;
    return prefix + (heading ? `${"#".repeat(unit.level ?? 1)} ` : "") + renderInline(unlinkable(runs, /^https?:\/\/\S+$/i), inline);
  },
  preOpen: (unit) => `\`\`\`${unit.role === "code" ? (unit.lang ?? "").replace(/[^\w+#.-]/g, "") : ""}\n`,
  quoteMark: "> ",
  preClose: () => "\n```",
  measure: utf16Length,
};
