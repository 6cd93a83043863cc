/** Idempotency keys: a key is claimed once within its time to live, again once that has passed. */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore, TTL_MS } from "../../src/store/idempotency.ts";

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
