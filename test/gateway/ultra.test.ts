/**
 * `/ultra` through the gateway with recording channels: it waits its turn in
 * the conversation's queue like any message, and its status message is as
 * much as the channel can take (one message where it cannot edit, none left
 * behind where it can delete). `/skills` argument parsing is checked here too.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { parseSkillsArgs } from "../../src/gateway/commands/skills.ts";
import { ShutdownInterrupt } from "../../src/gateway/queue.ts";
import { reply, userText } from "../fakes/model-server.ts";
import { type Harness, NO_REACTIONS, RecordingChannel, startHarness, until } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const phase = (instructions: unknown) => /## Ultra mode: (planning|worker|merging)/.exec(String(instructions))?.[1] ?? "normal";

function phases(harness: Harness) {
  harness.fake.fallback((r) => {
    switch (phase(r.body.instructions)) {
      case "planning":
        return reply.text('{"parts": [{"title": "a", "task": "part a"}, {"title": "b", "task": "part b"}]}');
      case "worker":
        return reply.text(`result of ${userText(r)}`);
      case "merging":
        return reply.text("The merged answer.");
      default:
        return reply.slow(100, "A normal ", "answer ", "that takes a while.");
    }
  });
}

describe("/ultra in the gateway", () => {
  test("queued behind the turn before it: its planner starts only when that turn is done", async () => {
    h = await startHarness();
    phases(h);
    const first = h.ingest({ text: "first question" });
    const second = h.ingest({ text: "/ultra two things" });
    expect(await first).toBe("answered");
    expect(await second).toBe("command");
    const [normal, planner] = h.fake.requests;
    expect(phase(normal!.body.instructions)).toBe("normal");
    expect(phase(planner!.body.instructions)).toBe("planning");
    expect(planner!.receivedAt).toBeGreaterThanOrEqual(normal!.finishedAt!);
    expect(h.fake.requests.map((r) => phase(r.body.instructions))).toEqual(["normal", "planning", "worker", "worker", "merging"]);
  });

  test("a channel that can neither edit nor delete gets one status message and the answer, nothing more", async () => {
    const plain = new RecordingChannel(NO_REACTIONS);
    h = await startHarness({ channels: { telegram: plain } });
    phases(h);
    expect(await h.ingest({ text: "/ultra two things" })).toBe("command");
    await until(() => plain.actions.some((a) => a.kind === "text" && a.text.includes("merged answer")), "the answer");
    const shown = plain.actions.filter((a) => a.kind !== "typing");
    expect(shown.map((a) => a.kind)).toEqual(["text", "text"]);
    expect(shown[0]).toMatchObject({ kind: "text", text: "🧠 Ultra mode: planning the parts…" });
    expect(shown[1]).toMatchObject({ kind: "text", text: expect.stringContaining("Ultra: 2 parts · 4 requests · 60 tokens") });
  });

  test("a shutdown in the middle leaves it interrupted (its inbox entry replays at the next start), not done", async () => {
    h = await startHarness();
    h.fake.fallback((r) => (phase(r.body.instructions) === "planning" ? reply.text('["a", "b"]') : reply.hang("working")));
    const outcome = h.ingest({ text: "/ultra two things" });
    await h.fake.waitForRequests(3);
    h.core.queue.stopAll(new ShutdownInterrupt());
    expect(await outcome).toBe("interrupted");
  });

  test("with nothing to do it says how to use it, and asks the model nothing", async () => {
    const channel = new RecordingChannel();
    h = await startHarness({ channels: { telegram: channel } });
    expect(await h.ingest({ text: "/ultra" })).toBe("command");
    await until(() => channel.actions.some((a) => a.kind === "text"), "the usage reply");
    expect(channel.actions.find((a) => a.kind === "text")).toMatchObject({ text: expect.stringContaining("/ultra") });
    expect(h.fake.requests).toHaveLength(0);
  });
});

describe("parseSkillsArgs", () => {
  test("subcommands, ids and names; anything else is a usage problem", () => {
    expect(parseSkillsArgs("")).toEqual({ kind: "list" });
    expect(parseSkillsArgs("list")).toEqual({ kind: "list" });
    expect(parseSkillsArgs("review 3")).toEqual({ kind: "review", id: 3 });
    expect(parseSkillsArgs("APPROVE #12")).toEqual({ kind: "approve", id: 12 });
    expect(parseSkillsArgs("deny 1")).toEqual({ kind: "deny", id: 1 });
    expect(parseSkillsArgs("archive weekly-report")).toEqual({ kind: "archive", name: "weekly-report" });
    expect(parseSkillsArgs("restore x")).toEqual({ kind: "restore", name: "x" });
    expect(parseSkillsArgs("unpark x")).toEqual({ kind: "unpark", name: "x" });
    expect(parseSkillsArgs("history")).toEqual({ kind: "history" });
    expect(parseSkillsArgs("history x")).toEqual({ kind: "history", name: "x" });
    for (const bad of ["approve", "approve x", "approve 0", "deny 1 2", "archive", "archive a b", "history a b", "list x", "frobnicate"]) {
      expect(parseSkillsArgs(bad).kind).toBe("usage");
    }
  });
});
