/**
 * The outbox's retrier on an injected clock: a Retry-After of a minute is
 * waited out (not dropped, not sent early), a platform down past the horizon
 * turns into a notice when it is back, a refusal stops at once, a /stop
 * cancels what is unsent, and a chat's later replies wait behind its backlog.
 * And a draft stream that gives up on a 429: its whole-reply fallback waits
 * out the Retry-After the stream was given.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import { Delivery } from "../../src/gateway/delivery.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import { type OutboundText, type ReplyPort, SendFailed, type SentMessage } from "../../src/message/index.ts";
import { createStreamer } from "../../src/present/stream.ts";
import { openDatabase } from "../../src/store/db.ts";
import { Outbox } from "../../src/store/outbox.ts";
import { FakeClock } from "../helpers/clock.ts";
import { partsPresenter, TARGET } from "../store/fixtures/outbox-reply.ts";

let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-delivery-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

/** A platform whose next answers are scripted: a failure to throw, or a delivery. */
function platform() {
  const sent: Array<{ at: number; text: string }> = [];
  const failures: unknown[] = [];
  let clock = () => 0;
  const port: ReplyPort = {
    capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
    async sendText(message: OutboundText) {
      const failure = failures.shift();
      if (failure) throw failure;
      sent.push({ at: clock(), text: message.text });
      return { id: `m${sent.length}` };
    },
  } as unknown as ReplyPort;
  return { sent, failures, port, setClock: (c: () => number) => (clock = c) };
}

function build(time: FakeClock, port: ReplyPort, horizonMs = 15 * 60_000) {
  const outbox = new Outbox(db, time.now);
  const delivery = new Delivery({
    outbox,
    presenter: partsPresenter,
    channels: profileOf,
    rawPort: () => port,
    spoolDir: join(root, "spool"),
    telemetry: new Telemetry(),
    log: createLogger({ FERMIX_LOG_LEVEL: "error" }),
    horizonMs,
    now: time.now,
    sleep: time.sleep,
    random: () => 0.5,
  });
  return { outbox, delivery };
}

describe("the retrier", () => {
  test("a 429 asking for 60 s is waited out: nothing before, the reply once after", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    p.setClock(time.now);
    const { delivery, outbox } = build(time, p.port);
    p.failures.push(new SendFailed("HTTP 429: slow down", true, 429, 60_000));
    const started = time.now();
    expect(await delivery.say("slack", TARGET, "r1", "the answer")).toBe("deferred");
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["pending"]);
    await time.advance(59_000);
    expect(p.sent).toEqual([]);
    await time.advance(1_000);
    await delivery.idle();
    expect(p.sent).toEqual([{ at: started + 60_000, text: "the answer" }]);
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["sent"]);
  });

  test("a platform down past the horizon: the reply is given up, and the user is told once it takes messages again", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    const { delivery, outbox } = build(time, p.port, 60_000);
    // Down for as long as the test says: every send fails until then.
    for (let i = 0; i < 50; i++) p.failures.push(new SendFailed("HTTP 503", true, 503));
    await delivery.say("slack", TARGET, "r1", "an answer about the tides", undefined, undefined, "reply");
    for (let i = 0; i < 20 && outbox.parts("r1")[0]!.state !== "failed"; i++) await time.advance(10_000);
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["failed"]);
    expect(p.sent).toEqual([]);
    // Back up: the notice goes out at its next try.
    p.failures.length = 0;
    for (let i = 0; i < 20 && p.sent.length === 0; i++) await time.advance(60_000);
    await delivery.idle();
    expect(p.sent).toHaveLength(1);
    expect(p.sent[0]!.text).toContain("couldn't deliver an answer");
    expect(p.sent[0]!.text).toContain("an answer about the tides");
  });

  test("while sends fail, health hears the status and class; what the platform said (which can quote the message) is not in it", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    const { delivery } = build(time, p.port);
    p.failures.push(new SendFailed('HTTP 503: could not deliver "call +15551234567 about the heron" to chat 42', true, 503));
    expect(delivery.trouble("slack")).toBeUndefined();
    await delivery.say("slack", TARGET, "r1", "call +15551234567 about the heron");
    const trouble = delivery.trouble("slack");
    expect(trouble).toBe("sends failing for 1 min: server error (HTTP 503); retrying");
    // Its retry goes through: the channel is no longer in trouble.
    await time.advance(60_000);
    await delivery.idle();
    expect(p.sent).toHaveLength(1);
    expect(delivery.trouble("slack")).toBeUndefined();
  });

  test("a send that fails on the network is 'could not be reached', with no status", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    const { delivery } = build(time, p.port);
    p.failures.push(Object.assign(new Error("Unable to connect. Is the computer able to access the url?"), { code: "ConnectionRefused" }));
    await delivery.say("telegram", TARGET, "r1", "hello");
    expect(delivery.trouble("telegram")).toBe("sends failing for 1 min: could not be reached; retrying");
  });

  test("a refusal (403) stops at once: not retried, the rest of the reply not sent", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    const { delivery, outbox } = build(time, p.port);
    p.failures.push(new SendFailed("HTTP 403: bot was blocked", false, 403));
    expect(await delivery.say("telegram", TARGET, "r1", "one\n---\ntwo")).toBe("failed");
    await time.advance(3_600_000);
    expect(p.sent).toEqual([]);
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["failed", "failed"]);
  });

  test("a stopped turn's unsent parts are cancelled: nothing of them goes out, retries included", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    const { delivery, outbox } = build(time, p.port);
    p.failures.push(new SendFailed("HTTP 500", true, 500));
    await delivery.say("slack", TARGET, "r1", "first\n---\nsecond");
    delivery.cancel("r1", "stopped");
    await time.advance(3_600_000);
    await delivery.idle();
    expect(p.sent).toEqual([]);
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["cancelled", "cancelled"]);
  });

  test("a chat's next reply waits behind its backlog: the order the user reads is the order they were written", async () => {
    const time = new FakeClock(1_000_000);
    const p = platform();
    const { delivery } = build(time, p.port);
    p.failures.push(new SendFailed("HTTP 502", true, 502));
    await delivery.say("slack", TARGET, "r1", "older");
    expect(await delivery.say("slack", TARGET, "r2", "newer")).toBe("deferred");
    await time.advance(10_000);
    await delivery.idle();
    expect(p.sent.map((s) => s.text)).toEqual(["older", "newer"]);
  });
});

