/**
 * The frame every page shares (dashboard, setup): one stylesheet and at most
 * one small script, both inline and both pinned by hash in a strict
 * Content-Security-Policy, so nothing but our own bytes runs or styles the
 * page — no CDN, no bundle, nothing fetched but the page's own routes.
 */
import { createHash } from "node:crypto";
import { type Html, html, htmlResponse, raw } from "./html.ts";
import { STYLES } from "./styles.ts";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

export interface PageOptions {
  title: string;
  body: Html;
  /** Inline script text (our own constant, never built from input). */
  script?: string;
  status?: number;
  headers?: Record<string, string>;
}

/** The page's Content-Security-Policy: our own stylesheet and script by hash, nothing else. */
function policy(script: string | undefined): string {
  return [
    "default-src 'none'",
    `style-src ${sha256(STYLES)}`,
    script ? `script-src ${sha256(script)}` : "script-src 'none'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The document up to the body's content. */
const opening = (title: string) => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<style>${raw(STYLES)}</style>
</head>
<body>
`;

/** The document after the body's content. */
const closing = (script: string | undefined) => html`
${script ? html`<script>${raw(script)}</script>` : ""}
</body>
</html>
`;

export function page(options: PageOptions): Response {
  const doc = html`${opening(options.title)}${options.body}${closing(options.script)}`;
  return htmlResponse(doc, {
    ...(options.status ? { status: options.status } : {}),
    headers: { "content-security-policy": policy(options.script), "x-frame-options": "DENY", ...options.headers },
  });
}

export interface StreamedPageOptions {
  title: string;
  /** Shown at once, while `rest` is worked out; give it the class `pair-wait` to have it hidden once `rest` follows. */
  first: Html;
  /** The body that follows. A rejection is the caller's to turn into a body: it ends the page here. */
  rest: Promise<Html>;
  script?: string;
  /** A newline this often keeps the connection (and any proxy) from closing it as idle (ms, default 5000). */
  keepAliveMs?: number;
}

/**
 * A page sent in two parts: `first` at once, then `rest` when it is ready,
 * with keep-alive newlines between, so a browser shows something while the
 * server waits on the world (a message to a bot) — no script needed.
 */
export function streamedPage(options: StreamedPageOptions): Response {
  const encoder = new TextEncoder();
  const keepAliveMs = options.keepAliveMs ?? 5000;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          clearInterval(keepAlive);
        }
      };
      send(String(html`${opening(options.title)}${options.first}`));
      keepAlive = setInterval(() => send("\n"), keepAliveMs);
      keepAlive.unref();
      options.rest.then(
        (body) => {
          clearInterval(keepAlive);
          send(String(html`${body}${closing(options.script)}`));
          try {
            controller.close();
          } catch {
            // The browser went away first.
          }
        },
        () => {
          clearInterval(keepAlive);
          send(String(closing(undefined)));
          try {
            controller.close();
          } catch {
            // The browser went away first.
          }
        },
      );
    },
    cancel() {
      clearInterval(keepAlive);
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-accel-buffering": "no",
      "content-security-policy": policy(options.script),
      "x-frame-options": "DENY",
    },
  });
}
