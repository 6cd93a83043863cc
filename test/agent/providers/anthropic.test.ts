/**
 * What only Anthropic's Messages API has, beyond the conformance suite: its
 * request (the version header, the key in x-api-key or as a Bearer token, a
 * token limit it requires, the stable prefix marked for caching, a step's
 * calls and their results as one assistant and one user message, thinking
 * handed back within a tool loop) and the events of its stream (signed
 * thinking, errors by type, why an answer stopped short).
 */
import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { MainAgent } from "../../../src/agent/agent.ts";
import { ANTHROPIC_VERSION, anthropicBody, anthropicMessages, defaultMaxTokens, parseAnthropicStream } from "../../../src/agent/providers/anthropic.ts";
import { createProvider, type ModelRequest, ProviderError, type ProviderEvent, type ProviderSettings } from "../../../src/agent/providers/index.ts";
import type { SseEvent } from "../../../src/agent/providers/sse.ts";
import { defineTool, type ToolContext } from "../../../src/agent/tools/types.ts";
import { ConversationStore } from "../../../src/store/conversations.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { type FakeModel, reply, startFakeModel, type WirePart } from "../../fakes/model-server.ts";

const KEY = "sk-ant-test-0123456789";
const settings = (extra: Partial<ProviderSettings> = {}): ProviderSettings => ({
  api: "anthropic",
  base_url: "http://127.0.0.1:1/v1",
  model: "claude-sonnet-4-5",
  vision: true,
  context_window: 200_000,
  ...extra,
});
const hello: ModelRequest = { model: "claude-sonnet-4-5", input: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }] };

/** Frames as the stream would send them. */
const frames = (...events: Array<Record<string, unknown>>): AsyncIterable<SseEvent> =>
  (async function* () {
    for (const event of events) yield { event: String(event.type), data: JSON.stringify(event) };
  })();

async function parse(...events: Array<Record<string, unknown>>): Promise<{ events: ProviderEvent[]; error?: unknown }> {
  const out: ProviderEvent[] = [];
  try {
    for await (const event of parseAnthropicStream(frames(...events), { provider: "claude" })) out.push(event);
  } catch (error) {
    return { events: out, error };
  }
  return { events: out };
}

const start = (usage: Record<string, number> = { input_tokens: 10, output_tokens: 1 }) => ({
  type: "message_start",
  message: { id: "msg_1", type: "message", role: "assistant", content: [], stop_reason: null, usage },
});
const stop = (stop_reason = "end_turn", output_tokens = 5) => [
  { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } },
  { type: "message_stop" },
];

