/**
 * `web_fetch {"url": "…", "max_chars": 20000}`: a page as readable text,
 * with where it came from, its title and whether it was cut. Reached through
 * ./reach.ts (public addresses only, unless the owner allowed a host), read
 * by ./extract.ts, and handed to the model inside the untrusted envelope
 * (src/message/untrusted.ts): a page's words are information, never
 * instructions.
 */
import { Type } from "@sinclair/typebox";
import type { WebSettings } from "../../../config/web.ts";
import { formatBytes } from "../../../kernel/sizes.ts";
import { untrusted } from "../../../message/untrusted.ts";
import { defineTool, type Tool, ToolError } from "../types.ts";
import { extract } from "./extract.ts";
import { guardedFetch, type Resolver, type Transport } from "./reach.ts";

/** How many redirects one fetch follows. */
export const MAX_REDIRECTS = 5;
export const DEFAULT_CHARS = 20_000;
export const MAX_CHARS = 100_000;

export interface WebFetchDeps {
  /** The settings in force (allow_hosts, limits), read at each call. */
  settings(): WebSettings;
  /** Tests: a resolver and a transport of their own. */
  resolve?: Resolver;
  transport?: Transport;
}

export function webFetchTool(deps: WebFetchDeps): Tool {
  return defineTool({
    name: "web_fetch",
    description:
      "Fetch a web page (http or https) and read its main text, as Markdown; plain text and JSON come as they are. Use it for a link the user sent or a result of web_search. The answer gives the final URL after redirects, the title, and says when the text was cut. Pages on this machine or a private network are refused.",
    parameters: Type.Object(
      {
        url: Type.String({ description: "the http(s) URL to fetch", minLength: 1 }),
        max_chars: Type.Optional(
          Type.Integer({ minimum: 500, maximum: MAX_CHARS, description: `how much of the page's text to return (default ${DEFAULT_CHARS})` }),
        ),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      let url: URL;
      try {
        url = new URL(args.url.trim());
      } catch {
        throw new ToolError(`${JSON.stringify(args.url)} is not a URL; give a full http(s) URL`);
      }
      const settings = deps.settings();
      const fetched = await guardedFetch(
        url,
        { maxBytes: settings.maxBytes, maxRedirects: MAX_REDIRECTS, timeoutMs: settings.timeoutMs },
        {
          allowHosts: settings.allowHosts,
          signal: ctx.signal,
          ...(deps.resolve ? { resolve: deps.resolve } : {}),
          ...(deps.transport ? { transport: deps.transport } : {}),
        },
      );
      const final = fetched.finalUrl.href;
      const page = await extract(fetched.body, fetched.contentType, final);
      const limit = args.max_chars ?? DEFAULT_CHARS;
      const whole = `${page.title ? `# ${page.title}\n\n` : ""}${page.text.trim()}`;
      const shown = whole.length > limit ? whole.slice(0, limit) : whole;
      const redirected = final !== fetched.requested.href ? `; redirected from ${fetched.requested.href}` : "";
      const lines = [
        `Fetched ${final} (HTTP ${fetched.status}, ${page.as === "article" ? "main text of an HTML page" : page.as === "page" ? "text of an HTML page" : page.as}${redirected})`,
        untrusted(`web page ${final}`, shown === "" ? "(no text)" : shown),
      ];
      if (whole.length > limit) {
        lines.push(
          `[Cut: this is the first ${limit} of ${whole.length} characters.${limit < MAX_CHARS ? ` Call web_fetch again with a larger max_chars (up to ${MAX_CHARS}) to read more.` : ""}]`,
        );
      }
      if (fetched.cut) lines.push(`[The page is larger than ${formatBytes(settings.maxBytes)}: only its first ${formatBytes(settings.maxBytes)} were read.]`);
      return lines.join("\n");
    },
  });
}
