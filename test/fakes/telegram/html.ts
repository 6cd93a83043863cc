/**
 * Telegram's `parse_mode: "HTML"`, as the Bot API server applies it: only
 * the documented tags, strict nesting, four named entities plus numeric ones,
 * errors worded like the real server's (tdlib `parse_html`) with UTF-8 byte
 * offsets. The fake uses it to reject what Telegram rejects and to measure
 * the 4096 limit on the text a user would actually see.
 */
import type { MessageEntity } from "grammy/types";

export type HtmlResult = { ok: true; text: string; entities: MessageEntity[] } | { ok: false; error: string };

const TAGS = new Set([
  "a",
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "code",
  "pre",
  "blockquote",
  "tg-emoji",
  "tg-time",
]);

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

interface Open {
  tag: string;
  attrs: Map<string, string>;
  /** UTF-16 offset in the output text where the entity starts. */
  start: number;
}

const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\n";

/** Decode `&...;` at `i`; returns the text and how many input chars it consumed, or null (left literal, as Telegram does). */
function decodeEntity(s: string, i: number): { text: string; used: number } | null {
  const m = /^&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,4});/.exec(s.slice(i, i + 12));
  if (!m) return null;
  const name = m[1]!;
  if (name.startsWith("#")) {
    const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
    if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return null;
    return { text: String.fromCodePoint(code), used: m[0].length };
  }
  const named = NAMED[name.toLowerCase()];
  return named === undefined ? null : { text: named, used: m[0].length };
}

/** Entity for a closed tag, or null for tags that contribute no entity (a bare `<a>`). */
function entityFor(open: Open, length: number): MessageEntity | null {
  const offset = open.start;
  switch (open.tag) {
    case "b":
    case "strong":
      return { type: "bold", offset, length };
    case "i":
    case "em":
      return { type: "italic", offset, length };
    case "u":
    case "ins":
      return { type: "underline", offset, length };
    case "s":
    case "strike":
    case "del":
      return { type: "strikethrough", offset, length };
    case "span":
    case "tg-spoiler":
      return { type: "spoiler", offset, length };
    case "code":
      return { type: "code", offset, length };
    case "pre": {
      const language = open.attrs.get("language");
      return language ? { type: "pre", offset, length, language } : { type: "pre", offset, length };
    }
    case "blockquote":
      return { type: open.attrs.has("expandable") ? "expandable_blockquote" : "blockquote", offset, length };
    case "tg-emoji":
      return { type: "custom_emoji", offset, length, custom_emoji_id: open.attrs.get("emoji-id") ?? "" };
    case "tg-time": {
      const format = (open.attrs.get("format") ?? "") as "r";
      return { type: "date_time", offset, length, unix_time: Number(open.attrs.get("unix") ?? 0), date_time_format: format };
    }
    case "a": {
      const href = open.attrs.get("href");
      if (!href) return null;
      const mention = /^tg:\/\/user\?id=(\d+)$/.exec(href);
      if (mention) return { type: "text_mention", offset, length, user: { id: Number(mention[1]), is_bot: false, first_name: "" } };
      return { type: "text_link", offset, length, url: href };
    }
  }
  return null;
}

