/** What only the Responses API has: its request body and the events beyond the conformance suite. */
import { describe, expect, test } from "bun:test";
import { createProvider, type ModelRequest, ProviderError, type ProviderEvent } from "../../../src/agent/providers/index.ts";
import { parseResponsesStream, responsesBody } from "../../../src/agent/providers/responses.ts";
import type { SseEvent } from "../../../src/agent/providers/sse.ts";
import { reply, startFakeModel } from "../../fakes/model-server.ts";

const request: ModelRequest = {
  model: "gpt-test",
  instructions: "You are Fermix.",
  input: [
    {
      type: "message",
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image", mime: "image/png", data: "iVBORw0KGgo=" },
      ],
    },
    { type: "message", role: "assistant", content: [{ type: "text", text: "A cat." }] },
    { type: "function_call", callId: "call_1", name: "react", arguments: '{"emoji":"👍"}' },
    { type: "function_call_output", callId: "call_1", output: "ok" },
  ],
  tools: [{ name: "react", description: "React to the message", parameters: { type: "object", properties: { emoji: { type: "string" } } } }],
  maxOutputTokens: 512,
};

describe("responsesBody", () => {
  test("builds input items, instructions, tools and limits", () => {
    expect(responsesBody(request, { model: "fallback" })).toEqual({
      model: "gpt-test",
      stream: true,
      store: false,
      instructions: "You are Fermix.",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          ],
        },
        { type: "message", role: "assistant", content: "A cat." },
        { type: "function_call", call_id: "call_1", name: "react", arguments: '{"emoji":"👍"}' },
        { type: "function_call_output", call_id: "call_1", output: "ok" },
      ],
      tools: [
        {
          type: "function",
          name: "react",
          description: "React to the message",
          parameters: { type: "object", properties: { emoji: { type: "string" } } },
          strict: false,
        },
      ],
      max_output_tokens: 512,
    });
  });

  test("asks for reasoning summaries only when told to", () => {
    expect(responsesBody(request, { model: "m" }).reasoning).toBeUndefined();
    expect(responsesBody(request, { model: "m" }, { reasoningSummary: "auto" }).reasoning).toEqual({ summary: "auto" });
  });

  test("the config's model stands in for an empty one; no tools, no instructions, no keys", () => {
    const body = responsesBody({ model: "", input: [] }, { model: "fallback" });
    expect(body).toEqual({ model: "fallback", input: [], stream: true, store: false });
  });
});

async function parse(frames: Array<Record<string, unknown> | string>): Promise<{ events: ProviderEvent[]; error?: unknown }> {
  async function* source(): AsyncGenerator<SseEvent> {
    for (const f of frames) yield { event: "message", data: typeof f === "string" ? f : JSON.stringify(f) };
  }
  const events: ProviderEvent[] = [];
  try {
    for await (const e of parseResponsesStream(source(), { provider: "openai" })) events.push(e);
  } catch (error) {
    return { events, error };
  }
  return { events };
}

describe("parseResponsesStream", () => {
  test("a refusal is text", async () => {
    const { events } = await parse([
      { type: "response.refusal.delta", item_id: "m1", delta: "I can't" },
      { type: "response.output_item.done", item: { type: "message", id: "m1", content: [{ type: "refusal", refusal: "I can't" }] } },
      { type: "response.completed", response: {} },
    ]);
    expect(events).toEqual([
      { type: "text_delta", itemId: "m1", delta: "I can't" },
      { type: "message_done", itemId: "m1", text: "I can't" },
      { type: "completed" },
    ]);
  });

  test("reasoning items and unknown events yield nothing", async () => {
    const { events } = await parse([
      { type: "response.output_item.done", item: { type: "reasoning", id: "r1", summary: [] } },
      { type: "response.something_new", foo: 1 },
      { type: "response.completed", response: { usage: { input_tokens: 3, output_tokens: 4 } } },
    ]);
    expect(events).toEqual([{ type: "completed", usage: { inputTokens: 3, outputTokens: 4 } }]);
  });

  test("response.failed carries the API's message and code", async () => {
    const { error } = await parse([{ type: "response.failed", response: { error: { code: "server_error", message: "Oops" } } }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("server_error");
    expect((error as Error).message).toBe('provider "openai" failed: the response failed: Oops');
  });

  test("response.incomplete says why", async () => {
    const { error } = await parse([{ type: "response.incomplete", response: { incomplete_details: { reason: "content_filter" } } }]);
    expect((error as ProviderError).code).toBe("content_filter");
  });

  test("a stream that ends without response.completed (or at [DONE]) is truncated", async () => {
    for (const frames of [[{ type: "response.created", response: {} }], ["[DONE]"]]) {
      const { error } = await parse(frames);
      expect((error as ProviderError).code).toBe("truncated");
    }
  });

  test("malformed data is a ProviderError", async () => {
    const { error } = await parse(["{not json"]);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("bad_event");
  });
});

test("over the wire, the fake receives the body as built", async () => {
  await using fake = await startFakeModel();
  fake.reply(reply.text("ok"));
  const provider = createProvider("openai", { api: "responses", base_url: `${fake.url}/`, model: "m", vision: true, context_window: 1 });
  for await (const _ of provider.stream(request));
  expect(fake.requests[0]?.path).toBe("/v1/responses");
  expect(fake.requests[0]?.body).toEqual(responsesBody(request, { model: "m" }));
});
