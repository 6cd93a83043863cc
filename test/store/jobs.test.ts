/**
 * The jobs table on a real SQLite file: a due run is claimed once (two
 * claimers, one winner; a claim survives reopening the database, as after a
 * crash), finished runs leave a one-off done and a repeating job pending at
 * its next due time, and a cancelled job is never run again.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { JobStore, type NewJob } from "../../src/store/jobs.ts";

let root: string;
let path: string;
const open: Database[] = [];
const T0 = Date.UTC(2026, 11, 1, 9);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-jobs-"));
  path = join(root, "fermix.db");
});
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  rmSync(root, { recursive: true, force: true });
});

function storeAt(now: () => number = () => T0): JobStore {
  const db = openDatabase(path);
  open.push(db);
  return new JobStore(db, now);
}

const job = (overrides: Partial<NewJob> = {}): NewJob => ({
  request: "Remind the user to stretch",
  schedule: null,
  timezone: "Europe/Paris",
  dueAt: T0 + 60_000,
  origin: { channel: "telegram", conversation: "telegram:1:", senderId: "1", role: "operator" },
  target: { channel: "telegram", chatId: "1" },
  ...overrides,
});

test("a job is kept with where it came from and where it goes", () => {
  const store = storeAt();
  const made = store.create(job({ target: { channel: "slack", chatId: "D1", threadId: "17.1" } }));
  expect(store.get(made.id)).toEqual({
    id: made.id,
    request: "Remind the user to stretch",
    schedule: null,
    timezone: "Europe/Paris",
    dueAt: T0 + 60_000,
    runDueAt: null,
    state: "pending",
    origin: { channel: "telegram", conversation: "telegram:1:", senderId: "1", role: "operator" },
    target: { channel: "slack", chatId: "D1", threadId: "17.1" },
    runs: 0,
    lastRunAt: null,
    lastOutcome: null,
    createdAt: T0,
  });
  expect(store.countLive()).toBe(1);
  expect(store.nextDue()).toBe(T0 + 60_000);
});

test("a run is claimed only when due, and only once, also by two stores on one file", () => {
  const a = storeAt();
  const b = storeAt();
  const { id } = a.create(job());
  expect(a.claim(id, T0)).toBeUndefined();
  expect(a.due(T0)).toEqual([]);
  expect(a.due(T0 + 60_000).map((j) => j.id)).toEqual([id]);
  const claimed = a.claim(id, T0 + 60_000);
  expect(claimed).toMatchObject({ state: "running", runDueAt: T0 + 60_000 });
  expect(b.claim(id, T0 + 60_000)).toBeUndefined();
  expect(b.due(T0 + 120_000)).toEqual([]);
  expect(b.nextDue()).toBeNull();
  expect(b.countLive()).toBe(1);
});

test("a claim outlives the process: after reopening, the run is still claimed for the same due time", () => {
  const first = storeAt();
  const { id } = first.create(job());
  first.claim(id, T0 + 61_000);
  open.pop()!.close();
  const second = storeAt();
  expect(second.running().map((j) => [j.id, j.runDueAt])).toEqual([[id, T0 + 60_000]]);
  second.release(id);
  expect(second.get(id)).toMatchObject({ state: "pending", runDueAt: null, dueAt: T0 + 60_000 });
});

test("finishing: a one-off is done; a repeating job is pending at the next due time it is given", () => {
  let now = T0;
  const store = storeAt(() => now);
  const once = store.create(job());
  const daily = store.create(job({ schedule: "0 9 * * *", dueAt: T0 + 60_000 }));
  now = T0 + 60_000;
  store.claim(once.id, now);
  store.claim(daily.id, now);
  store.finish(once.id, "ok", null);
  store.finish(daily.id, "ok", T0 + 86_400_000);
  expect(store.get(once.id)).toMatchObject({ state: "done", runs: 1, lastOutcome: "ok", lastRunAt: now });
  expect(store.get(daily.id)).toMatchObject({ state: "pending", runs: 1, dueAt: T0 + 86_400_000, runDueAt: null });
  expect(store.live().map((j) => j.id)).toEqual([daily.id]);
});

test("a cancelled job never runs; cancelling during a run lets the run end but not come back", () => {
  const store = storeAt();
  const a = store.create(job());
  const b = store.create(job({ schedule: "*/5 * * * *" }));
  expect(store.cancel(a.id)).toBe(true);
  expect(store.cancel(a.id)).toBe(false);
  expect(store.claim(a.id, T0 + 60_000)).toBeUndefined();
  store.claim(b.id, T0 + 60_000);
  expect(store.cancel(b.id)).toBe(true);
  store.finish(b.id, "ok", T0 + 300_000);
  expect(store.get(b.id)!.state).toBe("cancelled");
  expect(store.countLive()).toBe(0);
});
