/**
 * A fetched body as text the model can read: an HTML page's main content
 * (Mozilla's Readability on a linkedom document, then ./html-text.ts),
 * plain text, Markdown, CSV, XML and JSON as they are. A PDF is refused
 * with the reason: reading one well needs pdf.js, megabytes for one format,
 * so the model is told to look for an HTML or text version instead. Images,
 * audio and other binaries are refused by their type.
 *
 * Readability and linkedom are loaded on the first HTML page, not at start
 * (docs/performance.md: every static import is evaluated when fermix starts).
 */
import { ToolError } from "../errors.ts";

export interface Extracted {
  title?: string;
  text: string;
  /** How it was read, for the answer's first line. */
  as: "article" | "page" | "text" | "json";
}

const HTML_TYPES = ["text/html", "application/xhtml+xml"];
const TEXT_TYPES = /^(text\/|application\/(json|ld\+json|xml|javascript|x-ndjson|yaml|x-yaml|toml|csv|rss\+xml|atom\+xml)|[a-z]+\/[a-z0-9.+-]+\+(json|xml))/;

/** The media type of a Content-Type header, without its parameters. */
export const mediaType = (contentType: string): string => contentType.split(";")[0]!.trim();

/** The body read as its type says, or a ToolError naming what it is. */
export async function extract(body: Uint8Array, contentType: string, url: string): Promise<Extracted> {
  const type = mediaType(contentType);
  if (type === "application/pdf" || startsWith(body, "%PDF-")) {
    throw new ToolError(
      `${url} is a PDF, which web_fetch does not read (it reads web pages, plain text and JSON); look for an HTML or text version of the document instead`,
    );
  }
  const looksHtml = type === "" && /^\s*(<!doctype html|<html|<head|<body)/i.test(decode(body.subarray(0, 512), ""));
  if (HTML_TYPES.includes(type) || looksHtml) return readHtml(decode(body, contentType, true), url);
  if (TEXT_TYPES.test(type) || (type === "" && !body.subarray(0, 4096).includes(0))) {
    const text = decode(body, contentType);
    return { text, as: /json/.test(type) ? "json" : "text" };
  }
  throw new ToolError(`${url} is ${type || "binary data"}, which web_fetch does not read (it reads web pages, plain text and JSON)`);
}

/** The main content of an HTML page, or its whole visible text when Readability finds no article in it. */
async function readHtml(html: string, url: string): Promise<Extracted> {
  const [{ parseHTML }, { Readability }] = await Promise.all([import("linkedom"), import("@mozilla/readability")]);
  const { htmlText } = await import("./html-text.ts");
  type Walked = Parameters<typeof htmlText>[0];
  type ReadableDocument = ConstructorParameters<typeof Readability>[0];
  const page = () => parseHTML(html).document;
  const document = page();
  const pageTitle = document.querySelector("title")?.textContent?.replace(/\s+/g, " ").trim() || undefined;
  // Readability changes the document it reads; the fallback reads a fresh one. Its serializer hands back the element itself.
  const article = new Readability<Walked>(document as unknown as ReadableDocument, { serializer: (element) => element as unknown as Walked }).parse();
  if (article?.content) {
    const text = htmlText(article.content, url);
    if (text.trim() !== "") return { ...titled(article.title?.trim() || pageTitle), text, as: "article" };
  }
  const body = page().body as unknown as Walked | null;
  return { ...titled(pageTitle), text: body ? htmlText(body, url) : "", as: "page" };
}

const titled = (title: string | undefined) => (title ? { title } : {});

type Charset = ConstructorParameters<typeof TextDecoder>[0];

function startsWith(body: Uint8Array, magic: string): boolean {
  return magic.split("").every((char, i) => body[i] === char.charCodeAt(0));
}

/**
 * The body as a string in the charset the header names, else (for HTML) the
 * one a `<meta charset>` near the top names, else UTF-8. An unknown charset
 * reads as UTF-8 rather than failing.
 */
function decode(body: Uint8Array, contentType: string, html = false): string {
  let charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!charset && html) {
    const head = new TextDecoder("latin1").decode(body.subarray(0, 1024));
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder((charset ?? "utf-8") as Charset).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}