describe("the request", () => {
  test("a token limit always: configured, else the model's sensible default, and a request's own limit wins", () => {
    expect(anthropicBody(hello, settings()).max_tokens).toBe(16_384);
    expect(anthropicBody(hello, settings({ max_tokens: 2000 })).max_tokens).toBe(2000);
    expect(anthropicBody({ ...hello, maxOutputTokens: 300 }, settings({ max_tokens: 2000 })).max_tokens).toBe(300);
    expect(defaultMaxTokens("claude-3-haiku-20240307")).toBe(4096);
    expect(defaultMaxTokens("claude-3-5-haiku-latest")).toBe(8192);
    expect(defaultMaxTokens("claude-opus-4-1")).toBe(16_384);
  });

  test("thinking is asked for only with a budget, and the limit leaves room to answer after it", () => {
    expect(anthropicBody(hello, settings()).thinking).toBeUndefined();
    const body = anthropicBody({ ...hello, maxOutputTokens: 1000 }, settings({ thinking_budget_tokens: 4000 }));
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 4000 });
    expect(body.max_tokens as number).toBeGreaterThan(4000);
  });

  test("the persona heads the system prompt marked for caching; what changes each turn follows unmarked; the last tool closes the cached prefix", () => {
    const instructions = "You are Fermix, the persona.\n\n## This turn\n- Current time: now.";
    const body = anthropicBody(
      {
        ...hello,
        instructions,
        stableInstructions: "You are Fermix, the persona.".length,
        tools: [
          { name: "a", description: "first", parameters: { type: "object" } },
          { name: "b", description: "second", parameters: { type: "object", properties: { x: { type: "string" } } } },
        ],
      },
      settings(),
    );
    expect(body.system).toEqual([
      { type: "text", text: "You are Fermix, the persona.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "\n\n## This turn\n- Current time: now." },
    ]);
    expect(body.tools).toEqual([
      { name: "a", description: "first", input_schema: { type: "object" } },
      { name: "b", description: "second", input_schema: { type: "object", properties: { x: { type: "string" } } }, cache_control: { type: "ephemeral" } },
    ]);
    // Without a stable part named, the whole prompt is the cached prefix.
    expect(anthropicBody({ ...hello, instructions: "Summarise." }, settings()).system).toEqual([
      { type: "text", text: "Summarise.", cache_control: { type: "ephemeral" } },
    ]);
  });

  test("a step's reasoning, text and calls are one assistant message; their results one user message; images where they belong", () => {
    const messages = anthropicMessages([
      {
        type: "message",
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", mime: "image/jpeg", data: "AAAA" },
        ],
      },
      { type: "reasoning", text: "I should look twice.", signature: "sig-1" },
      { type: "message", role: "assistant", content: [{ type: "text", text: "Looking." }] },
      { type: "function_call", callId: "t1", name: "look", arguments: '{"where":"left"}' },
      { type: "function_call", callId: "t2", name: "look", arguments: "not json" },
      { type: "function_call_output", callId: "t1", output: "a tree", images: [{ mime: "image/png", data: "BBBB" }] },
      { type: "function_call_output", callId: "t2", output: "error: the arguments were not valid JSON" },
    ]);
    expect(messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "AAAA" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should look twice.", signature: "sig-1" },
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "t1", name: "look", input: { where: "left" } },
          { type: "tool_use", id: "t2", name: "look", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [
              { type: "text", text: "a tree" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "BBBB" } },
            ],
          },
          { type: "tool_result", tool_use_id: "t2", content: "error: the arguments were not valid JSON" },
        ],
      },
    ]);
  });

  test("a history that starts with the assistant (a job's result) gets a user turn first; empty text is left out; a redacted block goes back as it came", () => {
    const messages = anthropicMessages([
      { type: "message", role: "assistant", content: [{ type: "text", text: "[scheduled] It is 9:00." }] },
      { type: "message", role: "user", content: [{ type: "text", text: "" }] },
      { type: "message", role: "user", content: [{ type: "text", text: "thanks" }] },
      { type: "reasoning", text: "", data: "opaque-redacted" },
    ]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(messages[0]!.content).toEqual([{ type: "text", text: "(earlier in this conversation)" }]);
    expect(messages[2]!.content).toEqual([{ type: "text", text: "thanks" }]);
    expect(messages[3]!.content).toEqual([{ type: "redacted_thinking", data: "opaque-redacted" }]);
  });
});

