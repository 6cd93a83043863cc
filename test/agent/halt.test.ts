/**
 * A tool that ends the turn (TurnEffects.halt: the desktop paused by the
 * owner, its action limit reached): the model is asked once more, hears
 * what the tool answered and says a last word; a call it makes then is not
 * run; the turn's result carries the tool's note to close the answer.
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
import { type FakeModel, reply, startFakeModel, toolOutputText } from "../fakes/model-server.ts";

let root: string;
let db: Database;
let fake: FakeModel;
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "fermix-halt-"));
  db = openDatabase(join(root, "fermix.db"));
  fake = await startFakeModel();
});
afterEach(async () => {
  await fake.stop();
  db.close();
  rmSync(root, { recursive: true, force: true });
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
