/**
 * A tool that answers with an image (a screenshot, a picture a tool server
 * returned): the model sees it beside the text, on every wire format — in the
 * Responses API as the function call output's content parts, in chat
 * completions (whose tool messages carry text only) as a user message right
 * after the tool messages of its step, in Anthropic's Messages API inside the
 * tool_result block itself. And a tool that ends the turn (TurnEffects.halt:
 * the desktop paused by the owner, its action limit reached): the model is
 * asked once more, hears what the tool answered and says a last word; a call
 * it makes then is not run; the turn's result carries the tool's note to
 * close the answer.
 */
import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { MainAgent } from "../../src/agent/agent.ts";
import { createProvider } from "../../src/agent/providers/index.ts";
import { defineTool, type ToolContext } from "../../src/agent/tools/types.ts";
import { ConversationStore } from "../../src/store/conversations.ts";
import { openDatabase } from "../../src/store/db.ts";
import { type FakeModel, reply, startFakeModel, toolOutputText, type WirePart } from "../fakes/model-server.ts";

let root: string;
let db: Database;
let fake: FakeModel;
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "fermix-tool-images-"));
  db = openDatabase(join(root, "fermix.db"));
  fake = await startFakeModel();
});
afterEach(async () => {
  await fake.stop();
  db.close();
  rmSync(root, { recursive: true, force: true });
});

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const look = defineTool({
  name: "look",
  description: "take a look",
  parameters: Type.Object({}, { additionalProperties: false }),
  run: async () => ({ text: "the screen now", images: [{ mime: "image/png", data: PIXEL }] }),
});

async function turnWith(api: "responses" | "chat" | "anthropic"): Promise<void> {
  const provider = createProvider("fake", { api, base_url: fake.url, model: "fake-model" } as never, { limits: { maxRetries: 0 } });
  const agent = new MainAgent({ provider, model: "fake-model", conversations: new ConversationStore(db), soul: () => "You are a test." });
  fake.reply(reply.toolCalls({ name: "look", arguments: {}, callId: "c1" }, { name: "look", arguments: {}, callId: "c2" }), reply.text("I see it."));
  const result = await agent.runTurn({
    conversation: "cli:local:",
    channel: "cli",
    text: "what is on the screen?",
    images: [],
    tools: [look],
    toolContext: { senderId: "me", role: "operator" } as unknown as Omit<ToolContext, "effects" | "signal">,
    signal: new AbortController().signal,
  });
  expect(result.text).toBe("I see it.");
}

test("Responses: the image is part of the function call's output", async () => {
  await turnWith("responses");
  const outputs = (fake.requests[1]!.body.input ?? []).filter((item) => item.type === "function_call_output");
  expect(outputs).toHaveLength(2);
  for (const output of outputs) {
    expect(output.output).toEqual([
      { type: "input_text", text: "the screen now" },
      { type: "input_image", image_url: `data:image/png;base64,${PIXEL}`, detail: "auto" },
    ] as unknown as string);
  }
});

test("chat completions: the text in the tool messages, their images in one user message right after the step's tool messages", async () => {
  await turnWith("chat");
  const messages = fake.requests[1]!.body.messages ?? [];
  expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "user"]);
  expect(messages[2]!.tool_calls?.map((call) => call.id)).toEqual(["c1", "c2"]);
  for (const at of [3, 4]) expect(messages[at]).toMatchObject({ role: "tool", content: "the screen now" });
  const parts = messages[5]!.content as unknown as Array<{ type: string; image_url?: { url: string } }>;
  expect(parts.filter((part) => part.type === "image_url").map((part) => part.image_url!.url)).toEqual([
    `data:image/png;base64,${PIXEL}`,
    `data:image/png;base64,${PIXEL}`,
  ]);
});

test("Anthropic: the text and the image in the tool_result block, both results in the one user message that follows the calls", async () => {
  await turnWith("anthropic");
  const messages = fake.requests[1]!.body.messages ?? [];
  expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  const calls = (messages[1]!.content as WirePart[]).filter((block) => block.type === "tool_use").map((block) => block.id);
  expect(calls).toEqual(["c1", "c2"]);
  const results = messages[2]!.content as WirePart[];
  expect(results.map((block) => [block.type, block.tool_use_id])).toEqual([
    ["tool_result", "c1"],
    ["tool_result", "c2"],
  ]);
  for (const result of results) {
    expect(result.content).toEqual([
      { type: "text", text: "the screen now" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
    ]);
  }
});

test("the tool's refusal reaches the model, its last word and the note end the turn, and no later call runs", async () => {
  let runs = 0;
  const act = defineTool({
    name: "act",
    description: "do something",
    parameters: Type.Object({}, { additionalProperties: false }),
    run: async (_args, ctx) => {
      runs++;
      ctx.effects.halt = "Paused: I stopped here.";
      return "refused: paused by the owner";
    },
  });
  const provider = createProvider("fake", { api: "responses", base_url: fake.url, model: "fake-model" } as never, { limits: { maxRetries: 0 } });
  const agent = new MainAgent({ provider, model: "fake-model", conversations: new ConversationStore(db), soul: () => "You are a test." });
  fake.reply(reply.toolCall("act", {}), reply.toolCall("act", {}, { text: ["OK, stopping."] }));
  const result = await agent.runTurn({
    conversation: "cli:local:",
    channel: "cli",
    text: "go",
    images: [],
    tools: [act],
    toolContext: { senderId: "me", role: "operator" } as unknown as Omit<ToolContext, "effects" | "signal">,
    signal: new AbortController().signal,
  });
  expect(runs).toBe(1);
  expect(fake.requests).toHaveLength(2);
  expect(toolOutputText((fake.requests[1]!.body.input ?? []).at(-1)!)).toBe("refused: paused by the owner");
  expect(result).toMatchObject({ status: "ok", text: "OK, stopping.", note: "Paused: I stopped here." });
});
