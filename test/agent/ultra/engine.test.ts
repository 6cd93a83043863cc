/**
 * Ultra mode's engine with a real provider against the fake model on
 * loopback and a real conversation store: the concurrency bound, the
 * progress a reader is shown, what history keeps, and a stop in the middle.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TurnRequest } from "../../../src/agent/agent.ts";
import { createProvider } from "../../../src/agent/providers/index.ts";
import type { Tool } from "../../../src/agent/tools/types.ts";
import { UltraMode, type UltraProgress } from "../../../src/agent/ultra/engine.ts";
import { ConversationStore } from "../../../src/store/conversations.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { type FakeModel, type RecordedRequest, reply, startFakeModel, userText } from "../../fakes/model-server.ts";

const CONVERSATION = "telegram:111:";
let root: string;
let db: Database;
let conversations: ConversationStore;
let fake: FakeModel;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "fermix-ultra-"));
  db = openDatabase(join(root, "fermix.db"));
  conversations = new ConversationStore(db);
  fake = await startFakeModel();
});
afterEach(async () => {
  await fake.stop();
  db.close();
  rmSync(root, { recursive: true, force: true });
});

function ultra(settings: { maxParts?: number; concurrency?: number; maxTokens?: number } = {}): UltraMode {
  const provider = createProvider("fake", { api: "responses", base_url: fake.url, model: "fake-model" } as never, { limits: { maxRetries: 0 } });
  return new UltraMode({
    model: () => ({ provider, model: "fake-model" }),
    conversations,
    soul: () => "# Soul\n\nYou are a test.",
    settings: () => ({ maxParts: settings.maxParts ?? 4, concurrency: settings.concurrency ?? 4, maxTokens: settings.maxTokens ?? 200_000 }),
  });
}

const echoTool: Tool = { spec: { name: "echo", description: "echo", parameters: { type: "object", properties: {} } }, run: async () => "echo" };

function request(text: string, signal: AbortSignal, onEvent?: TurnRequest["onEvent"]): TurnRequest {
  return {
    conversation: CONVERSATION,
    channel: "telegram",
    text,
    images: [],
    tools: [echoTool],
    toolContext: { channel: "telegram", conversation: CONVERSATION, senderId: "111", role: "operator" } as never,
    signal,
    ...(onEvent ? { onEvent } : {}),
  };
}

const phase = (r: RecordedRequest) => /## Ultra mode: (planning|worker|merging)/.exec(String(r.body.instructions))?.[1] ?? "other";

function byPhase(replies: { planning: string; worker: (task: string) => ReturnType<typeof reply.text>; merging: ReturnType<typeof reply.text> }) {
  fake.fallback((r) => {
    const p = phase(r);
    if (p === "worker") return replies.worker(userText(r));
    if (p === "planning") return reply.text(replies.planning);
    return replies.merging;
  });
}

/** The most requests of `phase` whose time windows overlap at one moment. */
function mostAtOnce(requests: RecordedRequest[]): number {
  const edges = requests.flatMap((r) => [
    { at: r.receivedAt, delta: 1 },
    { at: r.finishedAt!, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const edge of edges) {
    open += edge.delta;
    most = Math.max(most, open);
  }
  return most;
}

describe("UltraMode", () => {
  test("at most `concurrency` workers at once; progress planning → n of m → merging; only the merge's events reach onEvent", async () => {
    byPhase({
      planning: JSON.stringify({ parts: ["a", "b", "c", "d", "e"].map((t) => ({ title: t, task: `task ${t}` })) }),
      worker: (task) => reply.slow(60, `done `, task),
      merging: reply.text("All ", "merged."),
    });
    const progress: UltraProgress[] = [];
    const streamed: string[] = [];
    const result = await ultra({ maxParts: 4, concurrency: 2 }).runTurn(
      request("five things", new AbortController().signal, (e) => e.type === "text_delta" && streamed.push(e.delta)),
      (p) => progress.push(p),
    );
    expect(result.status).toBe("ok");
    expect(result.text).toBe("All merged.\n\n_Ultra: 4 parts · 6 requests · 90 tokens_");
    expect(result.usage).toEqual({ inputTokens: 60, outputTokens: 30 });
    const workers = fake.requests.filter((r) => phase(r) === "worker");
    // Five planned, four allowed: the fifth joined the fourth.
    expect(workers.map(userText).sort()).toEqual(["task a", "task b", "task c", "- task d\n- task e"].sort());
    expect(mostAtOnce(workers)).toBe(2);
    // Workers get the turn's tools (an ultra part's, from the role table: test/gateway/roles.test.ts); planner and merge get none.
    expect(workers[0]!.body.tools!.map((t) => t.name)).toEqual(["echo"]);
    expect(progress).toEqual([
      { phase: "planning" },
      { phase: "working", done: 0, total: 4 },
      { phase: "working", done: 1, total: 4 },
      { phase: "working", done: 2, total: 4 },
      { phase: "working", done: 3, total: 4 },
      { phase: "working", done: 4, total: 4 },
      { phase: "merging" },
    ]);
    expect(streamed.join("")).toBe("All merged.");
    // History: the owner's request only (the turn runner commits the answer); no worker chatter.
    expect(conversations.history(CONVERSATION).map((m) => `${m.role}: ${m.text}`)).toEqual(["user: five things"]);
  });

  test("a stop during the workers aborts every open request at once and ends the turn cancelled, without a merge", async () => {
    byPhase({ planning: JSON.stringify({ parts: ["x", "y", "z"] }), worker: () => reply.hang("thinking"), merging: reply.text("never") });
    const stop = new AbortController();
    const running = ultra().runTurn(request("three things", stop.signal));
    await fake.waitForRequests(4);
    const workers = fake.requests.filter((r) => phase(r) === "worker");
    expect(workers).toHaveLength(3);
    stop.abort();
    const result = await running;
    expect(result.status).toBe("cancelled");
    await Promise.all(workers.map((w) => w.untilAborted));
    expect(fake.requests.filter((r) => phase(r) === "merging")).toHaveLength(0);
  });

  test("a planner that writes no plan: one worker takes the whole request", async () => {
    byPhase({ planning: "I think this is simple.", worker: (task) => reply.text(`worked on: ${task}`), merging: reply.text("Answer.") });
    const result = await ultra().runTurn(request("one simple thing", new AbortController().signal));
    expect(result.text).toContain("_Ultra: 1 part · 3 requests");
    expect(fake.requests.filter((r) => phase(r) === "worker").map(userText)).toEqual(["one simple thing"]);
    expect(userText(fake.requests.at(-1)!)).toContain("worked on: one simple thing");
  });

  test("a planner that fails fails the turn (the turn runner words the fault); nothing else is asked", async () => {
    fake.reply(reply.status(401, "bad key"));
    const result = await ultra().runTurn(request("anything", new AbortController().signal));
    expect(result.status).toBe("failed");
    expect(result.failure?.fault).toBe("auth");
    expect(fake.requests).toHaveLength(1);
  });
});
