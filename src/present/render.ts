/**
 * The one send path for reply text: parse once → set aside code fences too
 * big for any message → split on the ladder → render each part in the
 * channel's dialect → measure the rendered text as the platform counts it.
 * Streaming, normal replies, background and scheduled results all come here.
 */
import type { OutboundText } from "../message/index.ts";
import { type Dialect, PartRenderer, renderUnits } from "./dialects/base.ts";
import { plain } from "./dialects/plain.ts";
import { type ParsedReply, parseMarkdown } from "./markdown.ts";
import type { TextProfile } from "./measure.ts";
import { type SplitOptions, type SplitPart, splitUnits } from "./split.ts";
import { LINE, type Unit } from "./units.ts";

/** A code block sent as a text file after the reply. */
export interface TextAttachment {
  filename: string;
  mime: string;
  content: string;
  /** false: if the file cannot be delivered, do not send its text as messages instead (a whole long answer). */
  inline?: boolean;
}

/** Options for rendering a reply; the defaults are the platform's. */
export interface RenderOptions {
  /**
   * A smaller limit than the platform's (block streaming cuts at 1,200). A
   * code fence that fits the platform's limit but not this one is sent alone
   * and whole; only one too big for the platform becomes an attachment.
   */
  limit?: number;
  /** Ladder bars; default half the limit, and a third for headings. */
  minFill?: number;
  headingMinFill?: number;
  /** Whether the first part notifies (false for follow-ups of a reply that already did). */
  notify?: boolean;
}

/** A reply ready to send: its parts in order and the files that follow them. */
export interface RenderedReply {
  parts: OutboundText[];
  attachments: TextAttachment[];
  /** Part `index` again as plain text (one or more messages), for a platform that rejected its formatting. */
  fallback(index: number): OutboundText[];
}

/** The units of a reply for a channel, with fences too big for one message set aside as attachments. */
export interface Prepared {
  units: Unit[];
  source: string;
  attachments: TextAttachment[];
  /** The placeholder unit that stands for each attachment in the text. */
  placeholders: Map<Unit, TextAttachment>;
  /** The text ends inside a code fence still open. */
  openFence: boolean;
  dialect: Dialect;
  limit: number;
  /** The channel it was prepared for. */
  platform: TextProfile;
}

/** Parse a reply (unless already parsed) and set aside the code fences that no message of the channel (`platform`) can hold. */
export function prepare(markdown: string | ParsedReply, platform: TextProfile): Prepared {
  const { dialect } = platform;
  const { units, source, openFence } = typeof markdown === "string" ? parseMarkdown(markdown) : markdown;
  const attachments: TextAttachment[] = [];
  const placeholders = new Map<Unit, TextAttachment>();
  const names = new Set<string>();
  const kept = units.map((unit) => {
    if (unit.role !== "code" || platform.measure(renderUnits([unit], dialect)) <= platform.limit) return unit;
    const filename = uniqueName(snippetName(unit.lang ?? ""), names);
    const attachment = { filename, mime: "text/plain", content: unit.text };
    attachments.push(attachment);
    const note = `📎 ${filename} (attached below)`;
    const runs = [{ text: note, style: { italic: true } }];
    const placeholder: Unit = { ...unit, kind: "text", role: "para", atomic: false, text: note, runs };
    placeholders.set(placeholder, attachment);
    return placeholder;
  });
  return { units: kept, source, attachments, placeholders, openFence, dialect, limit: platform.limit, platform };
}

/** Split, render and measure a reply for a channel; a reply parsed once may be rendered for several. */
export function renderReply(markdown: string | ParsedReply, platform: TextProfile, options: RenderOptions = {}): RenderedReply {
  return renderPrepared(prepare(markdown, platform), options);
}

/** Split, render and measure a prepared reply. */
export function renderPrepared(prepared: Prepared, options: RenderOptions = {}): RenderedReply {
  const limit = options.limit ?? prepared.limit;
  const split = splitUnits(prepared.units, prepared.dialect, ladder(limit, options));
  return rendered(split, prepared.attachments, prepared.platform, options.notify ?? true, limit, prepared.source);
}

/**
 * The Markdown each part was rendered from, when the cuts fall where the
 * source can be sliced: part i covers the source from where it starts to
 * where the next one starts (the first from 0, the last to the end), so the
 * sources of all parts joined are the whole source.
 */
export function partSources(split: readonly SplitPart[], source: string): Array<string | undefined> {
  const starts = split.map((part, i) => (i === 0 ? 0 : part.units[0]?.src));
  return split.map((_, i) => {
    const from = starts[i];
    const to = i + 1 < split.length ? starts[i + 1] : source.length;
    return from === undefined || to === undefined || to < from ? undefined : source.slice(from, to);
  });
}