describe("over HTTP", () => {
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await fake.stop();
  });

  test("the version header on every request, the key in x-api-key (or as a Bearer token when configured), never both", async () => {
    fake.reply(reply.text("a"), reply.text("b"));
    for (const auth_header of [undefined, "bearer"] as const) {
      const provider = createProvider("claude", settings({ base_url: fake.url, api_key: KEY, ...(auth_header ? { auth_header } : {}) }));
      for await (const _ of provider.stream(hello));
    }
    const [plain, bearer] = fake.requests;
    expect(plain!.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
    expect(plain!.headers["x-api-key"]).toBe(KEY);
    expect(plain!.headers.authorization).toBeUndefined();
    expect(bearer!.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
    expect(bearer!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(bearer!.headers["x-api-key"]).toBeUndefined();
    expect(plain!.body.max_tokens).toBe(16_384);
  });

  test("a refused key reported inside the stream (authentication_error) is the auth class; overloaded_error is a server fault", async () => {
    fake.reply(reply.error("invalid x-api-key", "authentication_error"), reply.error("Overloaded", "overloaded_error"));
    const provider = createProvider("claude", settings({ base_url: fake.url, api_key: KEY }), { limits: { maxRetries: 0 } });
    const faults: string[] = [];
    for (let i = 0; i < 2; i++) {
      try {
        for await (const _ of provider.stream(hello));
      } catch (error) {
        faults.push((error as ProviderError).fault);
      }
    }
    expect(faults).toEqual(["auth", "server"]);
  });

  test("429 is the rate-limit class with the API's own type as its code; 403 is auth", async () => {
    fake.reply(reply.rateLimited(), reply.status(403, "not allowed"));
    const provider = createProvider("claude", settings({ base_url: fake.url }), { limits: { maxRetries: 0 } });
    const errors: ProviderError[] = [];
    for (let i = 0; i < 2; i++) {
      try {
        for await (const _ of provider.stream(hello));
      } catch (error) {
        errors.push(error as ProviderError);
      }
    }
    expect(errors.map((e) => [e.status, e.code, e.fault])).toEqual([
      [429, "rate_limit_error", "rate_limited"],
      [403, "permission_error", "auth"],
    ]);
  });
});

describe("the stream", () => {
  test("thinking shows as reasoning deltas, then comes back whole with its signature, before the text", async () => {
    const { events, error } = await parse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "think." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQB" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "ping" },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Answer." } },
      { type: "content_block_stop", index: 1 },
      ...stop(),
    );
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "reasoning_delta", itemId: "msg_1:0", delta: "Let me " },
      { type: "reasoning_delta", itemId: "msg_1:0", delta: "think." },
      { type: "reasoning_done", itemId: "msg_1:0", text: "Let me think.", signature: "EqQB" },
      { type: "text_delta", itemId: "msg_1:1", delta: "Answer." },
      { type: "message_done", itemId: "msg_1:1", text: "Answer." },
      { type: "completed", usage: { inputTokens: 10, outputTokens: 5 } },
    ]);
  });

  test("the prompt's tokens count what was cached and read from the cache", async () => {
    const { events } = await parse(
      start({ input_tokens: 3, cache_creation_input_tokens: 1000, cache_read_input_tokens: 200, output_tokens: 1 }),
      ...stop("end_turn", 7),
    );
    expect(events.at(-1)).toEqual({ type: "completed", usage: { inputTokens: 1203, outputTokens: 7 } });
  });

  test("a refusal or the context window running out stops the answer short, coded like the other formats", async () => {
    const refusal = await parse(start(), ...stop("refusal"));
    expect((refusal.error as ProviderError).code).toBe("content_filter");
    const window = await parse(start(), ...stop("model_context_window_exceeded"));
    expect((window.error as ProviderError).code).toBe("max_output_tokens");
    expect((window.error as ProviderError).fault).toBe("cut_off");
  });

  test("a stream that ends without message_stop is cut short; an event type added later is ignored", async () => {
    const { error } = await parse(
      start(),
      { type: "some_future_event", detail: 1 },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("truncated");
  });
});

describe("in the agent's loop", () => {
  let root: string;
  let db: Database;
  let fake: FakeModel;
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), "fermix-anthropic-"));
    db = openDatabase(join(root, "fermix.db"));
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await fake.stop();
    db.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("with thinking on, the signed thinking goes back before the tool call it led to, and the answer comes after the result", async () => {
    const clock = defineTool({
      name: "clock",
      description: "the time",
      parameters: Type.Object({}, { additionalProperties: false }),
      run: async () => "09:00",
    });
    const provider = createProvider("claude", settings({ base_url: fake.url, api_key: KEY, thinking_budget_tokens: 2048 }), { limits: { maxRetries: 0 } });
    const agent = new MainAgent({ provider, model: "claude-sonnet-4-5", conversations: new ConversationStore(db), soul: () => "You are a test persona." });
    fake.reply(
      reply.stream({ reasoning: ["The user wants ", "the time."], toolCalls: [{ name: "clock", arguments: {}, callId: "toolu_1" }] }),
      reply.text("It is 09:00."),
    );
    const result = await agent.runTurn({
      conversation: "cli:local:",
      channel: "cli",
      text: "what time is it?",
      images: [],
      tools: [clock],
      toolContext: { senderId: "me", role: "operator" } as unknown as Omit<ToolContext, "effects" | "signal">,
      signal: new AbortController().signal,
    });
    expect(result.text).toBe("It is 09:00.");
    const first = fake.requests[0]!.body;
    expect(first.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect((first.system as WirePart[])[0]).toMatchObject({ text: "You are a test persona.", cache_control: { type: "ephemeral" } });
    const second = fake.requests[1]!.body.messages!;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const assistant = second[1]!.content as WirePart[];
    expect(assistant.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    expect(assistant[0]).toMatchObject({ thinking: "The user wants the time." });
    expect(assistant[0]!.signature).toMatch(/^sig-fake-/);
    expect((second[2]!.content as WirePart[])[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_1", content: "09:00" });
  });
});
