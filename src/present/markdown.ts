/**
 * The one Markdown parse of a reply: marked's lexer (GFM), walked once into
 * units (see units.ts). Everything downstream — splitting, every dialect,
 * measuring — works on these units and never parses again.
 */
import { Lexer, type Token, type Tokens } from "marked";
import { inlineRuns, splitLines } from "./inline.ts";
import { displayWidth } from "./text.ts";
import { type Frame, HEADING, type Level, LINE, PARAGRAPH, type Run, runsText, type Unit, type UnitRole } from "./units.ts";

/** A reply after its one parse. */
export interface ParsedReply {
  /** The source, with line endings normalised to \n; unit `src` offsets point into it. */
  source: string;
  units: Unit[];
  /** The text ends inside a code fence that is still open (a stream cut off mid-block). */
  openFence: boolean;
}

/** Parse a reply's Markdown once into units. */
export function parseMarkdown(markdown: string): ParsedReply {
  const source = normalizeSource(markdown);
  const walker = new Walker();
  const tokens = new Lexer({ gfm: true }).lex(source);
  let at = 0;
  for (const token of tokens) {
    walker.block(token, [], at, PARAGRAPH);
    at += token.raw.length;
  }
  return { source, units: walker.units, openFence: endsInOpenFence(tokens) };
}

