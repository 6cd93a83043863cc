/** Idempotency keys: a key is claimed once within its time to live, again once that has passed. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import type { GatewayChannel } from "../../src/config/schema.ts";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore, inboundTtlMs, TTL_MS } from "../../src/store/idempotency.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function store() {
  const dir = mkdtempSync(join(tmpdir(), "fermix-idem-"));
  dirs.push(dir);
  const db = openDatabase(join(dir, "fermix.db"));
  let now = 1_000_000;
  return { keys: new IdempotencyStore(db, () => now), advance: (ms: number) => (now += ms), db };
}

test("a fresh key is claimed once; a redelivery within the day is not", () => {
  const { keys, advance } = store();
  expect(keys.claim("slack", "Ev1")).toBe(true);
  expect(keys.claim("slack", "Ev1")).toBe(false);
  advance(TTL_MS.inbound - 1);
  expect(keys.claim("slack", "Ev1")).toBe(false);
  expect(keys.seen("slack", "Ev1")).toBe(true);
});

test("once its time has passed, the key is claimed again, for another full time to live", () => {
  const { keys, advance } = store();
  expect(keys.claim("slack", "Ev1")).toBe(true);
  advance(TTL_MS.inbound);
  expect(keys.seen("slack", "Ev1")).toBe(false);
  expect(keys.claim("slack", "Ev1")).toBe(true);
  expect(keys.claim("slack", "Ev1")).toBe(false);
  advance(TTL_MS.inbound - 1);
  expect(keys.claim("slack", "Ev1")).toBe(false);
});

test("channels and scopes keep their own keys and times", () => {
  const { keys, advance } = store();
  expect(keys.claim("slack", "k")).toBe(true);
  expect(keys.claim("whatsapp", "k")).toBe(true);
  expect(keys.claim("telegram", "media-1", "outbound_media")).toBe(true);
  advance(TTL_MS.outbound_media);
  // The media key lives a minute; the inbound ones a day.
  expect(keys.claim("telegram", "media-1", "outbound_media")).toBe(true);
  expect(keys.claim("slack", "k")).toBe(false);
});

test("a forgotten key is claimed again at once; a sweep removes only expired keys", () => {
  const { keys, advance, db } = store();
  keys.claim("slack", "a");
  keys.claim("slack", "b");
  keys.forget("slack", ["a"]);
  expect(keys.claim("slack", "a")).toBe(true);
  advance(TTL_MS.inbound);
  keys.claim("slack", "c");
  expect(keys.sweep()).toBe(2);
  expect((db.query("SELECT key FROM idempotency ORDER BY key").all() as Array<{ key: string }>).map((r) => r.key)).toEqual(["c"]);
});

const HOUR = 60 * 60_000;
const whatsappAged = (hours: number) => loadedFrom(`[fermix_channels.whatsapp]\nmax_message_age_hours = ${hours}\n`).config;

describe("each channel's inbound keys live as long as it accepts a message", () => {
  test("the time to live per channel from settings: WhatsApp's max age where longer than a day, a day for the others", () => {
    const wide = whatsappAged(48);
    expect(inboundTtlMs(wide, profileOf("whatsapp"))).toBe(48 * HOUR);
    // Slack's 5-minute signature window is inside the day; the channels that fetch their messages take none.
    for (const channel of ["slack", "telegram", "discord", "signal", "acp", "cli"] as const) expect(inboundTtlMs(wide, profileOf(channel))).toBe(24 * HOUR);
    // A max age under a day leaves the day.
    expect(inboundTtlMs(whatsappAged(2), profileOf("whatsapp"))).toBe(24 * HOUR);
    expect(inboundTtlMs(loadedFrom(null).config, profileOf("whatsapp"))).toBe(24 * HOUR);
  });

  test("with max age 48 h, a 25-hour-old WhatsApp key is still remembered; a Slack key of the same age is not", () => {
    const config = whatsappAged(48);
    const { db } = store();
    let now = 1_000_000;
    const keys = new IdempotencyStore(db, { now: () => now, inboundTtlMs: (channel) => inboundTtlMs(config, profileOf(channel as GatewayChannel)) });
    keys.claim("whatsapp", "wamid.A");
    keys.claim("slack", "Ev1");
    now += 25 * HOUR;
    expect(keys.claim("whatsapp", "wamid.A")).toBe(false);
    expect(keys.seen("slack", "Ev1")).toBe(false);
    expect(keys.claim("slack", "Ev1")).toBe(true);
    now += 23 * HOUR;
    expect(keys.claim("whatsapp", "wamid.A")).toBe(true);
  });

  test("a reload that widens the window covers keys already written; one that narrows it never drops a key early", () => {
    let maxAge = 24;
    const { db } = store();
    let now = 1_000_000;
    const keys = new IdempotencyStore(db, {
      now: () => now,
      inboundTtlMs: (channel) => inboundTtlMs(whatsappAged(maxAge), profileOf(channel as GatewayChannel)),
    });
    keys.claim("whatsapp", "written-under-24h");
    maxAge = 72;
    keys.claim("whatsapp", "written-under-72h");
    now += 30 * HOUR;
    // Written when a day was the window, kept by the 72 h in force now.
    expect(keys.sweep()).toBe(0);
    expect(keys.claim("whatsapp", "written-under-24h")).toBe(false);
    maxAge = 24;
    now += 12 * HOUR;
    // Narrowed again: the key written under 72 h keeps the 72 h it was written with.
    keys.sweep();
    expect(keys.seen("whatsapp", "written-under-72h")).toBe(true);
    now += 31 * HOUR;
    keys.sweep();
    expect(keys.seen("whatsapp", "written-under-72h")).toBe(false);
  });
});

test("keys written before seen_at existed keep the fixed times they were written with", () => {
  const dir = mkdtempSync(join(tmpdir(), "fermix-idem-"));
  dirs.push(dir);
  const path = join(dir, "fermix.db");
  const before = MIGRATIONS.filter((m) => m.version < 14);
  const old = openDatabase(path, before);
  old.run("INSERT INTO idempotency (channel, key, scope, expires_at) VALUES ('whatsapp', 'wamid.old', 'inbound', ?1)", [TTL_MS.inbound + 5_000]);
  old.close();
  const db = openDatabase(path);
  expect(db.query("SELECT seen_at FROM idempotency WHERE key = 'wamid.old'").get()).toEqual({ seen_at: 5_000 });
  // Under a 48 h window now, a key seen at 5 s is kept until 48 h after that.
  const keys = new IdempotencyStore(db, {
    now: () => 5_000 + 47 * HOUR,
    inboundTtlMs: (channel) => inboundTtlMs(whatsappAged(48), profileOf(channel as GatewayChannel)),
  });
  expect(keys.seen("whatsapp", "wamid.old")).toBe(true);
  db.close();
});
