/**
 * `web_search {"query": "…", "count": 5}` through the backend the owner chose
 * (`[fermix_core.web] search_backend`): the Brave Search API (`GET <brave_url>
 * ?q=…&count=…`, the key in `X-Subscription-Token`, results in
 * `web.results[]` with `title`, `url`, `description`), or a SearXNG
 * instance's JSON API (`GET <searxng_url>/search?q=…&format=json`, results
 * in `results[]` with `title`, `url`, `content`). Results reach the model as
 * title, URL and snippet inside the untrusted envelope
 * (src/message/untrusted.ts). The backend's URL is the owner's own choice, so
 * it is not held to web_fetch's public-address rule (a SearXNG on this
 * machine is usual).
 */
import { Type } from "@sinclair/typebox";
import type { SearchSettings } from "../../../config/web.ts";
import { describeError } from "../../../kernel/errors.ts";
import { faultLine, statusFault } from "../../../kernel/fault-line.ts";
import { untrusted } from "../../../message/untrusted.ts";
import { defineTool, type Tool, ToolError } from "../types.ts";

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

type Backend = Extract<SearchSettings, { kind: "brave" | "searxng" }>;

export const DEFAULT_COUNT = 5;
/** Brave's own limit per request; SearXNG's results are cut to the same. */
export const MAX_COUNT = 20;

/** A snippet as plain text: Brave marks the matched words with <strong>, and both send entities. */
export function plainSnippet(html: string): string {
  const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", "#39": "'", "#x27": "'" };
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(#?\w+);/g, (whole, name: string) => entities[name.toLowerCase()] ?? whole)
    .replace(/\s+/g, " ")
    .trim();
}

/** The request for a query, per backend. */
export function searchRequest(backend: Backend, query: string, count: number): Request {
  if (backend.kind === "brave") {
    const url = new URL(backend.url);
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(count));
    return new Request(url.href, { headers: { accept: "application/json", "x-subscription-token": backend.apiKey } });
  }
  const url = new URL(`${backend.url.replace(/\/+$/, "")}/search`);
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  return new Request(url.href, { headers: { accept: "application/json" } });
}

/** The results in a backend's answer, at most `count`. */
export function searchResults(backend: Backend, body: unknown, count: number): SearchResult[] {
  const list = backend.kind === "brave" ? field(field(body, "web"), "results") : field(body, "results");
  if (!Array.isArray(list)) return [];
  return list
    .map((item) => ({
      title: plainSnippet(String(field(item, "title") ?? "")),
      url: String(field(item, "url") ?? ""),
      snippet: plainSnippet(String(field(item, backend.kind === "brave" ? "description" : "content") ?? "")),
    }))
    .filter((result) => /^https?:\/\//.test(result.url))
    .slice(0, count);
}

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;

export interface WebSearchDeps {
  /** The backend in force; web_search is offered only while there is one. */
  backend(): Backend;
  timeoutMs(): number;
  fetch?: (request: Request, init: { signal: AbortSignal }) => Promise<Response>;
}

export function webSearchTool(deps: WebSearchDeps): Tool {
  return defineTool({
    name: "web_search",
    description:
      "Search the web. Returns each result's title, URL and a snippet; read a page with web_fetch when the snippet is not enough. Use it for anything current or that you do not know.",
    parameters: Type.Object(
      {
        query: Type.String({ minLength: 1, description: "what to search for" }),
        count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COUNT, description: `how many results (default ${DEFAULT_COUNT})` })),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const backend = deps.backend();
      const count = args.count ?? DEFAULT_COUNT;
      const timeoutMs = deps.timeoutMs();
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = AbortSignal.any([ctx.signal, deadline]);
      let response: Response;
      try {
        response = await (deps.fetch ?? ((request, init) => fetch(request, init)))(searchRequest(backend, args.query, count), { signal });
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        if (deadline.aborted) throw new ToolError(`the search backend (${backend.kind}) did not answer within ${Math.round(timeoutMs / 1000)} s`);
        throw new ToolError(`the search backend (${backend.kind}) could not be reached: ${describeError(error)}`);
      }
      if (!response.ok) {
        await response.body?.cancel();
        // SearXNG has no key: its 403 is an instance whose settings do not list the JSON format.
        if (backend.kind === "searxng" && response.status === 403) {
          throw new ToolError(
            "the search backend (searxng) refused the request (HTTP 403): the instance must allow format=json in its settings (search.formats)",
          );
        }
        throw new ToolError(`the search backend (${backend.kind}): ${faultLine({ fault: statusFault(response.status), status: response.status }, "it")}`);
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw new ToolError(
          `the search backend (${backend.kind}) did not answer with JSON${backend.kind === "searxng" ? " (the instance must allow format=json in its settings)" : ""}`,
        );
      }
      const results = searchResults(backend, body, count);
      const source = `web search results for '${args.query.replace(/\s+/g, " ").slice(0, 100)}' (${backend.kind})`;
      if (results.length === 0) return untrusted(source, "No results.");
      const text = results.map((r, i) => `${i + 1}. ${r.title || "(no title)"}\n   ${r.url}${r.snippet ? `\n   ${r.snippet}` : ""}`).join("\n");
      return untrusted(source, text);
    },
  });
}
