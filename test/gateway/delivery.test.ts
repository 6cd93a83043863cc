/**
 * The outbox's retrier on an injected clock: a Retry-After of a minute is
 * waited out (not dropped, not sent early), a platform down past the horizon
 * turns into a notice when it is back, a refusal stops at once, a /stop
 * cancels what is unsent, and a chat's later replies wait behind its backlog.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Delivery } from "../../src/gateway/delivery.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import { type OutboundText, type ReplyPort, SendFailed } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { Outbox } from "../../src/store/outbox.ts";
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

/** A manual clock whose sleeps end when the test advances past them. */
function manualTime(start = 1_000_000) {
  let now = start;
  const sleepers: Array<{ until: number; wake: () => void; fail: (e: unknown) => void }> = [];
  return {
    now: () => now,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        const entry = { until: now + ms, wake: resolve, fail: reject };
        sleepers.push(entry);
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
    /** Move time forward, waking every sleeper that is due, and let the work they start run. */
    async advance(ms: number) {
      now += ms;
      for (const s of sleepers.splice(0)) {
        if (s.until <= now) s.wake();
        else sleepers.push(s);
      }
      for (let i = 0; i < 20; i++) await Bun.sleep(0);
    },
  };
}

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

function build(time: ReturnType<typeof manualTime>, port: ReplyPort, horizonMs = 15 * 60_000) {
  const outbox = new Outbox(db, time.now);
  const delivery = new Delivery({
    outbox,
    presenter: partsPresenter,
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
    const time = manualTime();
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
    const time = manualTime();
    const p = platform();
    const { delivery, outbox } = build(time, p.port, 60_000);
    // Down for as long as the test says: every send fails until then.
    for (let i = 0; i < 50; i++) p.failures.push(new SendFailed("HTTP 503", true, 503));
    await delivery.say("slack", TARGET, "r1", "an answer about the tides");
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

  test("a refusal (403) stops at once: not retried, the rest of the reply not sent", async () => {
    const time = manualTime();
    const p = platform();
    const { delivery, outbox } = build(time, p.port);
    p.failures.push(new SendFailed("HTTP 403: bot was blocked", false, 403));
    expect(await delivery.say("telegram", TARGET, "r1", "one\n---\ntwo")).toBe("failed");
    await time.advance(3_600_000);
    expect(p.sent).toEqual([]);
    expect(outbox.parts("r1").map((x) => x.state)).toEqual(["failed", "failed"]);
  });

  test("a stopped turn's unsent parts are cancelled: nothing of them goes out, retries included", async () => {
    const time = manualTime();
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
    const time = manualTime();
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
