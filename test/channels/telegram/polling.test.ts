/**
 * The long-poll loop against the Bot API fake, wired like the daemon: a real
 * SQLite database, the real inbox and Dispatcher (album merging included).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createTelegramApi } from "../../../src/channels/telegram/api.ts";
import { TelegramAdapter } from "../../../src/channels/telegram/index.ts";
import { OffsetStore, Poller } from "../../../src/channels/telegram/poller.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { HandoffUnavailable } from "../../../src/message/index.ts";
import { ALICE, BOB, startTelegramFake, type TelegramFake } from "../../fakes/telegram.ts";
import { configFor, eventually, makeContext } from "./harness.ts";

const FAST = { timeoutSeconds: 1, backoff: { initialMs: 20, maxMs: 100 } };
/** After a rejected token: FAST's backoff would poll again several times within this window. */
const NO_POLL_MS = 150;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function fakeServer(): TelegramFake {
  const fake = startTelegramFake({ maxPollMs: 1000 });
  cleanups.push(() => fake.stop());
  return fake;
}

function adapterFor(fake: TelegramFake, token?: string): TelegramAdapter {
  const adapter = new TelegramAdapter(configFor(fake, token), FAST);
  cleanups.push(() => adapter.stop());
  return adapter;
}

function contextFor(fake: TelegramFake, opts: Parameters<typeof makeContext>[1] = {}) {
  const ctx = makeContext(configFor(fake), opts);
  cleanups.push(() => ctx.close());
  return ctx;
}

const storedOffset = (ctx: ReturnType<typeof makeContext>) =>
  (ctx.db.query("SELECT value FROM settings WHERE key LIKE 'telegram.offset.%'").get() as { value: string } | null)?.value;

