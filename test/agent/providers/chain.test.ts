/**
 * Failover between providers, over real HTTP against two fake model servers
 * (the primary speaking one format, the fallback another): what moves a
 * request on, what never does, how a turn stays with the provider that
 * answered it, and what each provider's outcome reports.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type ChainLink, failsOver, ProviderChain } from "../../../src/agent/providers/chain.ts";
import { createProvider, type ModelRequest, ProviderError, type ProviderEvent, type ProviderSettings } from "../../../src/agent/providers/index.ts";
import { type FakeModel, reply, startFakeModel } from "../../fakes/model-server.ts";

const hello: ModelRequest = { model: "asked-for", input: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }] };

let primary: FakeModel;
let fallback: FakeModel;
let outcomes: Array<[string, string]>;
let failovers: Array<[string, string, string]>;
beforeEach(async () => {
  primary = await startFakeModel();
  fallback = await startFakeModel();
  outcomes = [];
  failovers = [];
});
afterEach(async () => {
  await primary.stop();
  await fallback.stop();
});

const settings = (api: ProviderSettings["api"], base_url: string, model: string): ProviderSettings => ({
  api,
  base_url,
  model,
  vision: true,
  context_window: 8000,
});

/** The primary (Anthropic's API) and the fallback (Responses), as the supervisor builds them: the primary knows a fallback waits. */
function chain(options: { primaryUrl?: string; retryAfterCapMs?: number } = {}): ProviderChain {
  const sleep = async () => {};
  const links: ChainLink[] = [
    {
      name: "claude",
      model: "claude-model",
      provider: createProvider("claude", settings("anthropic", options.primaryUrl ?? primary.url, "claude-model"), {
        fallbackWaiting: true,
        sleep,
        limits: { maxRetries: 2, ...(options.retryAfterCapMs !== undefined ? { retryAfterCapMs: options.retryAfterCapMs } : {}) },
      }),
    },
    { name: "openai", model: "gpt-model", provider: createProvider("openai", settings("responses", fallback.url, "gpt-model"), { sleep }) },
  ];
  return new ProviderChain(links, {
    onOutcome: (name, error) => outcomes.push([name, error ? error.fault : "ok"]),
    onFailover: (from, to, error) => failovers.push([from, to, error.fault]),
  });
}

async function run(provider: { stream(r: ModelRequest): AsyncIterable<ProviderEvent> }, request = hello): Promise<{ text: string; error?: unknown }> {
  let text = "";
  try {
    for await (const event of provider.stream(request)) if (event.type === "text_delta") text += event.delta;
  } catch (error) {
    return { text, error };
  }
  return { text };
}

