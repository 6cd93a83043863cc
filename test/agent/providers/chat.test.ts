/** What only chat completions has: its request body and the dialects of the servers that speak it. */
import { describe, expect, test } from "bun:test";
import { chatBody, parseChatStream } from "../../../src/agent/providers/chat.ts";
import { createProvider, type ModelRequest, type ProviderError, type ProviderEvent } from "../../../src/agent/providers/index.ts";
import type { SseEvent } from "../../../src/agent/providers/sse.ts";
import { reply, startFakeModel } from "../../fakes/model-server.ts";

const request: ModelRequest = {
  model: "llama3",
  instructions: "You are Fermix.",
  input: [
    { type: "message", role: "user", content: [{ type: "text", text: "hi" }] },
    {
      type: "message",
      role: "user",
      content: [
        { type: "text", text: "and this?" },
        { type: "image", mime: "image/jpeg", data: "/9j/4AAQ" },
      ],
    },
    { type: "message", role: "assistant", content: [{ type: "text", text: "Let me look." }] },
    { type: "function_call", callId: "c1", name: "a", arguments: "{}" },
    { type: "function_call", callId: "c2", name: "b", arguments: '{"x":1}' },
    { type: "function_call_output", callId: "c1", output: "A" },
    { type: "function_call_output", callId: "c2", output: "B" },
    { type: "function_call", callId: "c3", name: "a", arguments: "{}" },
    { type: "function_call_output", callId: "c3", output: "A again" },
  ],
  tools: [{ name: "a", description: "Tool a", parameters: { type: "object" } }],
  maxOutputTokens: 100,
};

describe("chatBody", () => {
  test("builds messages: system, string or part content, tool calls folded per step, tool results", () => {
    const call = (id: string, name: string, args: string) => ({ id, type: "function", function: { name, arguments: args } });
    expect(chatBody(request, { model: "fallback" })).toEqual({
      model: "llama3",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You are Fermix." },
        { role: "user", content: "hi" },
        {
          role: "user",
          content: [
            { type: "text", text: "and this?" },
            { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
          ],
        },
        { role: "assistant", content: "Let me look.", tool_calls: [call("c1", "a", "{}"), call("c2", "b", '{"x":1}')] },
        { role: "tool", tool_call_id: "c1", content: "A" },
        { role: "tool", tool_call_id: "c2", content: "B" },
        { role: "assistant", content: "", tool_calls: [call("c3", "a", "{}")] },
        { role: "tool", tool_call_id: "c3", content: "A again" },
      ],
      tools: [{ type: "function", function: { name: "a", description: "Tool a", parameters: { type: "object" } } }],
      max_tokens: 100,
    });
  });
});

async function parse(frames: Array<Record<string, unknown> | string>): Promise<{ events: ProviderEvent[]; error?: unknown }> {
  async function* source(): AsyncGenerator<SseEvent> {
    for (const f of frames) yield { event: "message", data: typeof f === "string" ? f : JSON.stringify(f) };
  }
  const events: ProviderEvent[] = [];
  try {
    for await (const e of parseChatStream(source(), { provider: "ollama" })) events.push(e);
  } catch (error) {
    return { events, error };
  }
  return { events };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: "x", choices: [{ index: 0, delta, finish_reason: finish }] });

describe("parseChatStream dialects", () => {
  test("reasoning under `reasoning` (Ollama, OpenRouter) as well as `reasoning_content`", async () => {
    const { events } = await parse([chunk({ reasoning: "hmm" }), chunk({ reasoning_content: "ah" }), chunk({ content: "ok" }, "stop"), "[DONE]"]);
    expect(events.filter((e) => e.type === "reasoning_delta").map((e) => (e as { delta: string }).delta)).toEqual(["hmm", "ah"]);
  });

  test("tool calls without index or id, with arguments as an object, and finish_reason stop", async () => {
    const { events } = await parse([
      chunk({ tool_calls: [{ function: { name: "a", arguments: { q: 1 } } }, { function: { name: "b", arguments: "" } }] }),
      chunk({}, "stop"),
      "[DONE]",
    ]);
    expect(events).toEqual([
      { type: "tool_call", callId: "call_x_0", name: "a", arguments: '{"q":1}' },
      { type: "tool_call", callId: "call_x_1", name: "b", arguments: "{}" },
      { type: "completed" },
    ]);
  });

  test("fragments by index interleaved across calls are put together", async () => {
    const { events } = await parse([
      chunk({ tool_calls: [{ index: 1, id: "B", function: { name: "b", arguments: '{"y"' } }] }),
      chunk({ tool_calls: [{ index: 0, id: "A", function: { name: "a", arguments: '{"x"' } }] }),
      chunk({
        tool_calls: [
          { index: 1, function: { arguments: ":2}" } },
          { index: 0, function: { arguments: ":1}" } },
        ],
      }),
      chunk({}, "tool_calls"),
      "[DONE]",
    ]);
    expect(events.filter((e) => e.type === "tool_call")).toEqual([
      { type: "tool_call", callId: "A", name: "a", arguments: '{"x":1}' },
      { type: "tool_call", callId: "B", name: "b", arguments: '{"y":2}' },
    ]);
  });

  test("usage may come in the finishing chunk itself (llama.cpp) or after it", async () => {
    const { events } = await parse([{ ...chunk({ content: "x" }, "stop"), usage: { prompt_tokens: 7, completion_tokens: 1 } }, "[DONE]"]);
    expect(events.at(-1)).toEqual({ type: "completed", usage: { inputTokens: 7, outputTokens: 1 } });
  });

  test("a finish without [DONE] completes; [DONE] without a finish completes; neither is truncated", async () => {
    expect((await parse([chunk({ content: "a" }, "stop")])).events.at(-1)).toEqual({ type: "completed" });
    const done = await parse([chunk({ content: "a" }), "[DONE]"]);
    expect(done.events.map((e) => e.type)).toEqual(["text_delta", "message_done", "completed"]);
    const cut = await parse([chunk({ content: "a" })]);
    expect((cut.error as ProviderError).code).toBe("truncated");
  });

  test("an error chunk (string or object) and content_filter are ProviderErrors", async () => {
    expect(((await parse([{ error: "model not loaded" }])).error as Error).message).toBe(
      'provider "ollama" failed: the stream reported an error: model not loaded',
    );
    expect(((await parse([{ error: { message: "x", code: 502 } }])).error as ProviderError).code).toBe("502");
    expect(((await parse([chunk({}, "content_filter")])).error as ProviderError).code).toBe("content_filter");
  });
});

test("over the wire, the fake receives the body as built, and `reasoning` deltas are read", async () => {
  await using fake = await startFakeModel();
  fake.reply(reply.stream({ reasoning: ["r"], text: ["t"], reasoningField: "reasoning" }));
  const provider = createProvider("local", { api: "chat", base_url: fake.url, model: "m", vision: false, context_window: 1 });
  const events: ProviderEvent[] = [];
  for await (const e of provider.stream(request)) events.push(e);
  expect(fake.requests[0]?.body).toEqual(chatBody(request, { model: "m" }));
  expect(events.map((e) => e.type)).toEqual(["reasoning_delta", "text_delta", "message_done", "completed"]);
});
