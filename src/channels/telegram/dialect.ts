/**
 * Telegram HTML (parse_mode "HTML"): only the tags the Bot API lists — b, i,
 * s, a href, code, pre, pre > code.language-x, blockquote [expandable] — and
 * only the escapes &lt; &gt; &amp; &quot;. Bold, italic and strike may wrap
 * anything except code; links and code never nest in each other; a
 * blockquote never holds a pre block or another blockquote.
 */
import { type Dialect, linePrefix, RULE } from "../../present/dialects/base.ts";
import { type InlineSpec, keyHref, linkKey, renderInline, unlinkable } from "../../present/dialects/inline.ts";
import { decodeEntity, ENTITY } from "../../present/text.ts";
import type { Run, Style, Unit } from "../../present/units.ts";

/** Escape text for Telegram HTML. */
export function escapeHtml(text: string): string {
  if (!/[&<>]/.test(text)) return text;
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

/**
 * Length of Telegram HTML as Telegram counts it, after entity parsing: tags
 * do not count, an entity counts as what it stands for, in UTF-16 code units.
 */
export function telegramLength(html: string): number {
  let length = 0;
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    const amp = html.indexOf("&", i);
    const next = lt === -1 ? amp : amp === -1 ? lt : Math.min(lt, amp);
    if (next === -1) return length + (html.length - i);
    length += next - i;
    if (next === lt) {
      const gt = html.indexOf(">", lt);
      i = gt === -1 ? html.length : gt + 1;
      continue;
    }
    const m = ENTITY.exec(html.slice(amp, amp + 40));
    const decoded = m ? decodeEntity(m[0]) : undefined;
    length += decoded?.length ?? 1;
    i = amp + (m && decoded !== undefined ? m[0].length : 1);
  }
  return length;
}

/** Link targets Telegram accepts in <a href>; anything else stays visible as text. */
const LINKABLE = /^(https?:\/\/|tg:\/\/)[^\s]+$/i;

const TAGS: Record<string, string> = { b: "b", i: "i", s: "s", code: "code" };

const inline: InlineSpec = {
  keys(style: Style): string[] {
    const keys: string[] = [];
    const link = style.href !== undefined && LINKABLE.test(style.href);
    if (link) keys.push(linkKey(style.href!));
    // Code takes no other entity inside or around it, and a link cannot hold code.
    if (style.code) return link ? keys : ["code"];
    if (style.bold) keys.push("b");
    if (style.italic) keys.push("i");
    if (style.strike) keys.push("s");
    return keys;
  },
  open(key: string): string {
    const href = keyHref(key);
    return href !== undefined ? `<a href="${escapeAttribute(href)}">` : `<${TAGS[key]}>`;
  },
  close(key: string): string {
    return keyHref(key) !== undefined ? "</a>" : `</${TAGS[key]}>`;
  },
  text: (run: Run) => escapeHtml(run.text),
  wordEdges: () => false,
};

/** The Telegram HTML dialect. */
export const telegramDialect: Dialect = {
  name: "telegram",
  line(unit: Unit): string {
    if (unit.kind === "pre") return escapeHtml(unit.text);
    const prefix = escapeHtml(linePrefix(unit, ""));
    if (unit.kind === "rule") return prefix + RULE;
    const runs = unit.role === "heading" ? unit.runs.map((r) => ({ ...r, style: { ...r.style, bold: true } })) : unit.runs;
    return prefix + renderInline(unlinkable(runs, LINKABLE), inline);
  },
  preOpen(unit: Unit): string {
    const lang = unit.role === "code" ? (unit.lang ?? "").replace(/[^\w+#.-]/g, "") : "";
    return lang ? `<pre><code class="language-${lang}">` : "<pre>";
  },
  preClose(unit: Unit): string {
    const lang = unit.role === "code" ? (unit.lang ?? "").replace(/[^\w+#.-]/g, "") : "";
    return lang ? "</code></pre>" : "</pre>";
  },
  quoteTags: { open: (expandable) => (expandable ? "<blockquote expandable>" : "<blockquote>"), close: "</blockquote>" },
  measure: telegramLength,
};
