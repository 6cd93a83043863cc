/** The shared HTTP layer: Retry-After, backoff, error bodies, redaction, and the retry rules. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { apiError, backoffDelay, DEFAULT_LIMITS, parseRetryAfter, providerError, sleep, streamSse, withDefaults } from "../../../src/agent/providers/http.ts";
import { type FakeModel, reply, startFakeModel } from "../../fakes/model-server.ts";

describe("parseRetryAfter", () => {
  const now = Date.parse("2030-01-01T00:00:00Z");
  const h = (init: Record<string, string>) => new Headers(init);

  test("delta-seconds, whole or fractional", () => {
    expect(parseRetryAfter(h({ "retry-after": "7" }), now)).toBe(7000);
    expect(parseRetryAfter(h({ "retry-after": "0.5" }), now)).toBe(500);
  });

  test("an HTTP date, relative to now; a past date is zero", () => {
    expect(parseRetryAfter(h({ "retry-after": "Tue, 01 Jan 2030 00:00:30 GMT" }), now)).toBe(30_000);
    expect(parseRetryAfter(h({ "retry-after": "Mon, 31 Dec 2029 23:00:00 GMT" }), now)).toBe(0);
  });

  test("OpenAI's retry-after-ms wins", () => {
    expect(parseRetryAfter(h({ "retry-after-ms": "250", "retry-after": "7" }), now)).toBe(250);
  });

  test("absent or unreadable is undefined", () => {
    expect(parseRetryAfter(h({}), now)).toBeUndefined();
    expect(parseRetryAfter(h({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(h({ "retry-after": "-3" }), now)).toBeUndefined();
  });
});

describe("backoffDelay", () => {
  const limits = { ...DEFAULT_LIMITS, baseDelayMs: 100, maxDelayMs: 1000 };

  test("doubles per attempt, jittered between half and all of it, capped", () => {
    expect(backoffDelay(1, limits, () => 0)).toBe(50);
    expect(backoffDelay(1, limits, () => 0.999999)).toBe(100);
    expect(backoffDelay(3, limits, () => 0)).toBe(200);
    expect(backoffDelay(10, limits, () => 0.999999)).toBe(1000);
  });
});

describe("apiError", () => {
  test("OpenAI's error object", () => {
    expect(apiError('{"error":{"message":"Bad key","type":"invalid_request_error","code":"invalid_api_key"}}')).toEqual({
      message: "Bad key",
      code: "invalid_api_key",
    });
  });

  test("the type stands in for a missing code", () => {
    expect(apiError('{"error":{"message":"Slow down","type":"rate_limit_error","code":null}}')).toEqual({ message: "Slow down", code: "rate_limit_error" });
  });

  test("Ollama's error string and other shapes", () => {
    expect(apiError('{"error":"model \\"llama9\\" not found"}')).toEqual({ message: 'model "llama9" not found' });
    expect(apiError('{"detail":"Not Found"}')).toEqual({ message: "Not Found" });
  });

  test("plain text, trimmed and shortened; empty is nothing", () => {
    expect(apiError("  upstream connect error  ")).toEqual({ message: "upstream connect error" });
    expect(apiError("x".repeat(1000)).message).toHaveLength(300);
    expect(apiError("")).toEqual({});
  });
});

describe("providerError", () => {
  test("names the provider and scrubs every copy of the key", () => {
    const error = providerError({ provider: "openai", apiKey: "sk-123456" }, "echo sk-123456 and sk-123456", 401, "invalid_api_key");
    expect(error.message).toBe('provider "openai" failed: echo [redacted] and [redacted]');
    expect(error.status).toBe(401);
    expect(error.code).toBe("invalid_api_key");
  });
});

describe("sleep", () => {
  test("rejects with AbortError as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const started = performance.now();
    const waiting = sleep(10_000, controller.signal);
    setTimeout(() => controller.abort(), 10);
    const error = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("streamSse against the fake", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await fake.stop();
  });

  const call = () => ({ provider: "p", url: `${fake.url}/chat/completions`, body: { model: "m", stream: true } });
  const drain = async (iterable: AsyncIterable<unknown>) => {
    for await (const _ of iterable);
  };

  test("a spent quota (429 insufficient_quota) is not retried", async () => {
    fake.reply(reply.status(429, "You exceeded your current quota", undefined, "insufficient_quota"), reply.text("never"));
    const error = await drain(streamSse(call(), { sleep: async () => {} })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toContain("exceeded your current quota");
    expect(fake.requests).toHaveLength(1);
  });

  test("onRetry hears of each retry, with the delay and the reason", async () => {
    const retries: Array<{ attempt: number; delayMs: number; reason: string }> = [];
    fake.reply(reply.rateLimited(2), reply.serverError(502), reply.text("ok"));
    await drain(
      streamSse(call(), {
        sleep: async () => {},
        random: () => 0,
        limits: { baseDelayMs: 100 },
        onRetry: ({ attempt, delayMs, reason }) => retries.push({ attempt, delayMs, reason }),
      }),
    );
    expect(retries.map((r) => [r.attempt, r.delayMs])).toEqual([
      [1, 2000],
      [2, 100],
    ]);
    expect(retries[0]?.reason).toContain('provider "p" failed: HTTP 429');
  });

  test("sends JSON, asks for an event stream, and says who it is", async () => {
    fake.reply(reply.text("ok"));
    await drain(streamSse(call()));
    const headers = fake.requests[0]?.headers ?? {};
    expect(headers["content-type"]).toBe("application/json");
    expect(headers.accept).toBe("text/event-stream");
    expect(headers["user-agent"]).toStartWith("fermix/");
    expect(headers.authorization).toBeUndefined();
  });

  test("the error names the URL without its credentials or query", async () => {
    const url = fake.url.replace("http://", "http://user:pw@");
    fake.reply(reply.status(404, "nope"));
    const error = await drain(streamSse({ ...call(), url: `${url}/chat/completions?key=secret` })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toContain(`from POST ${fake.url}/chat/completions: nope`);
    expect((error as Error).message).not.toContain("secret");
    expect((error as Error).message).not.toContain("pw");
  });
});

describe("withDefaults", () => {
  test("fills in what is missing, undefined or negative", () => {
    const limits = withDefaults({ idleTimeoutMs: 5, connectTimeoutMs: undefined, maxRetries: -1 });
    expect(limits).toEqual({ ...DEFAULT_LIMITS, idleTimeoutMs: 5 });
  });
});
