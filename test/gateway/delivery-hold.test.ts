/**
 * A part the platform keeps refusing, on an injected clock. While the
 * platform takes other messages for the chat, the part is set aside
 * `hold` after its first failure: its replacement (a file's text inline, or
 * one line saying what was not sent) goes in its place and the chat's later
 * replies follow. While every call fails (an outage), nothing is set aside:
 * the part and everything after it wait, and go in order when the platform
 * is back. The hold is read at each failure (a reload changes it) and
 * counted across a restart.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SendFailed } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { FakeClock } from "../helpers/clock.ts";
import { buildDelivery, scriptedPlatform } from "../helpers/delivery.ts";
import { TARGET } from "../store/fixtures/outbox-reply.ts";

let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-hold-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

const SCRIPT = { filename: "snippet.py", mime: "text/x-python", content: 'print("hello")' };
const serverError = () => new SendFailed("HTTP 500: Internal Server Error", true, 500);

/** Advance in one-second steps until `done` or `limitMs` has passed; returns the time it took. */
async function until(time: FakeClock, done: () => boolean, limitMs: number): Promise<number> {
  const start = time.now();
  while (!done() && time.now() - start < limitMs) await time.advance(1000);
  return time.now() - start;
}

describe("a part the platform refuses while it takes the chat's other messages", () => {
  test("a file: set aside after the hold, its text inline in its place, and the next reply after it", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    p.script.refuse = (call) => (call.op === "media" ? serverError() : undefined);
    const { delivery, outbox } = buildDelivery(db, root, time, p.port, { holdMs: 30_000 });
    const reply = [...delivery.record("telegram", TARGET, "r1", "Here is the script."), ...delivery.recordFiles("telegram", TARGET, "r1", [SCRIPT])];
    const firstFailure = time.now();
    expect(await delivery.send(reply, p.port)).toBe("deferred");
    expect(await delivery.say("telegram", TARGET, "r2", "The next answer.", p.port, undefined, "reply")).toBe("deferred");

    // Inside the hold the file is tried again, and nothing overtakes it.
    await time.advance(29_000);
    expect(p.tries("media")).toBeGreaterThan(1);
    expect(p.delivered()).toEqual(["Here is the script."]);

    const took = await until(time, () => p.delivered().includes("The next answer."), 10_000);
    expect(time.now() - firstFailure).toBeLessThanOrEqual(31_000);
    expect(took).toBeLessThan(10_000);
    await delivery.idle();
    expect(p.delivered()).toEqual(["Here is the script.", 'snippet.py:\nprint("hello")', "The next answer."]);
    const file = outbox.parts("r1").find((x) => x.payload.kind === "media")!;
    expect(file.state).toBe("failed");
    expect(outbox.parts("r2").map((x) => x.state)).toEqual(["sent"]);
  });

  test("a text: one line says what was not sent, and later replies go", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    p.script.refuse = (call) => (call.text === "A poisoned message about the harbour" ? serverError() : undefined);
    const { delivery } = buildDelivery(db, root, time, p.port, { holdMs: 20_000 });
    await delivery.say("slack", TARGET, "r1", "A poisoned message about the harbour\n---\nand its second part", p.port, undefined, "reply");
    await delivery.say("slack", TARGET, "r2", "The next answer.", p.port, undefined, "reply");
    await until(time, () => p.delivered().includes("The next answer."), 40_000);
    await delivery.idle();
    expect(p.delivered()).toEqual([
      "⚠️ I couldn't deliver part of an answer: Slack kept refusing it while it took other messages. It began: “A poisoned message about the harbour”.",
      "and its second part",
      "The next answer.",
    ]);
  });

  test("a file refused outright (4xx) is replaced at once, without waiting for the hold", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    p.script.refuse = (call) => (call.op === "media" ? new SendFailed("HTTP 400: Bad Request: wrong file", false, 400) : undefined);
    const { delivery } = buildDelivery(db, root, time, p.port, { holdMs: 60_000 });
    const reply = [...delivery.record("telegram", TARGET, "r1", "Here is the script."), ...delivery.recordFiles("telegram", TARGET, "r1", [SCRIPT])];
    expect(await delivery.send(reply, p.port)).toBe("failed");
    expect(p.delivered()).toEqual(["Here is the script.", 'snippet.py:\nprint("hello")']);
  });

  test("the hold is read at each failure: a reload that shortens it sets the part aside sooner", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    p.script.refuse = (call) => (call.op === "media" ? serverError() : undefined);
    let holdMs = 3_600_000;
    const { delivery } = buildDelivery(db, root, time, p.port, { holdMs: () => holdMs });
    await delivery.send(delivery.recordFiles("telegram", TARGET, "r1", [SCRIPT]), p.port);
    // An hour's hold: two minutes of failures set nothing aside.
    await time.advance(120_000);
    expect(p.delivered()).toEqual([]);
    holdMs = 10_000;
    await until(time, () => p.delivered().length > 0, 70_000);
    expect(p.delivered()).toEqual(['snippet.py:\nprint("hello")']);
  });

  test("a notice that keeps failing is dropped once another call to the chat went through, never replaced by another notice", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    p.script.refuse = (call) => (call.text?.includes("couldn't") ? serverError() : undefined);
    const { delivery, outbox } = buildDelivery(db, root, time, p.port, { holdMs: 10_000 });
    const watched = delivery.watch("telegram", TARGET, p.port);
    await delivery.send(delivery.record("telegram", TARGET, "r1:undelivered", "⚠️ I couldn't deliver an answer.", 0, undefined, "undelivered_notice"), watched);
    await delivery.say("telegram", TARGET, "r2", "The next answer.", watched, undefined, "reply");
    // Nothing else reaches the chat: the notice holds past the hold.
    await time.advance(30_000);
    expect(p.delivered()).toEqual([]);
    // Typing goes through: the chat takes calls, the notice is the trouble.
    await watched.typing();
    await until(time, () => p.delivered().length > 0, 70_000);
    await delivery.idle();
    expect(p.delivered()).toEqual(["The next answer."]);
    expect(outbox.parts("r1:undelivered").map((x) => x.state)).toEqual(["failed"]);
    expect(outbox.parts("r1:undelivered:instead0")).toEqual([]);
  });
});