/** Whether the last block is a fenced code block without its closing fence. */
function endsInOpenFence(tokens: readonly Token[]): boolean {
  const last = tokens.findLast((t) => t.type !== "space");
  if (last?.type !== "code" || (last as Tokens.Code).codeBlockStyle === "indented") return false;
  const raw = last.raw.trimEnd();
  const open = /^ {0,3}(`{3,}|~{3,})/.exec(raw)?.[1] ?? "```";
  const lines = raw.split("\n");
  const close = lines.length > 1 ? lines.at(-1)!.trim() : "";
  return !(close.startsWith(open[0]!.repeat(open.length)) && /^(`+|~+)$/.test(close));
}

/** Line endings as the lexer sees them, so source offsets stay exact. */
export function normalizeSource(markdown: string): string {
  return markdown.replace(/\r\n?/g, "\n");
}

const BULLETS = ["•", "◦", "▪"];

class Walker {
  readonly units: Unit[] = [];
  private nextId = 0;
  /** A list item whose first line has not been emitted yet shows its marker there. */
  private leadItem: number | undefined;

  /** Walk one block token; `src` is its source offset when it is at the top level. */
  block(token: Token, frames: Frame[], src: number | undefined, boundary: Level): void {
    switch (token.type) {
      case "space":
      case "def":
      case "checkbox":
        return;
      case "heading": {
        const t = token as Tokens.Heading;
        const top = frames.length === 0;
        const runs = inlineRuns(t.tokens, {}, undefined);
        this.textLines(runs, "heading", frames, top ? HEADING : boundary, src, undefined, t.depth);
        return;
      }
      case "paragraph": {
        const t = token as Tokens.Paragraph;
        // Inline tokens are lexed from `text`; they map to the source only when raw starts with it.
        const inlineSrc = src !== undefined && t.raw.startsWith(t.text) ? src : undefined;
        this.textLines(inlineRuns(t.tokens ?? [], {}, inlineSrc), "para", frames, boundary, src, inlineSrc);
        return;
      }
      case "text": {
        // Tight list items hold bare text blocks.
        const t = token as Tokens.Text;
        const runs = t.tokens ? inlineRuns(t.tokens, {}, undefined) : [{ text: t.text, style: {} }];
        this.textLines(runs, "para", frames, boundary, src, undefined);
        return;
      }
      case "html": {
        const runs: Run[] = [{ text: token.raw.replace(/\n+$/, ""), style: {} }];
        this.textLines(runs, "html", frames, boundary, src, undefined);
        return;
      }
      case "code": {
        const t = token as Tokens.Code;
        const lang = t.codeBlockStyle === "indented" ? "" : (t.lang ?? "").trim().split(/\s+/)[0]!;
        this.push({ kind: "pre", role: "code", lang, text: t.text, runs: [], atomic: true }, frames, boundary, src);
        return;
      }
      case "hr":
        this.push({ kind: "rule", role: "rule", text: "", runs: [], atomic: true }, frames, boundary, src);
        return;
      case "blockquote": {
        const quote: Frame = { kind: "quote", id: this.nextId++ };
        this.children((token as Tokens.Blockquote).tokens, [...frames, quote], boundary, src, PARAGRAPH);
        return;
      }
      case "list":
        this.list(token as Tokens.List, frames, boundary, src);
        return;
      case "table":
        this.table(token as Tokens.Table, frames, boundary, src);
        return;
      default:
        if (token.raw.trim()) this.textLines([{ text: token.raw.trim(), style: {} }], "para", frames, boundary, src, undefined);
    }
  }

  /** Child blocks of a container: the first takes the container's boundary and source offset. */
  private children(tokens: readonly Token[], frames: Frame[], boundary: Level, src: number | undefined, inner: Level): void {
    let first = true;
    for (const child of tokens) {
      const before = this.units.length;
      this.block(child, frames, first ? src : undefined, first ? boundary : inner);
      if (this.units.length > before) first = false;
    }
  }

  private list(list: Tokens.List, frames: Frame[], boundary: Level, src: number | undefined): void {
    const depth = frames.filter((f) => f.kind === "item").length;
    const start = typeof list.start === "number" ? list.start : 1;
    const inner: Level = list.loose ? PARAGRAPH : LINE;
    let at = src;
    list.items.forEach((item, index) => {
      const bullet = item.task ? (item.checked ? "☑" : "☐") : BULLETS[Math.min(depth, BULLETS.length - 1)]!;
      const marker = list.ordered ? `${start + index}.${item.task ? ` ${bullet}` : ""}` : bullet;
      const frame: Frame = { kind: "item", id: this.nextId++, marker, ordered: list.ordered, depth };
      const before = this.units.length;
      this.leadItem = frame.id;
      this.children(item.tokens, [...frames, frame], index === 0 ? boundary : inner, at, inner);
      if (this.units.length === before) {
        // An empty item still shows its marker.
        this.textLines([], "para", [...frames, frame], index === 0 ? boundary : inner, at, undefined);
      }
      if (at !== undefined) at += item.raw.length;
    });
  }

  private table(table: Tokens.Table, frames: Frame[], boundary: Level, src: number | undefined): void {
    const cells = [table.header, ...table.rows].map((row) => row.map((cell) => cellText(inlineRuns(cell.tokens, {}, undefined))));
    const columns = Math.max(...cells.map((row) => row.length));
    const widths = Array.from({ length: columns }, (_, c) => Math.max(3, ...cells.map((row) => displayWidth(row[c] ?? ""))));
    const line = (row: string[]) => `| ${widths.map((w, c) => pad(row[c] ?? "", w, table.align[c] === "right")).join(" | ")} |`;
    const rows = [line(cells[0]!), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.slice(1).map(line)];
    const block = this.nextId++;
    rows.forEach((text, index) => {
      const unit = { kind: "pre" as const, role: "table" as const, text, runs: [], atomic: false };
      this.push(unit, frames, index === 0 ? boundary : LINE, index === 0 ? src : undefined, block);
    });
  }

  /** One unit per line of a run sequence; each line after the first is a LINE boundary. */
  private textLines(
    runs: Run[],
    role: UnitRole,
    frames: Frame[],
    boundary: Level,
    src: number | undefined,
    inlineSrc: number | undefined,
    level?: number,
  ): void {
    const block = this.nextId++;
    const lines = splitLines(runs, inlineSrc);
    lines.forEach((line, index) => {
      if (line.runs.length === 0 && lines.length > 1) return;
      const lineSrc = index === 0 ? src : line.src;
      const unit = { kind: "text" as const, role, runs: line.runs, text: runsText(line.runs), atomic: false, level };
      this.push(unit, frames, index === 0 ? boundary : LINE, lineSrc, block);
    });
  }

  private push(
    unit: Pick<Unit, "kind" | "role" | "text" | "runs" | "atomic"> & { lang?: string; level?: number },
    frames: Frame[],
    boundary: Level,
    src: number | undefined,
    block = this.nextId++,
  ): void {
    const item = frames.findLast((f) => f.kind === "item");
    const lead = item !== undefined && item.id === this.leadItem;
    if (lead) this.leadItem = undefined;
    // The line after a heading is a poor place to cut (it would end a message on a title).
    const afterHeading = this.units.at(-1)?.role === "heading" && unit.role !== "heading";
    const full: Unit = { ...unit, block, frames, lead, boundary: afterHeading ? (Math.min(boundary, LINE) as Level) : boundary };
    if (unit.level === undefined) delete full.level;
    if (unit.lang === undefined) delete full.lang;
    if (src !== undefined) full.src = src;
    this.units.push(full);
  }
}

/** A table cell as plain text: tables are monospace on every channel. */
function cellText(runs: Run[]): string {
  let text = "";
  let label = "";
  runs.forEach((run, i) => {
    text += run.text;
    const href = run.style.href;
    if (href === undefined) return;
    label += run.text;
    if (runs[i + 1]?.style.href === href) return;
    // A link keeps its address: the cell is plain text.
    if (label !== href && `mailto:${label}` !== href) text += ` (${href})`;
    label = "";
  });
  return text.replace(/\s+/g, " ").trim();
}

function pad(text: string, width: number, right: boolean): string {
  const fill = " ".repeat(Math.max(0, width - displayWidth(text)));
  return right ? fill + text : text + fill;
}