/** Parse Telegram HTML into plain text and entities, or the server's error description (without the "Bad Request: can't parse entities: " prefix). */
export function parseTelegramHtml(html: string): HtmlResult {
  const bytesAt = (i: number) => Buffer.byteLength(html.slice(0, i));
  const fail = (error: string): HtmlResult => ({ ok: false, error });
  const stack: Open[] = [];
  const entities: MessageEntity[] = [];
  let out = "";
  let i = 0;
  while (i < html.length) {
    const c = html[i]!;
    if (c === "&") {
      const decoded = decodeEntity(html, i);
      out += decoded ? decoded.text : "&";
      i += decoded ? decoded.used : 1;
      continue;
    }
    if (c !== "<") {
      out += c;
      i++;
      continue;
    }
    const begin = i;
    i++;
    if (html[i] !== "/") {
      // A start tag: its name runs up to whitespace or '>'.
      while (i < html.length && !isSpace(html[i]) && html[i] !== ">") i++;
      if (i >= html.length) return fail(`Unclosed start tag at byte offset ${bytesAt(begin)}`);
      const tag = html.slice(begin + 1, i).toLowerCase();
      if (!TAGS.has(tag)) return fail(`Unsupported start tag "${tag}" at byte offset ${bytesAt(begin)}`);
      const attrs = new Map<string, string>();
      for (;;) {
        while (isSpace(html[i])) i++;
        if (i >= html.length) return fail(`Unclosed start tag at byte offset ${bytesAt(begin)}`);
        if (html[i] === ">") break;
        const nameStart = i;
        while (i < html.length && !isSpace(html[i]) && html[i] !== "=" && html[i] !== ">") i++;
        const name = html.slice(nameStart, i).toLowerCase();
        if (name === "") return fail(`Empty attribute name in the tag "${tag}" at byte offset ${bytesAt(nameStart)}`);
        while (isSpace(html[i])) i++;
        if (html[i] !== "=") {
          // Only `<blockquote expandable>` has a valueless attribute.
          if (tag === "blockquote" && name === "expandable") {
            attrs.set(name, "");
            continue;
          }
          return fail(`Expected equal sign in declaration of an attribute of the tag "${tag}" at byte offset ${bytesAt(nameStart)}`);
        }
        i++;
        while (isSpace(html[i])) i++;
        if (i >= html.length) return fail(`Unclosed start tag at byte offset ${bytesAt(begin)}`);
        let raw: string;
        const quote = html[i];
        if (quote === '"' || quote === "'") {
          const end = html.indexOf(quote, i + 1);
          if (end < 0) return fail(`Unclosed start tag at byte offset ${bytesAt(begin)}`);
          raw = html.slice(i + 1, end);
          i = end + 1;
        } else {
          const valueStart = i;
          while (i < html.length && !isSpace(html[i]) && html[i] !== ">") i++;
          raw = html.slice(valueStart, i);
        }
        attrs.set(
          name,
          raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot);/g, (m) => decodeEntity(m, 0)?.text ?? m),
        );
      }
      i++; // past '>'
      if (tag === "span" && attrs.get("class") !== "tg-spoiler") {
        return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${bytesAt(begin)}`);
      }
      if (tag === "tg-emoji" && !attrs.get("emoji-id")) return fail(`Custom emoji must have an identifier at byte offset ${bytesAt(begin)}`);
      if (tag === "code" && stack.at(-1)?.tag === "pre") {
        // <pre><code class="language-x"> sets the language of the enclosing pre block.
        const language = /^language-(.+)$/.exec(attrs.get("class") ?? "")?.[1];
        if (language) stack.at(-1)!.attrs.set("language", language);
      }
      stack.push({ tag, attrs, start: out.length });
      continue;
    }
    // An end tag.
    const close = html.indexOf(">", i);
    if (stack.length === 0) return fail(`Unexpected end tag at byte offset ${bytesAt(begin)}`);
    if (close < 0) return fail(`Unclosed end tag at byte offset ${bytesAt(begin)}`);
    const name = html
      .slice(i + 1, close)
      .trim()
      .toLowerCase();
    const open = stack.at(-1)!;
    if (name !== "" && name !== open.tag) {
      return fail(`Unmatched end tag at byte offset ${bytesAt(begin)}, expected "</${open.tag}>", found "</${name}>"`);
    }
    stack.pop();
    i = close + 1;
    const length = out.length - open.start;
    // <pre><code …> is one pre block (its class only names the language), not a code entity inside a pre.
    const inPre = open.tag === "code" && stack.at(-1)?.tag === "pre";
    const entity = length > 0 && !inPre ? entityFor(open, length) : null;
    if (entity) entities.push(entity);
  }
  if (stack.length > 0) return fail(`Can't find end tag corresponding to start tag "${stack.at(-1)!.tag}"`);
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { ok: true, text: out, entities };
}

/** Length of `text` in the unit the fake enforces limits in (see TelegramFakeOptions.lengthUnit). */
export function telegramLength(text: string, unit: "utf16" | "codepoint"): number {
  return unit === "utf16" ? text.length : [...text].length;
}