/** A platform that edits and deletes (Slack, Telegram): every call recorded at the delivery clock's time, failures scripted per call kind. */
function editingPlatform(clock: () => number) {
  const calls: Array<{ op: "send" | "edit" | "delete"; at: number; id: string; text?: string }> = [];
  const fail = { send: [] as unknown[], edit: [] as unknown[] };
  let next = 0;
  const port: ReplyPort = {
    capabilities: { edit: true, delete: true, react: false, media: false, typing: false },
    async sendText(message: OutboundText): Promise<SentMessage> {
      const failure = fail.send.shift();
      if (failure) throw failure;
      const id = `m${++next}`;
      calls.push({ op: "send", at: clock(), id, text: message.text });
      return { id };
    },
    async editText(sent: SentMessage, message: OutboundText): Promise<void> {
      const failure = fail.edit.shift();
      if (failure) throw failure;
      calls.push({ op: "edit", at: clock(), id: sent.id, text: message.text });
    },
    async deleteMessage(sent: SentMessage): Promise<void> {
      calls.push({ op: "delete", at: clock(), id: sent.id });
    },
    async react() {},
    async typing() {},
  } as unknown as ReplyPort;
  return { calls, fail, port };
}

describe("a draft stream rate-limited mid-reply", () => {
  const opening = "The answer starts here and is long enough to open the live draft.";
  const answer = `${opening} It goes on for a while, then ends with the last words of the answer.`;

  for (const where of ["edit", "send"] as const) {
    test(`a 429 on the draft's ${where} asking for 60 s: the fallback waits it out, then the complete answer arrives once`, async () => {
      const time = new FakeClock(1_000_000);
      const p = editingPlatform(time.now);
      const { delivery, outbox } = build(time, p.port);
      const streamClock = new FakeClock();
      const streamer = createStreamer({
        mode: "draft",
        channel: "slack",
        platform: profileOf("slack").text,
        sessionId: "s1",
        clock: streamClock,
        port: delivery.durablePort("slack", TARGET, "r1", p.port),
        fallback: delivery.fallback("slack", TARGET, "r1", p.port),
      });
      const limited = new SendFailed("HTTP 429: ratelimited", true, 429, 60_000);
      if (where === "send") p.fail.send.push(limited);
      await streamer.push({ type: "text_delta", itemId: "i1", delta: opening });
      await streamClock.advance(10);
      if (where === "edit") {
        expect(p.calls.map((c) => c.op)).toEqual(["send"]);
        p.fail.edit.push(limited);
        await streamer.push({ type: "text_delta", itemId: "i1", delta: answer.slice(opening.length) });
        await streamClock.advance(1500);
        // The edit was refused: the draft shows what it showed before.
        expect(p.calls.map((c) => c.op)).toEqual(["send"]);
      } else {
        expect(p.calls).toEqual([]);
      }
      const limitedAt = time.now();
      await streamer.finish(answer);
      await time.advance(59_000);
      // Inside the Retry-After no new message reached the platform: only the opening draft, if it went (the stale draft may be taken away).
      expect(p.calls.filter((c) => c.op === "send").map((c) => c.text)).toEqual(where === "edit" ? [opening] : []);
      await time.advance(1_000);
      await delivery.idle();
      const complete = p.calls.filter((c) => c.op === "send" && c.text === answer);
      expect(complete).toHaveLength(1);
      expect(complete[0]!.at).toBeGreaterThanOrEqual(limitedAt + 60_000);
      // Once: the answer is not also left in the draft, nor sent twice.
      const shown = new Map<string, string>();
      for (const c of p.calls) {
        if (c.op === "delete") shown.delete(c.id);
        else shown.set(c.id, c.text!);
      }
      expect([...shown.values()].filter((t) => t.includes("last words"))).toEqual([answer]);
      expect([...shown.values()].filter((t) => t.includes("The answer starts here"))).toEqual([answer]);
      expect(outbox.parts("r1").filter((x) => x.state === "pending")).toEqual([]);
    });
  }
});
