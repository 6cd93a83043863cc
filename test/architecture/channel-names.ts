/**
 * The channel-name rule of docs/architecture.md: outside a channel's own
 * folder (src/channels/<name>/) and the config schema's channel tables
 * (src/config/schema.ts), no source file names a channel in a string
 * literal. What the rest of Fermix needs to know of a channel it reads from
 * the channel's profile, so adding a channel never means finding the places
 * that know the others by name.
 *
 * String literals are read from the source text with a small tokenizer
 * (comments, strings, template literals with their substitutions, regular
 * expressions), so a name in a comment or inside a longer string is not a
 * literal naming a channel. Two uses name a property, not a channel: a key
 * in `Omit<…>` or `Pick<…>` (`Omit<X, "signal">`, an AbortSignal), and
 * `X["signal"]`, the same property read by index.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export interface StringLiteral {
  value: string;
  /** Offset of the opening quote. */
  start: number;
  /** Offset just past the closing quote. */
  end: number;
}

export interface NameViolation {
  /** Path relative to src/. */
  file: string;
  line: number;
  name: string;
}

/** Tokens after which a `/` starts a regular expression rather than dividing. */
const REGEX_AFTER = /^(?:[(,=:[!&|?{};+\-*%<>~^]|=>|return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/;

/**
 * Every string literal of a TypeScript source: single- and double-quoted
 * strings and template literals without substitutions (a template with
 * substitutions is built at run time, not a literal name). Comments and
 * regular expressions are skipped.
 */
export function stringLiterals(source: string): StringLiteral[] {
  const out: StringLiteral[] = [];
  /** For each open `${`: the brace depth of the code inside it. */
  const templates: number[] = [];
  let previous = "";
  let i = 0;
  const n = source.length;

  /** Read template text from `i` (just past a backtick or a closing `}`); returns whether it ended the template. */
  const templateText = (opened: number): void => {
    let text = "";
    while (i < n) {
      const c = source[i]!;
      if (c === "\\") {
        text += source.slice(i, i + 2);
        i += 2;
        continue;
      }
      if (c === "`") {
        i++;
        if (opened >= 0) out.push({ value: text, start: opened, end: i });
        previous = "`";
        return;
      }
      if (c === "$" && source[i + 1] === "{") {
        i += 2;
        templates.push(0);
        previous = "{";
        return;
      }
      text += c;
      i++;
    }
  };

  while (i < n) {
    const c = source[i]!;
    if (c === "/" && source[i + 1] === "/") {
      while (i < n && source[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && source[i + 1] === "*") {
      const close = source.indexOf("*/", i + 2);
      i = close < 0 ? n : close + 2;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const start = i++;
      let value = "";
      while (i < n && source[i] !== c && source[i] !== "\n") {
        if (source[i] === "\\") {
          value += source.slice(i, i + 2);
          i += 2;
        } else value += source[i++];
      }
      i++;
      out.push({ value, start, end: i });
      previous = "string";
      continue;
    }
    if (c === "`") {
      const start = i++;
      templateText(start);
      continue;
    }
    if (c === "/" && REGEX_AFTER.test(previous || "(")) {
      i++;
      let inClass = false;
      while (i < n && source[i] !== "\n") {
        const r = source[i]!;
        if (r === "/" && !inClass) break;
        if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        // A backslash escapes the character after it.
        i += r === "\\" ? 2 : 1;
      }
      i++;
      while (i < n && /[a-z]/i.test(source[i]!)) i++;
      previous = "regex";
      continue;
    }
    if (c === "{" && templates.length > 0) templates[templates.length - 1]!++;
    if (c === "}" && templates.length > 0) {
      if (templates[templates.length - 1] === 0) {
        templates.pop();
        i++;
        // The rest of a template with substitutions: not a literal, but its text must not be read as code.
        templateText(-1);
        continue;
      }
      templates[templates.length - 1]!--;
    }
    const word = /^[A-Za-z_$][\w$]*/.exec(source.slice(i, i + 64));
    if (word) {
      previous = word[0];
      i += word[0].length;
      continue;
    }
    const number = /^\d[\w.]*/.exec(source.slice(i, i + 64));
    if (number) {
      previous = "number";
      i += number[0].length;
      continue;
    }
    previous = source.startsWith("=>", i) ? "=>" : c;
    i += previous.length;
  }
  return out;
}

/** Whether a literal names a property rather than a channel: a key of `Omit<…>`/`Pick<…>`, or `X["signal"]`. */
export function namesAProperty(source: string, literal: StringLiteral): boolean {
  const before = source.slice(Math.max(0, literal.start - 300), literal.start);
  if (/\b(?:Omit|Pick)<[^<>;=(){}]*$/.test(before)) return true;
  return literal.value === "signal" && /[\w$\])]\s*\[\s*$/.test(before) && /^\s*\]/.test(source.slice(literal.end));
}

/**
 * Where a file may name channels: inside src/channels/<name>/ only `<name>`;
 * in the config schema every one; elsewhere none.
 */
export function namesAllowedIn(file: string, names: readonly string[]): readonly string[] {
  if (file === "config/schema.ts") return names;
  const folder = /^channels\/([^/]+)\//.exec(file)?.[1];
  return folder !== undefined && names.includes(folder) ? [folder] : [];
}

/** The channel names a source file spells as string literals where it may not. */
export function nameViolations(file: string, source: string, names: readonly string[]): NameViolation[] {
  const allowed = namesAllowedIn(file, names);
  return stringLiterals(source)
    .filter((literal) => names.includes(literal.value) && !allowed.includes(literal.value) && !namesAProperty(source, literal))
    .map((literal) => ({ file, line: source.slice(0, literal.start).split("\n").length, name: literal.value }));
}

/** Every violation under src/. */
export function channelNameViolations(srcDir: string, names: readonly string[]): NameViolation[] {
  const found: NameViolation[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) found.push(...nameViolations(relative(srcDir, path), readFileSync(path, "utf8"), names));
    }
  };
  walk(srcDir);
  return found;
}