describe("telegram polling", () => {
  test("clears any webhook, polls for messages and button presses only, and hands messages to the gateway", async () => {
    const fake = fakeServer();
    fake.webhookUrl = "https://stale.example/hook";
    const ctx = contextFor(fake);
    const adapter = adapterFor(fake);
    expect(adapter.state()).toMatchObject({ status: "starting", process_alive: false });
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "ready", 5000, "ready");
    expect(adapter.state()).toEqual({ status: "ready", process_alive: true });
    expect(fake.webhookUrl).toBe("");
    expect(fake.requests.findIndex((r) => r.api === "deleteWebhook")).toBeLessThan(fake.requests.findIndex((r) => r.api === "getUpdates"));
    expect(fake.calls("getUpdates")[0]!.body.allowed_updates).toEqual(["message", "callback_query"]);

    const [update] = fake.pushMessage(fake.message.text("hello fermix"));
    await eventually(() => ctx.ingested.length === 1, 5000, "ingest");
    expect(ctx.ingested[0]).toMatchObject({ channel: "telegram", text: "hello fermix", senderId: String(ALICE.id) });
    expect(storedOffset(ctx)).toBe(String(update!.update_id + 1));
  });

  test("an adapter restart resumes from the persisted offset: nothing lost, nothing repeated", async () => {
    const fake = fakeServer();
    const first = contextFor(fake);
    const dir = first.dir;
    const a = adapterFor(fake);
    // "Crash" right after the batch and its offset are committed, before Telegram hears the new offset.
    const submit = first.context.submit;
    first.context.submit = async (items, commit) => {
      const result = await submit(items, commit);
      void a.stop();
      return result;
    };
    const early = fake.pushMessage(fake.message.text("one"), fake.message.text("two"), fake.message.text("three"));
    await a.start(first.context);
    await eventually(() => first.submitted.length === 3, 5000, "first batch");
    await a.stop();
    // Telegram still holds the three: it forgets them only when a poll carries a higher offset.
    expect(fake.updates.size).toBe(3);
    first.db.close();

    fake.pushMessage(fake.message.text("four"), fake.message.text("five", { from: BOB }));
    const second = makeContext(configFor(fake), { dir });
    cleanups.push(() => {
      second.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const b = adapterFor(fake);
    await b.start(second.context);
    await eventually(() => second.submitted.length >= 2, 5000, "second batch");
    await b.stop();
    const firstPoll = fake.calls("getUpdates").find((c) => c.at >= (fake.calls("deleteWebhook")[1]?.at ?? Infinity));
    expect(firstPoll!.body.offset).toBe(early.at(-1)!.update_id + 1);
    expect(second.submitted.map((s) => s.message.text)).toEqual(["four", "five"]);
    const keys = [...first.submitted, ...second.submitted].map((s) => s.key);
    expect(new Set(keys).size).toBe(5);
  });

  test("a hand-off refused at capacity puts the old offset back and fetches the updates again", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const adapter = adapterFor(fake);
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "ready", 5000, "ready");
    fake.pushMessage(fake.message.text("warm-up"));
    await eventually(() => ctx.ingested.length === 1, 5000, "warm-up");
    const before = storedOffset(ctx);

    ctx.failNextSubmit(new HandoffUnavailable());
    fake.pushMessage(fake.message.text("retry me"));
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    expect(adapter.state().detail).toContain("capacity");
    await eventually(() => ctx.ingested.length === 2, 5000, "redelivery");
    expect(ctx.ingested[1]!.text).toBe("retry me");
    expect(Number(storedOffset(ctx))).toBe(Number(before) + 1);
    await eventually(() => adapter.state().status === "ready", 5000, "recovered");
  });

  test("a first batch refused at capacity leaves no offset stored, so a restart asks for it again", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const adapter = adapterFor(fake);
    ctx.failNextSubmit(new HandoffUnavailable());
    fake.pushMessage(fake.message.text("first ever"));
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    await adapter.stop();
    expect(storedOffset(ctx)).toBeUndefined();
    expect(ctx.ingested).toHaveLength(0);
  });

  test("an album (separate updates sharing media_group_id) reaches the gateway as one message", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake, { albumDebounceMs: 100 });
    const adapter = adapterFor(fake);
    await adapter.start(ctx.context);
    const parts = fake.message.album([{}, {}, {}], { caption: "our trip" });
    fake.pushMessage(...parts);
    await eventually(() => ctx.ingested.length === 1, 5000, "merged album");
    // A later message from the same person comes after any stray part of the album would have.
    fake.pushMessage(fake.message.text("and then this"));
    await eventually(() => ctx.ingested.length >= 2, 5000, "the later message");
    expect(ctx.ingested.map((m) => m.text)).toEqual(["our trip", "and then this"]);
    expect(ctx.ingested[0]!.text).toBe("our trip");
    expect(ctx.ingested[0]!.media.map((m) => m.kind)).toEqual(["image", "image", "image"]);
    expect(ctx.ingested[0]!.media.map((m) => m.ref)).toEqual(parts.map((p) => p.photo!.at(-1)!.file_id));
  });

  test("409 (another poller) is reported as degraded with a detail and in the log, then retried until it recovers", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const adapter = adapterFor(fake);
    fake.conflictNext(3);
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    expect(adapter.state()).toMatchObject({ process_alive: true, detail: expect.stringContaining("409") });
    expect(adapter.state().detail).toContain("another getUpdates poller");
    expect(ctx.lines.join("")).toContain("conflict");
    await eventually(() => adapter.state().status === "ready", 5000, "recovered");
    expect(fake.calls("getUpdates").filter((c) => c.status === 409)).toHaveLength(3);
    expect(ctx.lines.join("")).toContain("telegram polling recovered");
  });

  test("a 5xx is retried with backoff and the fault is visible until it recovers", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const adapter = adapterFor(fake);
    fake.failNext("getUpdates", { error_code: 502, description: "Bad Gateway" }, 2);
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    expect(adapter.state().detail).toContain("502");
    await eventually(() => adapter.state().status === "ready", 5000, "recovered");
    fake.pushMessage(fake.message.text("after the outage"));
    await eventually(() => ctx.ingested.length === 1, 5000, "ingest");
  });

  test("429 on getUpdates waits retry_after, shown as degraded meanwhile", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const adapter = adapterFor(fake);
    fake.rateLimitNext("getUpdates", 1);
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    expect(adapter.state().detail).toContain("429");
    await eventually(() => adapter.state().status === "ready", 5000, "recovered");
    const [limited, next] = fake.calls("getUpdates");
    expect(limited!.status).toBe(429);
    expect(next!.at - limited!.at).toBeGreaterThanOrEqual(900);
  });

  test("a loop that crashes is restarted by its supervisor, the crash visible until it recovers", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    fake.failNext("getUpdates", { error_code: 500, description: "Internal Server Error" });
    let crashes = 1;
    const poller = new Poller({
      api: createTelegramApi({ token: fake.token, apiRoot: fake.url }),
      token: fake.token,
      offsets: new OffsetStore(ctx.db, "7000000001"),
      deliver: async () => {},
      log: ctx.context.log,
      backoff: { initialMs: 20, maxMs: 100 },
      // The retry sleep itself throws once: a fault in the loop's own code, not Telegram's.
      sleep: async (ms, signal) => {
        if (crashes-- > 0) throw new Error("bug in the loop");
        await Bun.sleep(Math.min(ms, 50));
        void signal;
      },
    });
    cleanups.push(() => poller.stop());
    poller.start();
    await eventually(() => poller.state().detail?.includes("crashed"), 5000, "crash visible");
    expect(poller.state()).toMatchObject({ status: "degraded", process_alive: true });
    await eventually(() => poller.state().status === "ready", 5000, "recovered");
    expect(ctx.lines.join("")).toContain("telegram poller crashed; restarting");
  });

  test("a failing getUpdates is shown as its class and status; Telegram's description, which can quote a message, is in the log only", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    fake.failNext("getUpdates", { error_code: 502, description: "Bad Gateway: upstream said 'call +15551234567 about the heron'" }, 100);
    const adapter = adapterFor(fake);
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    expect(adapter.state().detail).toBe("polling failed: server error (HTTP 502); reconnecting");
    expect(ctx.lines.some((l) => l.includes("+15551234567"))).toBe(true);
  });

  test("401 (a rejected token) fails the channel and stops polling", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const wrong = "7000000001:AAWrongTokenWrongTokenWrongTokenxx";
    const adapter = adapterFor(fake, wrong);
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "failed", 5000, "failed");
    expect(adapter.state()).toMatchObject({ process_alive: false, detail: expect.stringContaining("401") });
    const calls = fake.requests.length;
    // FAST retries after 20 ms, then 40 and 80: polling that went on would call again within this window.
    await Bun.sleep(NO_POLL_MS);
    expect(fake.requests.length).toBe(calls);
    expect(adapter.state().detail).not.toContain(wrong);
    expect(ctx.lines.join("")).not.toContain(wrong);
  });

  test("stop ends a held long poll at once", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const adapter = new TelegramAdapter(configFor(fake), { timeoutSeconds: 25 });
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "ready", 5000, "ready");
    await fake.waitForRequest("getUpdates", (r) => r.body.timeout === 25);
    const started = performance.now();
    await adapter.stop();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(adapter.state().process_alive).toBe(false);
  });
});

