/**
 * The provider conformance suite: every wire format (OpenAI Responses, chat
 * completions, Anthropic Messages) passes the same cases, against the
 * loopback fake model server over real HTTP. Waiting is faked (an injected
 * sleep records the delays) so retries cost no time.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createProvider, type ModelRequest, type Provider, type ProviderDeps, ProviderError, type ProviderEvent } from "../../../src/agent/providers/index.ts";
import { type FakeModel, type ModelRequestBody, reply, startFakeModel, type WirePart } from "../../fakes/model-server.ts";

const KEY = "sk-test-secret-key-1234567890";
const hello: ModelRequest = { model: "test-model", input: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }] };

const PATHS = { responses: "/v1/responses", chat: "/v1/chat/completions", anthropic: "/v1/messages" } as const;
/** A 1×1 PNG, as a user or a tool would send it. */
const PIXEL = { mime: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==" };

/** Every image a request carried, as `mime;data`, whichever format put it where. */
function imagesIn(body: ModelRequestBody): string[] {
  const found: string[] = [];
  const fromUrl = (url: string) => {
    const m = /^data:([^;]+);base64,(.*)$/.exec(url);
    if (m) found.push(`${m[1]};${m[2]}`);
  };
  const walk = (parts: unknown): void => {
    if (!Array.isArray(parts)) return;
    for (const part of parts as Array<WirePart & { output?: unknown }>) {
      if (part.type === "input_image" && typeof part.image_url === "string") fromUrl(part.image_url);
      if (part.type === "image_url" && typeof part.image_url === "object") fromUrl(part.image_url.url);
      if (part.type === "image" && part.source) found.push(`${part.source.media_type};${part.source.data}`);
      walk(part.content);
      walk(part.output);
    }
  };
  walk(body.input);
  walk(body.messages);
  return found;
}

for (const api of ["responses", "chat", "anthropic"] as const) {
  describe(`provider conformance: ${api}`, () => {
    let fake: FakeModel;
    let slept: number[];
    const name = `fake-${api}`;

    beforeEach(async () => {
      fake = await startFakeModel();
      slept = [];
    });
    afterEach(async () => {
      await fake.stop();
    });

    function provider(options: { apiKey?: string; baseUrl?: string } & ProviderDeps = {}): Provider {
      const { apiKey, baseUrl, ...deps } = options;
      const config = { api, base_url: baseUrl ?? fake.url, model: "test-model", api_key: apiKey, vision: true, context_window: 8000 };
      return createProvider(name, config, {
        sleep: async (ms) => {
          slept.push(ms);
        },
        random: () => 0.5,
        ...deps,
      });
    }

    async function collect(p: Provider, request: ModelRequest = hello): Promise<ProviderEvent[]> {
      const events: ProviderEvent[] = [];
      for await (const event of p.stream(request)) events.push(event);
      return events;
    }

    /** Run to the end; return the events seen and what was thrown. */
    async function failing(p: Provider, request: ModelRequest = hello): Promise<{ events: ProviderEvent[]; error: unknown }> {
      const events: ProviderEvent[] = [];
      try {
        for await (const event of p.stream(request)) events.push(event);
      } catch (error) {
        return { events, error };
      }
      throw new Error(`expected a failure, got ${JSON.stringify(events)}`);
    }

    const texts = (events: ProviderEvent[]) => events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : []));

    test("streamed text arrives as text_delta in order, then message_done with the full text, then completed", async () => {
      fake.reply(reply.text("Hel", "lo, ", "wor", "ld"));
      const events = await collect(provider());
      expect(texts(events)).toEqual(["Hel", "lo, ", "wor", "ld"]);
      const done = events.find((e) => e.type === "message_done");
      expect(done).toMatchObject({ type: "message_done", text: "Hello, world" });
      const itemIds = new Set(events.flatMap((e) => (e.type === "text_delta" || e.type === "message_done" ? [e.itemId] : [])));
      expect(itemIds.size).toBe(1);
      expect(events.at(-1)).toEqual({ type: "completed", usage: { inputTokens: 10, outputTokens: 5 } });
      expect(fake.requests[0]?.path).toBe(PATHS[api]);
      expect(fake.requests[0]?.body.stream).toBe(true);
    });

    test("the body is read correctly whatever the byte chunking (split frames, split UTF-8)", async () => {
      fake.reply(reply.stream({ text: ["héllo ", "wörld 👋", " ✓"], byteChunks: 3 }));
      const events = await collect(provider());
      expect(texts(events).join("")).toBe("héllo wörld 👋 ✓");
      expect(events.find((e) => e.type === "message_done")).toMatchObject({ text: "héllo wörld 👋 ✓" });
    });

    test("reasoning arrives as reasoning_delta before the text", async () => {
      fake.reply(reply.reasoning(["Thinking ", "hard."], "An", "swer"));
      const events = await collect(provider());
      const reasoning = events.flatMap((e) => (e.type === "reasoning_delta" ? [e.delta] : []));
      expect(reasoning).toEqual(["Thinking ", "hard."]);
      const firstText = events.findIndex((e) => e.type === "text_delta");
      const lastReasoning = events.findLastIndex((e) => e.type === "reasoning_delta");
      expect(lastReasoning).toBeLessThan(firstText);
      expect(events.find((e) => e.type === "message_done")).toMatchObject({ text: "Answer" });
    });

    test("a tool call with arguments split across chunks arrives whole; the next request gets the next reply", async () => {
      const args = { emoji: "👍", note: "a longer argument string, to be cut in pieces" };
      fake.reply(reply.toolCall("react", args, { callId: "call_abc", pieces: 5, text: ["Let me react."] }), reply.text("Done."));
      const p = provider();
      const first = await collect(p);
      const call = first.find((e) => e.type === "tool_call");
      expect(call).toEqual({ type: "tool_call", callId: "call_abc", name: "react", arguments: JSON.stringify(args) });
      expect(first.find((e) => e.type === "message_done")).toMatchObject({ text: "Let me react." });
      expect(first.at(-1)?.type).toBe("completed");

      const second = await collect(p, {
        ...hello,
        input: [
          ...hello.input,
          { type: "function_call", callId: "call_abc", name: "react", arguments: JSON.stringify(args) },
          { type: "function_call_output", callId: "call_abc", output: "ok" },
        ],
      });
      expect(second.find((e) => e.type === "message_done")).toMatchObject({ text: "Done." });
      expect(fake.requests).toHaveLength(2);
      expect(JSON.stringify(fake.requests[1]?.body)).toContain("call_abc");
    });

    test("several tool calls in one response arrive in order", async () => {
      fake.reply(reply.toolCalls({ name: "a", arguments: { n: 1 }, callId: "c1" }, { name: "b", arguments: "{}", callId: "c2" }));
      const events = await collect(provider());
      const calls = events.flatMap((e) => (e.type === "tool_call" ? [[e.callId, e.name, e.arguments]] : []));
      expect(calls).toEqual([
        ["c1", "a", '{"n":1}'],
        ["c2", "b", "{}"],
      ]);
    });

    test("usage is reported on completed", async () => {
      fake.reply(reply.stream({ text: ["x"], usage: { input: 1234, output: 56 } }));
      const events = await collect(provider());
      expect(events.at(-1)).toEqual({ type: "completed", usage: { inputTokens: 1234, outputTokens: 56 } });
    });

    test("an empty completion is completed with no text", async () => {
      fake.reply(reply.empty());
      const events = await collect(provider());
      expect(events.map((e) => e.type)).toEqual(["completed"]);
    });

    test("429 with Retry-After (seconds) is retried after waiting that long", async () => {
      fake.reply(reply.rateLimited(7), reply.text("ok"));
      const events = await collect(provider());
      expect(slept).toEqual([7000]);
      expect(fake.requests).toHaveLength(2);
      expect(events.find((e) => e.type === "message_done")).toMatchObject({ text: "ok" });
    });

    test("429 with Retry-After as an HTTP date waits until then", async () => {
      const now = Date.parse("2030-01-01T00:00:00Z");
      fake.reply(reply.rateLimited("Tue, 01 Jan 2030 00:00:04 GMT"), reply.text("ok"));
      await collect(provider({ now: () => now }));
      expect(slept).toEqual([4000]);
    });

    test("a Retry-After beyond the cap waits only the cap", async () => {
      fake.reply(reply.rateLimited(3600), reply.text("ok"));
      await collect(provider({ limits: { retryAfterCapMs: 30_000 } }));
      expect(slept).toEqual([30_000]);
    });

    test("5xx is retried with exponential backoff, then gives up with a ProviderError naming the provider and status", async () => {
      fake.reply(reply.serverError(503, "upstream overloaded"), reply.serverError(503), reply.serverError(503, "still overloaded"));
      const { error } = await failing(provider({ limits: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 10_000 } }));
      expect(error).toBeInstanceOf(ProviderError);
      const e = error as ProviderError;
      expect(e.status).toBe(503);
      expect(e.message).toContain(`provider "${name}"`);
      expect(e.message).toContain("HTTP 503");
      expect(e.message).toContain("still overloaded");
      expect(e.message).toContain("gave up after 3 attempts");
      expect(fake.requests).toHaveLength(3);
      expect(slept).toEqual([75, 150]); // 100 × 2^(n-1), jitter 0.5 → 75 %
    });

    test("a 4xx is not retried and carries the API's message and code", async () => {
      fake.reply(reply.status(400, "Invalid value for 'model'", undefined, "invalid_model"), reply.text("never"));
      const { error } = await failing(provider());
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).status).toBe(400);
      expect((error as ProviderError).code).toBe("invalid_model");
      expect((error as Error).message).toContain("Invalid value for 'model'");
      expect(fake.requests).toHaveLength(1);
      expect(slept).toEqual([]);
    });

    test("a network error before any event is retried", async () => {
      fake.reply(reply.text("ok"));
      let calls = 0;
      const flaky = (url: string, init: RequestInit) =>
        ++calls === 1 ? Promise.reject(Object.assign(new TypeError("connect refused"), { code: "ConnectionRefused" })) : fetch(url, init);
      const events = await collect(provider({ fetch: flaky }));
      expect(calls).toBe(2);
      expect(slept).toHaveLength(1);
      expect(events.find((e) => e.type === "message_done")).toMatchObject({ text: "ok" });
    });

    test("an unreachable server is a ProviderError that says where", async () => {
      const { error } = await failing(provider({ baseUrl: "http://127.0.0.1:1/v1", limits: { maxRetries: 0 } }));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as Error).message).toContain(`provider "${name}"`);
      expect((error as Error).message).toContain("could not reach POST http://127.0.0.1:1/v1/");
    });

    test("a connection dropped mid-stream is a ProviderError, not retried once events were yielded", async () => {
      fake.reply(reply.drop("Hel", "lo"), reply.text("never"));
      const { events, error } = await failing(provider());
      expect(texts(events)).toEqual(["Hel", "lo"]);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as Error).message).toContain("dropped mid-stream");
      expect(fake.requests).toHaveLength(1);
      expect(fake.pending).toBe(1);
    });

    test("aborting mid-stream rejects with AbortError and closes the HTTP request", async () => {
      fake.reply(reply.hang("partial"));
      const controller = new AbortController();
      const seen: ProviderEvent[] = [];
      const run = (async () => {
        for await (const event of provider().stream({ ...hello, signal: controller.signal })) {
          seen.push(event);
          if (event.type === "text_delta") controller.abort();
        }
      })();
      const error = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as Error).name).toBe("AbortError");
      expect(error).not.toBeInstanceOf(ProviderError);
      expect(texts(seen)).toEqual(["partial"]);
      await withTimeout(fake.requests[0]!.untilAborted, 2000, "the fake never saw the request closed");
      expect(fake.requests[0]?.aborted).toBe(true);
    });

    test("aborting before the response headers rejects with AbortError and closes the request", async () => {
      fake.reply(reply.stall());
      const controller = new AbortController();
      const run = collect(provider(), { ...hello, signal: controller.signal });
      await fake.waitForRequests(1);
      controller.abort();
      const error = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as Error).name).toBe("AbortError");
      await withTimeout(fake.requests[0]!.untilAborted, 2000, "the fake never saw the request closed");
    });

    test("aborting during a retry wait rejects with AbortError promptly (real sleep)", async () => {
      fake.reply(reply.rateLimited(30), reply.text("never"));
      const controller = new AbortController();
      const p = createProvider(name, { api, base_url: fake.url, model: "m", vision: true, context_window: 8000 });
      const started = performance.now();
      const run = collect(p, { ...hello, signal: controller.signal });
      await fake.waitForRequests(1);
      setTimeout(() => controller.abort(), 20);
      const error = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as Error).name).toBe("AbortError");
      expect(performance.now() - started).toBeLessThan(2000);
      expect(fake.requests).toHaveLength(1);
    });

    test("an already aborted signal sends nothing", async () => {
      const { error } = await failing(provider(), { ...hello, signal: AbortSignal.abort() });
      expect((error as Error).name).toBe("AbortError");
      expect(fake.requests).toHaveLength(0);
    });

    test("stopping early (break) closes the HTTP request", async () => {
      fake.reply(reply.hang("a", "b"));
      for await (const event of provider().stream(hello)) if (event.type === "text_delta") break;
      await withTimeout(fake.requests[0]!.untilAborted, 2000, "the fake never saw the request closed");
    });

    test("a stream that goes silent times out with a ProviderError (no retry once events came)", async () => {
      fake.reply(reply.hang("partial"), reply.text("never"));
      const { error } = await failing(provider({ limits: { idleTimeoutMs: 150 } }));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("idle_timeout");
      expect((error as ProviderError).fault).toBe("cut_off");
      expect((error as Error).message).toContain("went silent for 0.15 s");
      expect(fake.requests).toHaveLength(1);
      await withTimeout(fake.requests[0]!.untilAborted, 2000, "the timed-out request was left open");
    });

    test("no response headers in time is a timeout, retried, then a ProviderError", async () => {
      fake.reply(reply.stall(), reply.stall());
      const { error } = await failing(provider({ limits: { connectTimeoutMs: 100, maxRetries: 1 } }));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("connect_timeout");
      expect((error as ProviderError).fault).toBe("unreachable");
      expect((error as ProviderError).attempts).toBe(2);
      expect((error as Error).message).toContain("no response from POST");
      expect((error as Error).message).toContain("gave up after 2 attempts");
      expect(fake.requests).toHaveLength(2);
    });

    test("a model that answers the request but never starts its answer fails at the first-byte timeout, not retried", async () => {
      fake.reply(reply.silent(), reply.text("never"));
      const started = performance.now();
      const { error } = await failing(provider({ limits: { connectTimeoutMs: 1000, firstByteTimeoutMs: 150, idleTimeoutMs: 5000 } }));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("first_byte_timeout");
      expect((error as ProviderError).fault).toBe("timeout");
      expect((error as Error).message).toContain("no answer from POST");
      // Waiting again would only repeat the silence: one request, and the failure comes well before the idle timeout.
      expect(fake.requests).toHaveLength(1);
      expect(performance.now() - started).toBeLessThan(4000);
      await withTimeout(fake.requests[0]!.untilAborted, 2000, "the timed-out request was left open");
    });

    test("an error event mid-stream is a ProviderError with the API's message and code", async () => {
      fake.reply(reply.error("The model is overloaded", "server_is_overloaded", "par"));
      const { events, error } = await failing(provider());
      expect(texts(events)).toEqual(["par"]);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("server_is_overloaded");
      expect((error as Error).message).toContain("The model is overloaded");
      expect((error as Error).message).toContain(`provider "${name}"`);
    });

    test("a refused key reported inside a 200 stream is the auth class, not a server fault", async () => {
      fake.reply(reply.error("Incorrect API key provided", "invalid_api_key"));
      const { error } = await failing(provider());
      expect((error as ProviderError).fault).toBe("auth");
      fake.reply(reply.error("The model is overloaded", "server_is_overloaded"));
      expect(((await failing(provider())).error as ProviderError).fault).toBe("server");
    });

    test("a response cut short by the token limit is a ProviderError coded max_output_tokens", async () => {
      fake.reply(reply.incomplete("trunc"));
      const { error } = await failing(provider());
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("max_output_tokens");
    });

    test("the key is sent only when one is configured, in the header the format takes", async () => {
      fake.reply(reply.text("a"), reply.text("b"));
      await collect(provider({ apiKey: KEY }));
      await collect(provider());
      const [header, value] = api === "anthropic" ? ["x-api-key", KEY] : ["authorization", `Bearer ${KEY}`];
      expect(fake.requests[0]?.headers[header]).toBe(value);
      expect(fake.requests[1]?.headers[header]).toBeUndefined();
      expect(fake.requests[0]?.headers.authorization === undefined || fake.requests[0]?.headers["x-api-key"] === undefined).toBe(true);
      expect(fake.requests[0]?.headers["content-type"]).toBe("application/json");
    });

    test("a 401 is the auth class at once: not retried, the API's words kept for the log", async () => {
      fake.reply(reply.status(401, "invalid x-api-key"), reply.text("never"));
      const { error } = await failing(provider({ apiKey: KEY }));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).fault).toBe("auth");
      expect((error as ProviderError).status).toBe(401);
      expect((error as Error).message).toContain("invalid x-api-key");
      expect(fake.requests).toHaveLength(1);
      expect(slept).toEqual([]);
    });

    test("overloaded (HTTP 529) is retried with backoff, then answers", async () => {
      fake.reply(reply.overloaded(), reply.text("ok after the overload"));
      const events = await collect(provider());
      expect(fake.requests).toHaveLength(2);
      expect(slept).toHaveLength(1);
      expect(events.find((e) => e.type === "message_done")).toMatchObject({ text: "ok after the overload" });
    });

    test("an image in the user's message reaches the model as an image, beside the text", async () => {
      fake.reply(reply.text("a cat"));
      await collect(provider(), {
        ...hello,
        input: [
          {
            type: "message",
            role: "user",
            content: [
              { type: "text", text: "what is this?" },
              { type: "image", ...PIXEL },
            ],
          },
        ],
      });
      expect(imagesIn(fake.requests[0]!.body)).toEqual([`${PIXEL.mime};${PIXEL.data}`]);
      expect(JSON.stringify(fake.requests[0]!.body)).toContain("what is this?");
    });

    test("an image a tool answered with reaches the model after the call", async () => {
      fake.reply(reply.text("I see the screen"));
      await collect(provider(), {
        ...hello,
        input: [
          ...hello.input,
          { type: "function_call", callId: "call_shot", name: "screenshot", arguments: "{}" },
          { type: "function_call_output", callId: "call_shot", output: "the screen", images: [PIXEL] },
        ],
      });
      expect(imagesIn(fake.requests[0]!.body)).toEqual([`${PIXEL.mime};${PIXEL.data}`]);
      expect(JSON.stringify(fake.requests[0]!.body)).toContain("call_shot");
    });

    test("the API key never appears in an error message, even when the server echoes it", async () => {
      const p = provider({ apiKey: KEY, limits: { maxRetries: 1, idleTimeoutMs: 150 } });
      const scenarios = [
        reply.status(401, `Incorrect API key provided: ${KEY}`, undefined, "invalid_api_key"),
        reply.serverError(500, `bad key ${KEY}`),
        reply.serverError(500, `bad key ${KEY}`),
        reply.error(`key ${KEY} is over quota`, "quota"),
        reply.drop("x"),
        reply.hang("x"),
      ];
      fake.reply(...scenarios);
      const messages: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { error } = await failing(p);
        expect(error).toBeInstanceOf(ProviderError);
        messages.push((error as Error).message);
      }
      for (const message of messages) expect(message).not.toContain(KEY);
      expect(messages[0]).toContain("HTTP 401");
      expect(messages[0]).toContain("[redacted]");
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(what)), ms))]);
}
