/**
 * Inline Markdown tokens (from marked's lexer) to styled runs, and runs to
 * lines. Plain text at the top level of a paragraph keeps its source offset,
 * so the streaming engine can resume the source exactly where a cut fell.
 */
import type { Token, Tokens } from "marked";
import { decodeEntity, ENTITY } from "./text.ts";
import type { Run, Style } from "./units.ts";

/** Runs for a list of inline tokens; `src` is the source offset of the first token, when it maps. */
export function inlineRuns(tokens: readonly Token[], style: Style, src: number | undefined, out: Run[] = []): Run[] {
  let at = src;
  for (const token of tokens) {
    tokenRuns(token, style, at, out);
    if (at !== undefined) at += token.raw.length;
  }
  return out;
}

function tokenRuns(token: Token, style: Style, src: number | undefined, out: Run[]): void {
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      if (t.tokens && t.tokens.length > 0) inlineRuns(t.tokens, style, undefined, out);
      else literalRuns(t.raw, t.text, style, src, out);
      return;
    }
    case "escape":
      out.push({ text: (token as Tokens.Escape).text, md: token.raw, style });
      return;
    case "strong":
      inlineRuns((token as Tokens.Strong).tokens, { ...style, bold: true }, undefined, out);
      return;
    case "em":
      inlineRuns((token as Tokens.Em).tokens, { ...style, italic: true }, undefined, out);
      return;
    case "del":
      inlineRuns((token as Tokens.Del).tokens, { ...style, strike: true }, undefined, out);
      return;
    case "codespan":
      // Code spans show their content literally: no entity decoding.
      out.push({ text: (token as Tokens.Codespan).text, style: { ...style, code: true } });
      return;
    case "link": {
      const t = token as Tokens.Link;
      const linked = { ...style, href: t.href };
      if (t.tokens.length === 0) out.push({ text: t.href, style: linked });
      else inlineRuns(t.tokens, linked, undefined, out);
      return;
    }
    case "image": {
      const t = token as Tokens.Image;
      out.push({ text: t.text || "image", style: { ...style, href: t.href } });
      return;
    }
    case "br":
      out.push({ text: "\n", md: "\n", style: {} });
      return;
    case "html":
      // Inline HTML is not formatting any channel understands: <br> breaks the line, the rest is text.
      if (/^<br\s*\/?>$/i.test(token.raw)) out.push({ text: "\n", md: "\n", style: {} });
      else literalRuns(token.raw, token.raw, style, src, out);
      return;
    case "checkbox":
      return;
    default:
      if (token.raw) literalRuns(token.raw, token.raw, style, src, out);
  }
}

/**
 * Runs for a text token. marked leaves named entities in `text` and decodes
 * numeric ones; walking raw and text side by side turns each entity into a
 * one-character run that remembers its source form, and keeps the rest literal.
 */
function literalRuns(raw: string, text: string, style: Style, src: number | undefined, out: Run[]): void {
  if (!raw.includes("&")) {
    out.push(raw === text ? { text, style, src } : { text, style });
    return;
  }
  let i = 0;
  let j = 0;
  let start = 0;
  const flush = (end: number) => {
    if (end > start) out.push({ text: raw.slice(start, end), style, src: src === undefined ? undefined : src + start });
  };
  while (i < raw.length) {
    const m = raw[i] === "&" ? ENTITY.exec(raw.slice(i, i + 40)) : null;
    const decoded = m ? decodeEntity(m[0]) : undefined;
    if (m && decoded !== undefined) {
      flush(i);
      out.push({ text: decoded, md: m[0], style });
      i += m[0].length;
      j += text.startsWith(m[0], j) ? m[0].length : decoded.length;
      start = i;
      continue;
    }
    if (raw[i] !== text[j]) {
      // The lexer changed the text in a way we do not model: keep its text, unmapped.
      flush(i);
      out.push({ text: text.slice(j), style });
      return;
    }
    i++;
    j++;
  }
  flush(i);
}

/**
 * Runs split into lines at newlines. Each line knows the source offset where
 * it starts when the newline that ends the previous line is plain source.
 */
export function splitLines(runs: readonly Run[], firstSrc: number | undefined): { runs: Run[]; src?: number }[] {
  const lines: { runs: Run[]; src?: number }[] = [{ runs: [], src: firstSrc }];
  for (const run of runs) {
    let from = 0;
    for (let nl = run.text.indexOf("\n"); nl !== -1; nl = run.text.indexOf("\n", from)) {
      if (nl > from) lines.at(-1)!.runs.push(piece(run, from, nl));
      const mapped = run.src !== undefined && run.md === undefined;
      lines.push({ runs: [], src: mapped ? run.src! + nl + 1 : undefined });
      from = nl + 1;
    }
    if (from < run.text.length) lines.at(-1)!.runs.push(piece(run, from, run.text.length));
  }
  return lines.map(trimLine);
}

function piece(run: Run, from: number, to: number): Run {
  if (from === 0 && to === run.text.length) return run;
  const out: Run = { text: run.text.slice(from, to), style: run.style };
  if (run.src !== undefined && run.md === undefined) out.src = run.src + from;
  return out;
}

/** Leading and trailing whitespace of a line is layout, not content. */
function trimLine(line: { runs: Run[]; src?: number }): { runs: Run[]; src?: number } {
  const runs = line.runs;
  let src = line.src;
  while (runs.length > 0) {
    const first = runs[0]!;
    const lead = first.text.length - first.text.trimStart().length;
    if (lead === 0 || first.style.code) break;
    if (src !== undefined) src += lead;
    if (lead === first.text.length) runs.shift();
    else runs[0] = piece(first, lead, first.text.length);
  }
  while (runs.length > 0) {
    const last = runs.at(-1)!;
    const kept = last.text.trimEnd().length;
    if (kept === last.text.length || last.style.code) break;
    if (kept === 0) runs.pop();
    else runs[runs.length - 1] = piece(last, 0, kept);
  }
  return { runs, src: runs.length > 0 ? src : undefined };
}