describe("no token in logs or errors", () => {
  test("network failures, API failures and download failures never show the bot token", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    // Nothing listens here: every call fails at the network level, with the URL (and token) in Bun's error.
    const dead = { token: fake.token, url: "http://127.0.0.1:9" };
    const adapter = new TelegramAdapter(configFor(dead), FAST);
    cleanups.push(() => adapter.stop());
    await adapter.start(ctx.context);
    await eventually(() => adapter.state().status === "degraded", 5000, "degraded");
    await eventually(() => ctx.lines.some((l) => l.includes("reconnecting")), 5000, "the failure in the log");
    const port = adapter.replyPort({ chatId: String(ALICE.id) });
    const errors = await Promise.all([
      port.sendText({ text: "x", notify: true, linkPreview: false, plain: false }).catch((e: Error) => e.message),
      adapter.fetchMedia({ kind: "image", ref: "nope" }).catch((e: Error) => e.message),
    ]);
    const live = adapterFor(fake);
    errors.push(await live.fetchMedia({ kind: "image", ref: "unknown-file" }).catch((e: Error) => e.message));
    errors.push(
      await live
        .replyPort({ chatId: "-1" })
        .react("1", "👍")
        .then(
          () => "",
          (e: Error) => e.message,
        ),
    );
    const state = adapter.state().detail ?? "";
    expect(state).toContain("polling failed");
    for (const text of [...errors, state, ...ctx.lines]) {
      expect(text).toBeTruthy();
      expect(text).not.toContain(fake.token);
      expect(text).not.toContain(fake.token.split(":")[1]!);
    }
    expect(ctx.lines.some((l) => l.includes("reconnecting"))).toBe(true);
  });

  test("the adapter registers its token with the logger's redactor", async () => {
    const fake = fakeServer();
    const ctx = contextFor(fake);
    const lines: string[] = [];
    const log = new Logger({ write: (l) => lines.push(l) }, "debug", new Redactor());
    const adapter = adapterFor(fake);
    await adapter.start({ ...ctx.context, log });
    log.error(`something printed https://api/bot${fake.token}/getMe`);
    expect(lines.join("")).not.toContain(fake.token);
  });
});
