/** One turn at a time per conversation (channel, chat, thread), in order; conversations run side by side. */
import { afterEach, describe, expect, test } from "bun:test";
import { type RecordedRequest, reply, userText } from "../fakes/model-server.ts";
import { type Harness, startHarness } from "../helpers/gateway.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("per-conversation FIFO", () => {
  test("a second message waits until the first one's reply has been sent", async () => {
    h = await startHarness();
    let sentWhenSecondAsked: string[] | null = null;
    h.fake.reply(reply.slow(30, "First ", "answer ", "done."), (request: RecordedRequest) => {
      sentWhenSecondAsked = h.telegram.texts();
      return reply.text(`second: ${userText(request)}`);
    });
    const outcomes = await Promise.all([h.ingest({ text: "one" }), h.ingest({ text: "two" })]);
    expect(outcomes).toEqual(["answered", "answered"]);
    expect(sentWhenSecondAsked!.join("\n")).toContain("First answer done.");
    expect(h.fake.requests.map(userText)).toEqual(["one", "two"]);
    expect(h.telegram.texts().map((t) => t.slice(0, 7))).toEqual(["First a", "second:"]);
  });

  test("order is arrival order even when the first message's image downloads slowly", async () => {
    h = await startHarness();
    h.fake.fallback((request) => reply.text(`re: ${userText(request)}`));
    let release = () => {};
    h.telegram.fetchGate = new Promise<void>((resolve) => (release = resolve));
    const first = h.ingest({ text: "look at this", media: [{ kind: "image", mime: "image/png", declaredSize: 10, ref: "f1" }] });
    const second = h.ingest({ text: "and what do you think?" });
    // Another conversation gets answered meanwhile: the event loop has moved well past both messages.
    expect(await h.ingest({ chatId: "elsewhere", text: "unrelated" })).toBe("answered");
    release();
    expect(await Promise.all([first, second])).toEqual(["answered", "answered"]);
    const c1 = h.fake.requests.map(userText).filter((t) => t !== "unrelated");
    expect(c1).toEqual(["look at this", "and what do you think?"]);
  });
});

test("/stop during a slow download cancels that turn: no model call, nothing sent but the /stop reply", async () => {
  h = await startHarness();
  h.telegram.fetchGate = new Promise<void>(() => {});
  const turn = h.ingest({ text: "what is this?", media: [{ kind: "image", mime: "image/png", declaredSize: 10, ref: "f1" }] });
  await h.ingest({ text: "/stop" });
  const outcome = await turn;
  expect(outcome).toBe("cancelled");
  expect(h.telegram.fetched).toHaveLength(1);
  expect(h.fake.requests).toHaveLength(0);
  expect(h.telegram.texts()).toEqual([expect.stringContaining("Stopped 1 running reply")]);
});

describe("concurrency across conversations", () => {
  test("another chat is answered while one chat's turn is still running", async () => {
    h = await startHarness();
    h.fake.reply(reply.hang(), reply.text("quick answer"));
    const slow = h.ingest({ chatId: "slow-chat", text: "think hard" });
    const [hanging] = await h.fake.waitForRequests(1);
    // This resolves only if the second chat does not wait behind the first.
    expect(await h.ingest({ chatId: "fast-chat", text: "quick one" })).toBe("answered");
    expect(h.telegram.texts("fast-chat")).toEqual([expect.stringContaining("quick answer")]);
    expect(hanging!.aborted).toBe(false);
    await h.ingest({ chatId: "slow-chat", text: "/stop" });
    expect(await slow).toBe("cancelled");
  });

  test("threads of one chat are separate conversations", async () => {
    h = await startHarness();
    h.fake.reply(reply.hang(), reply.text("thread two answer"));
    const slow = h.ingest({ chatId: "group", threadId: "t1", text: "long one" });
    await h.fake.waitForRequests(1);
    expect(await h.ingest({ chatId: "group", threadId: "t2", text: "short one" })).toBe("answered");
    await h.ingest({ chatId: "group", threadId: "t1", text: "/stop" });
    expect(await slow).toBe("cancelled");
  });
});
