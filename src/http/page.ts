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

export function page(options: PageOptions): Response {
  const csp = [
    "default-src 'none'",
    `style-src ${sha256(STYLES)}`,
    options.script ? `script-src ${sha256(options.script)}` : "script-src 'none'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${options.title}</title>
<style>${raw(STYLES)}</style>
</head>
<body>
${options.body}
${options.script ? html`<script>${raw(options.script)}</script>` : ""}
</body>
</html>
`;
  return htmlResponse(doc, {
    ...(options.status ? { status: options.status } : {}),
    headers: { "content-security-policy": csp, "x-frame-options": "DENY", ...options.headers },
  });
}
