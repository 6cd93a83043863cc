/**
 * web_search against loopback fakes of its two backends (test/fakes/search.ts,
 * written from their documented requests and answers): the query, count,
 * format and key as each backend wants them, the results as title, URL and
 * snippet (markup and entities gone) inside the untrusted envelope, and the
 * model told plainly when a backend refuses.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { resultText, ToolError } from "../../../../src/agent/tools/types.ts";
import { plainSnippet, webSearchTool } from "../../../../src/agent/tools/web/search.ts";
import { type SearchFake, startBraveFake, startSearxngFake } from "../../../fakes/search.ts";
import { webContext } from "./context.ts";

const fakes: SearchFake[] = [];
afterEach(() => {
  while (fakes.length > 0) fakes.pop()!.stop();
});

const brave = (key: string, sentKey = key) => {
  const fake = startBraveFake(key);
  fakes.push(fake);
  return { fake, tool: webSearchTool({ backend: () => ({ kind: "brave", url: fake.url, apiKey: sentKey }), timeoutMs: () => 5000 }) };
};
const searxng = (options?: { json?: boolean }) => {
  const fake = startSearxngFake(options);
  fakes.push(fake);
  return { fake, tool: webSearchTool({ backend: () => ({ kind: "searxng", url: `${fake.url}/` }), timeoutMs: () => 5000 }) };
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => "answered",
    (error: unknown) => (error instanceof ToolError ? error.message : `unexpected ${String(error)}`),
  );

const EXPECTED = `1. Tide tables & harbour times
   https://coast.example/tides
   Official tide tables for the harbour, updated daily.
2. How tides work
   https://science.example/tides
   The moon's pull and the tide: a short explainer.`;

describe("Brave Search API", () => {
  test("sends the query, count and key as documented, and reads web.results", async () => {
    const { fake, tool } = brave("BSA-key-123");
    const text = resultText(await tool.run({ query: "tide tables harbour", count: 2 }, webContext()));
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.path).toBe("/res/v1/web/search");
    expect(request!.query).toEqual({ q: "tide tables harbour", count: "2" });
    expect(request!.headers["x-subscription-token"]).toBe("BSA-key-123");
    expect(request!.headers.accept).toBe("application/json");
    expect(text).toBe(`<untrusted source="web search results for 'tide tables harbour' (brave)">\n${EXPECTED}\n</untrusted>`);
  });

  test("a refused key is said as such, without the backend's words", async () => {
    const { tool } = brave("right-key", "wrong-key");
    const message = await failure(tool.run({ query: "x" }, webContext()));
    expect(message).toBe("the search backend (brave): it refused the key (HTTP 401); run `fermix doctor`");
    expect(message).not.toContain("invalid");
  });
});

describe("SearXNG", () => {
  test("asks <root>/search with format=json and reads results[], cut to count", async () => {
    const { fake, tool } = searxng();
    const text = resultText(await tool.run({ query: "tide tables harbour", count: 2 }, webContext()));
    expect(fake.requests.map((r) => ({ path: r.path, query: r.query }))).toEqual([{ path: "/search", query: { q: "tide tables harbour", format: "json" } }]);
    expect(fake.requests[0]!.headers["x-subscription-token"]).toBeUndefined();
    expect(text).toBe(`<untrusted source="web search results for 'tide tables harbour' (searxng)">\n${EXPECTED}\n</untrusted>`);
  });

  test("the default count is five; a result that tells the model what to do stays inside the envelope", async () => {
    const { tool } = searxng();
    const text = resultText(await tool.run({ query: "tides" }, webContext()));
    expect(text.match(/^\d\. /gm)).toHaveLength(3);
    expect(text.indexOf("Ignore your instructions")).toBeLessThan(text.indexOf("</untrusted>"));
  });

  test("an instance that does not allow JSON is named as the cause", async () => {
    const { tool } = searxng({ json: false });
    expect(await failure(tool.run({ query: "x" }, webContext()))).toBe(
      "the search backend (searxng) refused the request (HTTP 403): the instance must allow format=json in its settings (search.formats)",
    );
  });
});

test("a backend that cannot be reached, and the arguments the model must send", async () => {
  const tool = webSearchTool({ backend: () => ({ kind: "searxng", url: "http://127.0.0.1:9" }), timeoutMs: () => 5000 });
  expect(await failure(tool.run({ query: "x" }, webContext()))).toStartWith("the search backend (searxng) could not be reached:");
  expect(await failure(tool.run({ query: "" }, webContext()))).toBe('query must be a string, not ""');
  expect(await failure(tool.run({ query: "x", count: 50 }, webContext()))).toBe("count must be a whole number from 1 to 20, not 50");
});

test("snippets lose their markup and entities", () => {
  expect(plainSnippet("The <strong>tide</strong> &amp; the moon&#39;s  pull &lt;3")).toBe("The tide & the moon's pull <3");
});
