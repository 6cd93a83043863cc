/**
 * What the comments and documents of the repository cite must be in the
 * repository: a contributor who follows a pointer finds its target. Read
 * here: every comment of a TypeScript file (strings are data, not
 * citations), and the whole text of a Markdown document or shell script.
 * A citation is a `*.md` name (with its `#anchor`, or a quoted heading
 * after it: `docs/http.md "Webhooks"`). It is found when the file exists
 * (beside the citing file, at the root, or in docs/), and its anchor or
 * heading is one of that document's headings. A name Fermix itself reads
 * or writes at run time (`SOUL.md`, `SKILL.md`: a string of src/), or one a
 * test makes for its own use (a string of the same file), names that file,
 * not a document. Words that only ever pointed outside the repository are
 * refused wherever they appear.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

export interface Citation {
  /** The file that cites, relative to the root. */
  file: string;
  line: number;
  /** What it cites, as written. */
  cited: string;
  /** Why it does not resolve. */
  problem: string;
}

/** Phrases that name notes the repository does not have. */
export const REFUSED_WORDS = /\bseed page\b|\bseed's\b/i;

/** The comments of a TypeScript source, each with the line it starts on; string, template and regular-expression literals are skipped. */
export function commentsOf(source: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let i = 0;
  let line = 1;
  let prev = "";
  let word = "";
  const advanceTo = (end: number) => {
    for (let k = i; k < end; k++) if (source[k] === "\n") line++;
    i = end;
  };
  const skipQuoted = (quote: string) => {
    let k = i + 1;
    while (k < source.length && source[k] !== quote && source[k] !== "\n") k += source[k] === "\\" ? 2 : 1;
    advanceTo(Math.min(source.length, k + 1));
  };
  const skipRegex = () => {
    let k = i + 1;
    let inClass = false;
    while (k < source.length && source[k] !== "\n") {
      const c = source[k]!;
      if (c === "\\") k += 2;
      else {
        if (c === "[") inClass = true;
        else if (c === "]") inClass = false;
        else if (c === "/" && !inClass) break;
        k++;
      }
    }
    k++;
    while (k < source.length && /[a-z]/i.test(source[k]!)) k++;
    advanceTo(k);
  };
  /** Code until the end, or until the `}` that closes a template's `${`. */
  const code = (inTemplate: boolean): void => {
    let depth = 0;
    while (i < source.length) {
      const c = source[i]!;
      const next = source[i + 1];
      if (c === "/" && next === "/") {
        const end = source.indexOf("\n", i);
        const stop = end < 0 ? source.length : end;
        out.push({ line, text: source.slice(i + 2, stop) });
        i = stop;
      } else if (c === "/" && next === "*") {
        const end = source.indexOf("*/", i + 2);
        const stop = end < 0 ? source.length : end;
        out.push({ line, text: source.slice(i + 2, stop) });
        advanceTo(Math.min(source.length, stop + 2));
      } else if (c === '"' || c === "'") {
        skipQuoted(c);
        prev = c;
      } else if (c === "`") {
        i++;
        template();
        prev = "`";
      } else if (
        c === "/" &&
        (prev === "" || "(,=:[!&|?{};+-*%<>~^".includes(prev) || /^(return|typeof|case|in|of|delete|void|throw|new|else|do|yield|await)$/.test(word))
      ) {
        skipRegex();
        prev = "/";
        word = "";
      } else {
        if (c === "\n") line++;
        if (c === "{") depth++;
        if (c === "}") {
          if (inTemplate && depth === 0) {
            i++;
            return;
          }
          depth--;
        }
        if (/[\w$]/.test(c)) word = /[\w$]/.test(prev) ? word + c : c;
        if (!/\s/.test(c)) prev = c;
        i++;
      }
    }
  };
  const template = (): void => {
    while (i < source.length) {
      const c = source[i]!;
      if (c === "\\") advanceTo(i + 2);
      else if (c === "`") {
        i++;
        return;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        code(true);
      } else advanceTo(i + 1);
    }
  };
  code(false);
  return out;
}