describe("which failures move a request to the next provider", () => {
  test("the transient classes do; a refused key, a spent quota, a refused request and an answer cut off mid-way do not", () => {
    const moves = (status: number | undefined, code?: string) => failsOver(new ProviderError("x", status, code));
    expect([moves(undefined, "ConnectionRefused"), moves(503), moves(529), moves(429), moves(undefined, "first_byte_timeout")]).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(moves(undefined, "dropped")).toBe(true);
    expect([moves(401), moves(403), moves(undefined, "insufficient_quota"), moves(400), moves(undefined, "max_output_tokens")]).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("a chain of two", () => {
  test("a primary that refuses connections: the fallback answers with its own model, the primary asked once (no retries with a fallback waiting)", async () => {
    fallback.reply(reply.text("from the fallback"));
    const { text, error } = await run(chain({ primaryUrl: "http://127.0.0.1:1/v1" }));
    expect(error).toBeUndefined();
    expect(text).toBe("from the fallback");
    expect(fallback.requests).toHaveLength(1);
    expect(fallback.requests[0]!.body.model).toBe("gpt-model");
    expect(failovers).toEqual([["claude", "openai", "unreachable"]]);
    expect(outcomes).toEqual([
      ["claude", "unreachable"],
      ["openai", "ok"],
    ]);
  });

  test("a primary overloaded through its retries: the fallback answers, once", async () => {
    primary.reply(reply.overloaded(), reply.overloaded(), reply.overloaded());
    fallback.reply(reply.text("answer"));
    const { text } = await run(chain());
    expect(text).toBe("answer");
    expect(primary.requests).toHaveLength(3);
    expect(primary.requests[0]!.body.model).toBe("claude-model");
    expect(fallback.requests).toHaveLength(1);
  });

  test("a 429 asking for a wait past the cap is handed to the fallback at once; one within the cap is waited out", async () => {
    primary.reply(reply.rateLimited(3600));
    fallback.reply(reply.text("no wait"));
    expect((await run(chain({ retryAfterCapMs: 60_000 }))).text).toBe("no wait");
    expect(primary.requests).toHaveLength(1);

    primary.reply(reply.rateLimited(2), reply.text("after the wait"));
    expect((await run(chain({ retryAfterCapMs: 60_000 }))).text).toBe("after the wait");
    expect(fallback.requests).toHaveLength(1);
  });

  test("an overloaded error inside a stream that has shown nothing moves on", async () => {
    primary.reply(reply.error("Overloaded", "overloaded_error"));
    fallback.reply(reply.text("steady"));
    expect((await run(chain())).text).toBe("steady");
  });

  test("a fault after the answer started is not retried elsewhere: the reader keeps what came, once", async () => {
    primary.reply(reply.drop("Half an ans"));
    fallback.reply(reply.text("never"));
    const { text, error } = await run(chain());
    expect(text).toBe("Half an ans");
    expect((error as ProviderError).message).toContain("dropped mid-stream");
    expect(fallback.requests).toHaveLength(0);
    expect(failovers).toEqual([]);
  });

  test("a refused key is said as the auth class, not hidden behind the fallback", async () => {
    primary.reply(reply.status(401, "invalid x-api-key"));
    fallback.reply(reply.text("never"));
    const { error } = await run(chain());
    expect((error as ProviderError).fault).toBe("auth");
    expect(fallback.requests).toHaveLength(0);
    expect(outcomes).toEqual([["claude", "auth"]]);
  });

  test("when every provider fails, the last one's error is the request's", async () => {
    fallback.reply(reply.status(500, "down too"), reply.status(500), reply.status(500));
    const { error } = await run(chain({ primaryUrl: "http://127.0.0.1:1/v1" }));
    expect((error as ProviderError).message).toContain('provider "openai"');
    expect((error as ProviderError).status).toBe(500);
    expect(outcomes.map(([name, outcome]) => `${name}:${outcome}`)).toEqual(["claude:unreachable", "openai:server"]);
  });

  test("a cancelled request says nothing about the provider and moves nowhere", async () => {
    primary.reply(reply.stall());
    const controller = new AbortController();
    const running = run(chain(), { ...hello, signal: controller.signal });
    await primary.waitForRequests(1);
    controller.abort();
    expect(((await running).error as Error).name).toBe("AbortError");
    expect(outcomes).toEqual([]);
    expect(fallback.requests).toHaveLength(0);
  });
});

describe("a turn's view", () => {
  test("once the fallback answered, the turn's later steps go to it first; the next turn starts from the primary", async () => {
    const providers = chain({ primaryUrl: "http://127.0.0.1:1/v1" });
    fallback.reply(reply.toolCall("clock", {}), reply.text("It is nine."));
    const turn = providers.forTurn();
    expect(turn.answeredBy).toBeUndefined();
    await run(turn);
    expect(turn.answeredBy).toBe("openai");
    await run(turn);
    expect(failovers).toHaveLength(1);
    expect(fallback.requests).toHaveLength(2);

    // The primary is back: a new turn uses it again.
    const back = chain();
    primary.reply(reply.text("primary again"));
    const next = back.forTurn();
    expect((await run(next)).text).toBe("primary again");
    expect(next.answeredBy).toBe("claude");
  });

  test("a turn that failed names the provider that failed it last", async () => {
    primary.reply(reply.status(401, "no"));
    const turn = chain().forTurn();
    await run(turn);
    expect(turn.answeredBy).toBe("claude");
  });
});
