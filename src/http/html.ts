/**
 * HTML from tagged templates, escaped by default: every value interpolated
 * into html`…` is escaped unless it is itself Html (a fragment built the
 * same way) or wrapped in raw() by code that built it. Arrays are joined.
 * undefined, null and false render as nothing, so `${cond && html`…`}` works.
 *
 * Chosen over JSX (@kitajs/html) because there children are not escaped
 * unless marked `safe`: a platform's error text put on the page unmarked
 * would be markup. Here forgetting is safe, and there is no JSX build step.
 */

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text as HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup our own code produced (an inline SVG, a stylesheet): not escaped. */
export const raw = (markup: string) => new Html(markup);

/** A whole page as a Response, with the headers every page gets. */
export function htmlResponse(body: Html | string, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(String(body), {
    status: init.status ?? 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      ...init.headers,
    },
  });
}
