/**
 * The intermediate form between the one Markdown parse and every dialect: a
 * reply is a flat list of units (a line of a paragraph, a list item line, a
 * table row, a whole code fence, a rule), each carrying everything needed to
 * render it alone. Splitting picks cut points between or inside units, and a
 * renderer turns any contiguous slice back into balanced output, so no split
 * can leave a tag or a marker open.
 */

/** Boundary levels of the split ladder; a higher level is a better place to cut. */
export const HARD = 0;
export const SPACE = 1;
export const SENTENCE = 2;
export const LINE = 3;
export const PARAGRAPH = 4;
export const HEADING = 5;
export type Level = 0 | 1 | 2 | 3 | 4 | 5;

/** Inline formatting of a run; `href` makes it (part of) a link. */
export interface Style {
  bold?: boolean;
  italic?: boolean;
  strike?: boolean;
  code?: boolean;
  href?: string;
}

/** A stretch of text with one style. */
export interface Run {
  /** The text as the reader sees it (escapes and entities resolved). */
  text: string;
  /** The Markdown source of the text when it differs (an escape, an entity): Discord passes it through. */
  md?: string;
  style: Style;
  /** Offset in the source where `text` starts, when it maps 1:1 (plain text at the top level). */
  src?: number;
}

/** A container around a unit: a block quote, or a list item with its marker. */
export type Frame = { kind: "quote"; id: number } | { kind: "item"; id: number; marker: string; ordered: boolean; depth: number };

/** What a unit is in the document. */
export type UnitRole = "para" | "heading" | "html" | "code" | "table" | "rule";

/** One line of a reply (or one whole code fence), with everything needed to render it alone. */
export interface Unit {
  /** text: inline runs; pre: preformatted text (code fence, table row); rule: a thematic break. */
  kind: "text" | "pre" | "rule";
  role: UnitRole;
  /** Id of the leaf block; consecutive units with the same id render as one block. */
  block: number;
  /** Heading level (1–6) for headings. */
  level?: number;
  /** Code fence language, as written. */
  lang?: string;
  /** Containers from the outside in: block quotes and list items. */
  frames: Frame[];
  /** The first line of a list item: it shows the item's marker; other lines are indented. */
  lead: boolean;
  runs: Run[];
  /** The unit's text: the runs joined, or the preformatted text. */
  text: string;
  /** The ladder level of the boundary before this unit. */
  boundary: Level;
  /** Offset in the source where a cut before this unit resumes, when that is safe. */
  src?: number;
  /** Never cut inside (a code fence). */
  atomic: boolean;
}

/** Concatenated text of runs. */
export function runsText(runs: readonly Run[]): string {
  let text = "";
  for (const run of runs) text += run.text;
  return text;
}

/** The part of a run between two text offsets; `md` survives only when the run is kept whole. */
function sliceRun(run: Run, from: number, to: number): Run {
  if (from === 0 && to === run.text.length) return run;
  const piece: Run = { text: run.text.slice(from, to), style: run.style };
  if (run.src !== undefined && run.md === undefined) piece.src = run.src + from;
  return piece;
}

/** The runs covering text offsets [from, to). */
export function sliceRuns(runs: readonly Run[], from: number, to: number): Run[] {
  const out: Run[] = [];
  let at = 0;
  for (const run of runs) {
    const end = at + run.text.length;
    if (end > from && at < to) out.push(sliceRun(run, Math.max(0, from - at), Math.min(run.text.length, to - at)));
    at = end;
    if (at >= to) break;
  }
  return out;
}

/** Source offset of text position `pos` of a unit, when the text there maps 1:1 to the source. */
export function sourceAt(unit: Unit, pos: number): number | undefined {
  if (pos === 0) return unit.src;
  let at = 0;
  for (const run of unit.runs) {
    const end = at + run.text.length;
    if (pos >= at && pos < end) return run.src !== undefined && run.md === undefined ? run.src + (pos - at) : undefined;
    at = end;
  }
  return undefined;
}

/**
 * The unit cut to text offsets [from, to). A piece that does not start the
 * unit is a continuation: it keeps the unit's containers but not its marker.
 */
export function sliceUnit(unit: Unit, from: number, to: number): Unit {
  if (from === 0 && to >= unit.text.length) return unit;
  const text = unit.text.slice(from, to);
  const piece: Unit = { ...unit, text, lead: unit.lead && from === 0 };
  if (unit.kind === "text") piece.runs = sliceRuns(unit.runs, from, to);
  if (from > 0) piece.src = sourceAt(unit, from);
  return piece;
}

const WS = /\s/;

/** Whether code unit `ch` is whitespace. */
export function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && WS.test(ch);
}
