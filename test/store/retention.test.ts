/** Bounded disk: the retention sweep deletes old finished rows and keeps recent ones (injected clock). */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import type { GatewayChannel } from "../../src/config/schema.ts";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore, inboundTtlMs } from "../../src/store/idempotency.ts";
import { Inbox } from "../../src/store/inbox.ts";
import { Outbox } from "../../src/store/outbox.ts";
import { sweep } from "../../src/store/retention.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const DAY = 24 * 60 * 60_000;
let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-retention-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

const text = (t: string) => ({ kind: "text" as const, message: { text: t, notify: true, linkPreview: false as const, plain: false } });

test("finished outbox parts and stale inbox entries older than their days go; recent ones, pending parts and thread memory stay", async () => {
  let now = Date.UTC(2026, 10, 1);
  const clock = () => now;
  const idempotency = new IdempotencyStore(db, clock);
  const outbox = new Outbox(db, clock);
  const inbox = new Inbox(db, idempotency, clock);
  const spoolDir = join(root, "spool");

  // Day 0: a reply sent in a thread, one refused, one still waiting; an inbox entry that never completed; a spooled file.
  const [old] = outbox.record("r-old", "slack", { chatId: "C1", threadId: "111.1" }, [text("old answer")]);
  outbox.markSent(old!, "ts-1");
  const [refused] = outbox.record("r-refused", "telegram", { chatId: "7" }, [text("refused")]);
  outbox.markFailed(refused!.id, "chat not found");
  outbox.record("r-waiting", "telegram", { chatId: "7" }, [text("still waiting")]);
  inbox.acceptNow("telegram", [
    { key: "u-old", message: { channel: "telegram", chatId: "7", senderId: "7", messageId: "1", text: "hi", media: [], receivedAt: now } },
  ]);
  mkdirSync(join(spoolDir, "r-old"), { recursive: true });
  writeFileSync(join(spoolDir, "r-old", "0-snippet.py"), "print(1)");
  utimesSync(join(spoolDir, "r-old"), new Date(now), new Date(now));

  // Day 8: a fresh reply, and a message just accepted, its turn not yet run.
  now += 8 * DAY;
  const [fresh] = outbox.record("r-fresh", "telegram", { chatId: "7" }, [text("fresh answer")]);
  outbox.markSent(fresh!, "m-2");
  inbox.acceptNow("telegram", [
    { key: "u-recent", message: { channel: "telegram", chatId: "7", senderId: "7", messageId: "3", text: "just now", media: [], receivedAt: now } },
  ]);

  const swept = sweep({ idempotency, outbox, inbox, spoolDir, now: clock }, { outboxDays: 7, inboxDays: 7 });
  expect(swept).toMatchObject({ outbox: 2, inbox: 1, spool: 1 });
  expect(outbox.parts("r-old")).toEqual([]);
  expect(outbox.parts("r-refused")).toEqual([]);
  expect(outbox.parts("r-fresh").map((p) => p.state)).toEqual(["sent"]);
  // A part still waiting to be sent is never swept, however old.
  expect(outbox.parts("r-waiting").map((p) => p.state)).toEqual(["pending"]);
  // The old entry went; the one accepted a moment ago stays for its turn.
  expect(inbox.pending().map((entry) => entry.message.text)).toEqual(["just now"]);
  expect(existsSync(join(spoolDir, "r-old"))).toBe(false);
  // The bot still knows the Slack thread it replied in.
  expect(outbox.hasRepliedInThread("slack", "C1", "111.1")).toBe(true);

  // At start the inbox is left for the replay.
  inbox.acceptNow("telegram", [
    { key: "u-new", message: { channel: "telegram", chatId: "7", senderId: "7", messageId: "2", text: "yo", media: [], receivedAt: now } },
  ]);
  now += 30 * DAY;
  expect(sweep({ idempotency, outbox, inbox, spoolDir, now: clock }, { outboxDays: 7, inboxDays: 7 }, { inbox: false }).inbox).toBe(0);
  expect(inbox.pending()).toHaveLength(2);
});

test("with WhatsApp's max age at 48 h, the sweep keeps a 25-hour-old WhatsApp key (a replay inside the window finds it) and drops a Telegram key of the same age", () => {
  let now = Date.UTC(2026, 10, 1);
  const clock = () => now;
  const config = loadedFrom(`[fermix_channels.whatsapp]\nmax_message_age_hours = 48\n`).config;
  const idempotency = new IdempotencyStore(db, { now: clock, inboundTtlMs: (channel) => inboundTtlMs(config, profileOf(channel as GatewayChannel)) });
  const deps = { idempotency, outbox: new Outbox(db, clock), inbox: new Inbox(db, idempotency, clock), spoolDir: join(root, "spool"), now: clock };
  idempotency.claim("whatsapp", "wamid.HBgL");
  idempotency.claim("telegram", "update-1");

  now += 25 * 60 * 60_000;
  expect(sweep(deps, { outboxDays: 7, inboxDays: 7 }).idempotency).toBe(1);
  expect(idempotency.seen("whatsapp", "wamid.HBgL")).toBe(true);
  expect(idempotency.claim("whatsapp", "wamid.HBgL")).toBe(false);
  expect(idempotency.seen("telegram", "update-1")).toBe(false);

  now += 23 * 60 * 60_000;
  expect(sweep(deps, { outboxDays: 7, inboxDays: 7 }).idempotency).toBe(1);
  expect(idempotency.seen("whatsapp", "wamid.HBgL")).toBe(false);
});