/** Ladder bars for a limit: cut on a good rung only once a part is reasonably full. */
export function ladder(limit: number, options: Pick<RenderOptions, "minFill" | "headingMinFill"> = {}): SplitOptions {
  return { limit, minFill: options.minFill ?? limit * 0.5, headingMinFill: options.headingMinFill ?? limit * 0.3 };
}

/** Outbound parts from split parts, with their plain-text fallback. */
export function rendered(
  split: readonly SplitPart[],
  attachments: TextAttachment[],
  platform: TextProfile,
  notify: boolean,
  limit: number,
  source?: string,
): RenderedReply {
  const sources = source === undefined ? [] : partSources(split, source);
  const parts = split.map((part, i): OutboundText => {
    const out: OutboundText = { text: part.text, notify: notify && i === 0, linkPreview: false, plain: false };
    const from = sources[i];
    if (from !== undefined) out.source = from;
    return out;
  });
  return {
    parts,
    attachments,
    fallback: (index) => plainParts(split[index]?.units ?? [], platform, parts[index]?.notify ?? false, limit),
  };
}

/** Units as plain text messages within the channel's limit. */
function plainParts(units: readonly Unit[], platform: TextProfile, notify: boolean, limit: number): OutboundText[] {
  const plainLimit = Math.min(limit, platform.limit);
  return splitUnits(units, plain, ladder(plainLimit)).map((part, i) => ({
    text: part.text,
    notify: notify && i === 0,
    linkPreview: false,
    plain: true,
  }));
}

/** The rendered length of a whole prepared reply as one message, as the platform counts it. */
export function measurePrepared(prepared: Prepared): number {
  const renderer = new PartRenderer(prepared.dialect);
  for (const unit of prepared.units) renderer.add(unit);
  return renderer.measure;
}

/** The attachments whose placeholders are in a part. */
export function attachmentsOf(prepared: Prepared, part: SplitPart): TextAttachment[] {
  return part.units.flatMap((unit) => prepared.placeholders.get(unit) ?? []);
}

/**
 * Raw text (not Markdown) as plain messages within the channel's limit, cut
 * on the same ladder at line, sentence, space or grapheme boundaries.
 */
export function plainChunks(text: string, platform: TextProfile, notify = false): OutboundText[] {
  const units: Unit[] = text.split("\n").map((line) => ({
    kind: "pre",
    role: "table",
    block: 0,
    frames: [],
    lead: false,
    runs: [],
    text: line,
    boundary: LINE,
    atomic: false,
  }));
  return splitUnits(units, plain, ladder(platform.limit)).map((part, i) => ({
    text: part.text,
    notify: notify && i === 0,
    linkPreview: false,
    plain: true,
  }));
}

/** A reply as one plain text (logs, the command line, previews). */
export function plainText(markdown: string): string {
  return renderUnits(parseMarkdown(markdown).units, plain);
}

const EXTENSIONS: Record<string, string> = {
  python: "py",
  py: "py",
  javascript: "js",
  js: "js",
  jsx: "jsx",
  typescript: "ts",
  ts: "ts",
  tsx: "tsx",
  rust: "rs",
  rs: "rs",
  go: "go",
  golang: "go",
  ruby: "rb",
  rb: "rb",
  java: "java",
  kotlin: "kt",
  kt: "kt",
  swift: "swift",
  c: "c",
  h: "h",
  cpp: "cpp",
  "c++": "cpp",
  cc: "cpp",
  csharp: "cs",
  cs: "cs",
  "c#": "cs",
  php: "php",
  bash: "sh",
  sh: "sh",
  shell: "sh",
  zsh: "sh",
  console: "sh",
  powershell: "ps1",
  ps1: "ps1",
  json: "json",
  jsonc: "json",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  xml: "xml",
  html: "html",
  css: "css",
  scss: "scss",
  sql: "sql",
  markdown: "md",
  md: "md",
  lua: "lua",
  perl: "pl",
  r: "r",
  scala: "scala",
  elixir: "ex",
  ex: "ex",
  erlang: "erl",
  haskell: "hs",
  dockerfile: "dockerfile",
  makefile: "mk",
  diff: "diff",
  ini: "ini",
  csv: "csv",
  text: "txt",
  txt: "txt",
  plaintext: "txt",
};

/** The file name for a code block in `lang`: snippet.py for Python, snippet.txt when unknown. */
export function snippetName(lang: string): string {
  const key = lang.toLowerCase();
  const ext = EXTENSIONS[key] ?? (/^[a-z0-9]{1,8}$/.test(key) ? key : "txt");
  return `snippet.${ext}`;
}

function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) candidate = name.replace(/(\.[^.]+)$/, `-${n}$1`);
  taken.add(candidate);
  return candidate;
}