/** A heading as GitHub makes its anchor: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The headings of a Markdown text, as written (backticks dropped), outside fenced code. */
export function headingsOf(markdown: string): string[] {
  const headings: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const match = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (match) headings.push(match[1]!.replace(/`/g, ""));
  }
  return headings;
}

const MENTION = /(?<![\w/.-])((?:\.{1,2}\/)*(?:[\w-][\w.-]*\/)*[\w-][\w.-]*\.md)\b(?:#([\w-]+)|,? "([^"\n]+)")?/g;

export interface Repository {
  root: string;
  /** `*.md` names src/ uses as strings: files Fermix reads or writes at run time. */
  runtimeNames: ReadonlySet<string>;
}

const STRING_MD = /["'`]([\w./-]+\.md)["'`]/g;

/** The `*.md` names a source holds as whole string literals. */
export function mdStrings(source: string): Set<string> {
  return new Set([...source.matchAll(STRING_MD)].map((match) => match[1]!));
}

/**
 * What is wrong with each citation in `text` (from `file`, its lines starting at `firstLine`); nothing when all resolve.
 * `ownNames`: the `*.md` names the citing file itself uses as data.
 */
export function checkText(repo: Repository, file: string, text: string, firstLine = 1, ownNames: ReadonlySet<string> = new Set()): Citation[] {
  const found: Citation[] = [];
  const lineAt = (index: number) => firstLine + text.slice(0, index).split("\n").length - 1;
  const refused = new RegExp(REFUSED_WORDS.source, "gi");
  for (const match of text.matchAll(refused)) {
    found.push({ file, line: lineAt(match.index), cited: match[0], problem: "names notes the repository does not have: point at docs/ or say it in place" });
  }
  for (const match of text.matchAll(MENTION)) {
    const [, name, anchor, heading] = match;
    const problem = ownNames.has(name!) ? undefined : resolveProblem(repo, file, name!, anchor, heading);
    if (problem) found.push({ file, line: lineAt(match.index), cited: match[0], problem });
  }
  return found;
}

function resolveProblem(repo: Repository, file: string, name: string, anchor?: string, heading?: string): string | undefined {
  const here = dirname(join(repo.root, file));
  const candidates = name.startsWith(".") ? [join(here, name)] : [join(here, name), join(repo.root, name), join(repo.root, "docs", name)];
  const target = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  if (!target) {
    if (!name.includes("/") && repo.runtimeNames.has(name)) return undefined;
    return `${name} is not in the repository`;
  }
  if (anchor === undefined && heading === undefined) return undefined;
  const headings = headingsOf(readFileSync(target, "utf8"));
  if (anchor !== undefined && !headings.some((h) => anchorOf(h) === anchor)) return `${relative(repo.root, target)} has no heading #${anchor}`;
  if (heading !== undefined && !headings.includes(heading.replace(/`/g, ""))) return `${relative(repo.root, target)} has no heading "${heading}"`;
  return undefined;
}

/** Every `*.md` name src/ holds as a whole string literal. */
export function runtimeNames(root: string): Set<string> {
  const names = new Set<string>();
  for (const file of filesUnder(join(root, "src"), (name) => name.endsWith(".ts"))) {
    for (const name of mdStrings(readFileSync(file, "utf8"))) if (!name.includes("/")) names.add(name);
  }
  return names;
}

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name.startsWith(".") ? [] : filesUnder(path, keep);
    return keep(entry.name) ? [path] : [];
  });
}

/** Every citation in the repository's sources, tests, documents and scripts that does not resolve. */
export function unresolvedCitations(root: string): Citation[] {
  const repo: Repository = { root, runtimeNames: runtimeNames(root) };
  const sources = ["src", "test", "scripts", "bench"].flatMap((dir) => filesUnder(join(root, dir), (name) => name.endsWith(".ts")));
  const texts = [
    ...filesUnder(join(root, "docs"), (name) => name.endsWith(".md")),
    ...filesUnder(join(root, ".ci"), () => true),
    ...["README.md", "install.sh"].map((name) => join(root, name)).filter((path) => existsSync(path)),
  ];
  const found: Citation[] = [];
  for (const path of [...sources, join(root, "build.ts")]) {
    const file = relative(root, path);
    const source = readFileSync(path, "utf8");
    const own = mdStrings(source);
    for (const comment of commentsOf(source)) found.push(...checkText(repo, file, comment.text, comment.line, own));
  }
  for (const path of texts) found.push(...checkText(repo, relative(root, path), readFileSync(path, "utf8")));
  return found;
}
