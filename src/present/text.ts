/**
 * Small text facts the splitter and renderers share: grapheme boundaries,
 * sentence ends, monospace width and HTML entities. Grapheme clusters come
 * from Intl.Segmenter so a cut never separates an emoji from its modifier,
 * a flag's two halves, or a letter from its accent.
 */
import { HARD, type Level, SENTENCE, SPACE } from "./units.ts";

let segmenter: Intl.Segmenter | undefined;
/** Made on first use: building one loads ICU's break rules, which an idle daemon never needs. */
const graphemes = () => (segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" }));

/** Every grapheme boundary of `text` after its start, its end included. */
export function graphemeBoundaries(text: string): number[] {
  const out: number[] = [];
  for (const { index } of graphemes().segment(text)) if (index > 0) out.push(index);
  if (text.length > 0) out.push(text.length);
  return out;
}

/** Characters that end a sentence when whitespace follows them. */
const TERMINAL = /[.!?…]/;
/** Characters that end a sentence on their own (CJK full-width stops). */
const CJK_TERMINAL = /[。！？｡]/;
/** Closers that may sit between a terminal and the whitespace: quotes, brackets. */
const CLOSER = /["'”’)\]»」』）]/;

/** The ladder level of cutting `text` at `pos` (which must be a grapheme boundary). */
export function cutLevel(text: string, pos: number): Level {
  const before = text[pos - 1];
  if (before === undefined) return HARD;
  if (CJK_TERMINAL.test(before)) return SENTENCE;
  if (!/\s/.test(before)) return HARD;
  let i = pos - 1;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  while (i > 0 && CLOSER.test(text[i - 1]!)) i--;
  return i > 0 && (TERMINAL.test(text[i - 1]!) || CJK_TERMINAL.test(text[i - 1]!)) ? SENTENCE : SPACE;
}

/** Wide (two-column) characters: CJK, Hangul, full-width forms and emoji. */
const WIDE =
  /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]|[\u{1F300}-\u{1FAFF}\u{20000}-\u{3FFFD}]|\p{Extended_Pictographic}|\p{Regional_Indicator}/u;
const ZERO = /^[\p{Mn}\p{Me}\u200B-\u200F\u2060\uFEFF]+$/u;

/** Columns `text` takes in a monospace block, so table columns line up with CJK and emoji. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes().segment(text)) {
    if (ZERO.test(segment)) continue;
    width += WIDE.test(segment) ? 2 : 1;
  }
  return width;
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  times: "×",
  divide: "÷",
  deg: "°",
  plusmn: "±",
  middot: "·",
  bull: "•",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
};

/** An HTML entity at the start of a string. */
export const ENTITY = /^&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/;

/** The text an entity stands for, or undefined when it is not one we know. */
export function decodeEntity(entity: string): string | undefined {
  const m = ENTITY.exec(entity);
  if (!m) return undefined;
  const code = m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? Number.parseInt(m[2], 16) : undefined;
  if (code === undefined) return NAMED[m[3]!];
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(code);
}
