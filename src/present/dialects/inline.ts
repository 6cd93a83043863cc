/**
 * Inline formatting for every dialect: runs in, balanced markup out. Styles
 * open and close as a stack in one fixed order, so a slice of runs always
 * renders balanced, whatever the split did to the spans around it.
 */
import type { Run, Style } from "../units.ts";

/** How a dialect spells inline formatting. Keys are style names; a link key carries its address. */
export interface InlineSpec {
  /** The keys a style opens, outermost first. */
  keys(style: Style): string[];
  /** Markup opening `key` over `label` (the text the key covers). */
  open(key: string, label: string): string;
  close(key: string, label: string): string;
  /** A run's text, escaped for the dialect; `before` and `after` are the neighbouring characters. */
  text(run: Run, before: string | undefined, after: string | undefined): string;
  /**
   * Markers that only work at word edges (Slack, WhatsApp, Discord's `_`): a
   * key touching a letter or digit outside its span is dropped rather than
   * shown as a stray marker.
   */
  wordEdges(key: string): boolean;
}

/** The key for a link to `href`. */
export const linkKey = (href: string): string => `a ${href}`;
/** The address of a link key, or undefined for other keys. */
export const keyHref = (key: string): string | undefined => (key.startsWith("a ") ? key.slice(2) : undefined);

const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/;
const EDGE_SPACE = /^\s|\s$/;

/** Render runs with a dialect's inline spec. */
export function renderInline(runs: readonly Run[], spec: InlineSpec): string {
  const items: Piece[] = [];
  let styled = false;
  for (const run of runs) {
    if (run.text.length === 0) continue;
    const keys = spec.keys(run.style);
    if (keys.length > 0) styled = true;
    items.push({ run, keys });
  }
  const pieces = styled ? hoistWhitespace(items) : items;
  const { openAt, closeAt } = styled ? spansOf(pieces) : { openAt: [], closeAt: [] };
  for (const spans of openAt) for (const span of spans ?? []) span.drop = spec.wordEdges(span.key) && gluedToWord(pieces, span);
  let out = "";
  for (let i = 0; i <= pieces.length; i++) {
    for (const span of closeAt[i] ?? []) if (!span.drop) out += spec.close(span.key, span.label);
    if (i === pieces.length) break;
    for (const span of openAt[i] ?? []) if (!span.drop) out += spec.open(span.key, span.label);
    out += spec.text(pieces[i]!.run, pieces[i - 1]?.run.text.at(-1), pieces[i + 1]?.run.text[0]);
  }
  return out;
}

interface Span {
  key: string;
  from: number;
  to: number;
  label: string;
  drop: boolean;
}

/**
 * The spans the stack opens and closes: a key stays open while the next
 * piece keeps every key below it, exactly as the markup will nest.
 */
function spansOf(pieces: Piece[]): { openAt: (Span[] | undefined)[]; closeAt: (Span[] | undefined)[] } {
  const openAt: (Span[] | undefined)[] = [];
  const closeAt: (Span[] | undefined)[] = [];
  let stack: Span[] = [];
  const closeFrom = (depth: number, at: number) => {
    for (let k = stack.length - 1; k >= depth; k--) {
      const span = stack[k]!;
      span.to = at - 1;
      // Only links and code spans need the text they cover.
      if (span.key === "code" || keyHref(span.key) !== undefined) {
        for (let i = span.from; i < at; i++) span.label += pieces[i]!.run.text;
      }
      closeAt[at] ??= [];
      closeAt[at].push(span);
    }
    stack = stack.slice(0, depth);
  };
  pieces.forEach((piece, i) => {
    let same = 0;
    while (same < stack.length && same < piece.keys.length && stack[same]!.key === piece.keys[same]) same++;
    closeFrom(same, i);
    for (let k = same; k < piece.keys.length; k++) {
      const span: Span = { key: piece.keys[k]!, from: i, to: i, label: "", drop: false };
      stack.push(span);
      openAt[i] ??= [];
      openAt[i].push(span);
    }
  });
  closeFrom(0, pieces.length);
  return { openAt, closeAt };
}

/** A span whose markers would touch a letter or digit outside it, or whitespace inside it. */
function gluedToWord(pieces: Piece[], span: Span): boolean {
  // A link is never dropped: its address is content.
  if (keyHref(span.key) !== undefined) return false;
  const before = pieces[span.from - 1]?.run.text.at(-1);
  const after = pieces[span.to + 1]?.run.text[0];
  if ((before !== undefined && WORD.test(before)) || (after !== undefined && WORD.test(after))) return true;
  return SPACE.test(pieces[span.from]!.run.text[0] ?? "") || SPACE.test(pieces[span.to]!.run.text.at(-1) ?? "");
}

interface Piece {
  run: Run;
  keys: string[];
}

/** Longest common prefix of key lists. */
function common(...lists: string[][]): string[] {
  const first = lists[0] ?? [];
  let n = first.length;
  for (const list of lists) {
    let i = 0;
    while (i < n && i < list.length && list[i] === first[i]) i++;
    n = i;
  }
  return first.slice(0, n);
}

/**
 * Whitespace at the edge of a styled run moves outside the markers that open
 * or close there: `*bold *` does not render on most platforms, `*bold* ` does.
 */
function hoistWhitespace(items: Piece[]): Piece[] {
  const out: Piece[] = [];
  items.forEach(({ run, keys }, i) => {
    const prev = i > 0 ? items[i - 1]!.keys : [];
    const next = i + 1 < items.length ? items[i + 1]!.keys : [];
    if (run.style.code) {
      out.push({ run, keys });
      return;
    }
    const text = run.text;
    if (!EDGE_SPACE.test(text)) {
      out.push({ run, keys });
      return;
    }
    if (text.trim() === "") {
      out.push({ run, keys: common(prev, keys, next) });
      return;
    }
    const lead = text.length - text.trimStart().length;
    const kept = text.trimEnd().length;
    if (lead > 0) out.push({ run: cut(run, 0, lead), keys: common(prev, keys) });
    out.push({ run: cut(run, lead, kept), keys });
    if (kept < text.length) out.push({ run: cut(run, kept, text.length), keys: common(keys, next) });
  });
  return out;
}

function cut(run: Run, from: number, to: number): Run {
  if (from === 0 && to === run.text.length) return run;
  return { text: run.text.slice(from, to), style: run.style };
}

/**
 * Runs whose link target the platform would not take (a relative path, ftp:)
 * lose the link and show the target after the label instead, so nothing is
 * dropped and nothing is sent that the platform rejects.
 */
export function unlinkable(runs: readonly Run[], linkable: RegExp): Run[] {
  const out: Run[] = [];
  runs.forEach((run, i) => {
    const href = run.style.href;
    if (href === undefined || linkable.test(href)) {
      out.push(run);
      return;
    }
    out.push({ text: run.text, style: { ...run.style, href: undefined } });
    if (runs[i + 1]?.style.href === href) return;
    if (run.text !== href && `mailto:${run.text}` !== href) out.push({ text: ` (${href})`, style: {} });
  });
  return out;
}