describe("a platform that takes nothing (an outage)", () => {
  test("nothing is set aside however long past the hold; when it is back, the file goes as a file, then the next reply", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    let down = true;
    p.script.refuse = () => (down ? serverError() : undefined);
    const { delivery, outbox } = buildDelivery(db, root, time, p.port, { holdMs: 5_000 });
    const watched = delivery.watch("telegram", TARGET, p.port);
    const reply = [...delivery.record("telegram", TARGET, "r1", "Here is the script."), ...delivery.recordFiles("telegram", TARGET, "r1", [SCRIPT])];
    await delivery.send(reply, watched);
    await delivery.say("telegram", TARGET, "r2", "The next answer.", watched, undefined, "reply");
    // Five minutes down, sixty times the hold; typing fails too.
    for (let i = 0; i < 30; i++) {
      await watched.typing().catch(() => {});
      await time.advance(10_000);
    }
    expect(p.delivered()).toEqual([]);
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["pending", "pending"]);
    down = false;
    await until(time, () => p.delivered().includes("The next answer."), 120_000);
    await delivery.idle();
    expect(p.delivered()).toEqual(["Here is the script.", "file:snippet.py", "The next answer."]);
    expect(p.delivered().join("\n")).not.toContain("couldn't");
  });

  test("a text held through an outage past the horizon is given up with the notice, not set aside", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    let down = true;
    p.script.refuse = () => (down ? serverError() : undefined);
    const { delivery, outbox } = buildDelivery(db, root, time, p.port, { holdMs: 5_000, horizonMs: 60_000 });
    await delivery.say("slack", TARGET, "r1", "An answer about the tides", p.port, undefined, "reply");
    await until(time, () => outbox.parts("r1")[0]!.state === "failed", 120_000);
    down = false;
    await until(time, () => p.delivered().length > 0, 600_000);
    await delivery.idle();
    expect(p.delivered()).toEqual([
      "⚠️ I couldn't deliver an answer: Slack was not taking messages for 1 min. It began: “An answer about the tides”. Ask me again if you still need it.",
    ]);
  });
});

describe("across a restart", () => {
  test("the hold counts from the part's first failure before the restart: it is set aside at its first failure after", async () => {
    const time = new FakeClock(1_000_000);
    const p = scriptedPlatform(time.now);
    p.script.refuse = (call) => (call.op === "media" ? serverError() : undefined);
    const before = buildDelivery(db, root, time, p.port, { holdMs: 30_000 });
    await before.delivery.send(before.delivery.recordFiles("telegram", TARGET, "r1", [SCRIPT]), p.port);
    await before.delivery.say("telegram", TARGET, "r2", "The next answer.", p.port, undefined, "reply");
    await before.delivery.close();
    expect(p.delivered()).toEqual([]);

    // Down for a minute; started again, the file is tried once more and set aside.
    await time.advance(60_000);
    const after = buildDelivery(db, root, time, p.port, { holdMs: 30_000 });
    const mediaBefore = p.tries("media");
    after.delivery.resume();
    await until(time, () => p.delivered().includes("The next answer."), 5_000);
    await after.delivery.idle();
    expect(p.tries("media")).toBe(mediaBefore + 1);
    expect(p.delivered()).toEqual(['snippet.py:\nprint("hello")', "The next answer."]);
  });
});
