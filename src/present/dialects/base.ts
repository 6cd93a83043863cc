/**
 * What a dialect is, and the one loop that renders any run of units in any
 * dialect. The loop also keeps the running length as the platform counts it,
 * so the splitter can ask "does this still fit?" unit by unit without
 * re-rendering the whole message.
 */
import { type Frame, PARAGRAPH, type Unit } from "../units.ts";

type ItemFrame = Extract<Frame, { kind: "item" }>;

/** How one platform spells a reply: lines, preformatted blocks, quotes, and how it counts length. */
export interface Dialect {
  /** A name for logs and tests (the platform's, or "markdown" and "plain" for the shared ones). */
  readonly name: string;
  /** One unit as a line: its container prefix and content, or a pre unit's text, escaped. */
  line(unit: Unit): string;
  /** The opening and closing of a preformatted block (a code fence, a table). */
  preOpen(unit: Unit): string;
  preClose(unit: Unit): string;
  /** The mark that starts each quoted line, for dialects that prefix quotes rather than wrap them. */
  quoteMark?: string;
  /** Quotes as wrapping tags (Telegram); dialects without it prefix quoted lines in `line`. */
  quoteTags?: { open(expandable: boolean): string; close: string };
  /** Length as the platform counts it; additive over whole pieces of this dialect's output. */
  measure(text: string): number;
}

/** A quote longer than this many lines or characters collapses (Telegram expandable blockquote). */
export const EXPANDABLE_LINES = 4;
export const EXPANDABLE_CHARS = 300;

/** A renderer's position, to go back to after trying a unit. */
export interface RenderState {
  pieces: number;
  size: number;
  prev: Unit | undefined;
  quoteAt: number;
  quoteId: number;
  quoteLines: number;
  quoteSize: number;
}

/** Renders units one at a time into one message, tracking its measured length. */
export class PartRenderer {
  private readonly pieces: string[] = [];
  private size = 0;
  private prev: Unit | undefined;
  /** Index of the open quote tag's placeholder, or -1: the tag is chosen when the quote closes. */
  private quoteAt = -1;
  /** The outermost quote the open tag belongs to: two quotes in a row are two blockquotes. */
  private quoteId = -1;
  private quoteLines = 0;
  private quoteSize = 0;

  constructor(readonly dialect: Dialect) {}

  /** Append one unit. */
  add(unit: Unit): void {
    const d = this.dialect;
    const prev = this.prev;
    const samePre = prev?.kind === "pre" && unit.kind === "pre" && prev.block === unit.block;
    // Telegram's blockquote cannot hold a pre block, so code and tables close the quote.
    const quote = d.quoteTags !== undefined && unit.kind !== "pre" ? outerQuote(unit.frames) : -1;
    if (prev) {
      if (prev.kind === "pre" && !samePre) this.emit(d.preClose(prev));
      if (this.quoteAt >= 0 && quote !== this.quoteId) this.closeQuote();
      const blank = unit.boundary >= PARAGRAPH || prev.role === "heading";
      // A blank line inside one quote keeps the quote's mark, so the quote reads as one.
      const around = outerQuote(unit.frames);
      const mark = d.quoteMark && blank && prev.kind !== "pre" && unit.kind !== "pre" && around >= 0 && outerQuote(prev.frames) === around;
      this.emit(!blank ? "\n" : mark ? `\n${d.quoteMark!.trimEnd()}\n` : "\n\n");
    }
    if (quote >= 0 && this.quoteAt < 0) {
      this.quoteAt = this.pieces.length;
      this.quoteId = quote;
      this.pieces.push("");
      this.quoteLines = 1;
      this.quoteSize = 0;
    }
    if (unit.kind === "pre" && !samePre) this.emit(d.preOpen(unit));
    this.emit(d.line(unit));
    this.prev = unit;
  }

  /** The measured length of the message if it ended now (closing markup included). */
  get measure(): number {
    const d = this.dialect;
    let size = this.size;
    if (this.prev?.kind === "pre") size += d.measure(d.preClose(this.prev));
    if (this.quoteAt >= 0 && d.quoteTags) size += d.measure(d.quoteTags.close);
    return size;
  }

  /** The finished message text; the renderer can keep going afterwards. */
  text(): string {
    const d = this.dialect;
    const pieces = [...this.pieces];
    if (this.prev?.kind === "pre") pieces.push(d.preClose(this.prev));
    if (this.quoteAt >= 0 && d.quoteTags) {
      pieces[this.quoteAt] = d.quoteTags.open(this.expandable());
      pieces.push(d.quoteTags.close);
    }
    return pieces.join("");
  }

  /** The current position, to go back to with `restore`. */
  snapshot(): RenderState {
    const { size, prev, quoteAt, quoteId, quoteLines, quoteSize } = this;
    return { pieces: this.pieces.length, size, prev, quoteAt, quoteId, quoteLines, quoteSize };
  }

  /** Go back to a position taken with `snapshot`, dropping what was added since. */
  restore(state: RenderState): void {
    this.pieces.length = state.pieces;
    this.size = state.size;
    this.prev = state.prev;
    this.quoteAt = state.quoteAt;
    this.quoteId = state.quoteId;
    this.quoteLines = state.quoteLines;
    this.quoteSize = state.quoteSize;
    if (this.quoteAt >= 0) this.pieces[this.quoteAt] = "";
  }

  private emit(piece: string): void {
    if (piece === "") return;
    const size = this.dialect.measure(piece);
    this.pieces.push(piece);
    this.size += size;
    if (this.quoteAt >= 0) {
      this.quoteSize += size;
      for (let i = piece.indexOf("\n"); i !== -1; i = piece.indexOf("\n", i + 1)) this.quoteLines++;
    }
  }

  private closeQuote(): void {
    const tags = this.dialect.quoteTags!;
    this.pieces[this.quoteAt] = tags.open(this.expandable());
    this.quoteAt = -1;
    this.emit(tags.close);
  }

  private expandable(): boolean {
    return this.quoteLines > EXPANDABLE_LINES || this.quoteSize > EXPANDABLE_CHARS;
  }
}

/** Render a whole run of units as one message. */
export function renderUnits(units: readonly Unit[], dialect: Dialect): string {
  const renderer = new PartRenderer(dialect);
  for (const unit of units) renderer.add(unit);
  return renderer.text();
}

/** Id of the outermost quote around a unit, or -1. */
function outerQuote(frames: readonly Frame[]): number {
  for (const frame of frames) if (frame.kind === "quote") return frame.id;
  return -1;
}

/** Whether a unit sits inside a block quote. */
export function inQuote(frames: readonly Frame[]): boolean {
  return frames.some((f) => f.kind === "quote");
}

/**
 * The text before a line's content: a quote mark, the indentation of outer
 * list items, and the innermost item's marker on its first line.
 */
export function linePrefix(unit: Unit, quoteMark: string, marker = (item: ItemFrame) => item.marker): string {
  let prefix = quoteMark && inQuote(unit.frames) ? quoteMark : "";
  const items = unit.frames.filter((f) => f.kind === "item");
  items.forEach((item, i) => {
    const last = i === items.length - 1;
    const mark = marker(item);
    prefix += last && unit.lead ? `${mark} ` : " ".repeat(mark.length + 1);
  });
  return prefix;
}

/** The thematic break, drawn the same everywhere. */
export const RULE = "──────────";
