/**
 * The scheduler with an injected clock, a real jobs table and a recording
 * runner: a one-off job runs once at its time; a cron job runs on each tick
 * of a fast clock; downtime gives one late run, not one per missed tick; a
 * run a crash left claimed runs again once; past the background limit runs
 * wait their turn; a stop gives back what had not started; /stop ends a run
 * without cancelling the job.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BackgroundWork } from "../../src/gateway/background.ts";
import { type JobRun, type RunOutcome, Scheduler } from "../../src/gateway/jobs/scheduler.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { Telemetry, type TelemetryEvent } from "../../src/kernel/telemetry.ts";
import { openDatabase } from "../../src/store/db.ts";
import { JobStore, type NewJob } from "../../src/store/jobs.ts";
import { FakeClock, settle } from "../helpers/clock.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Tue 2026-12-01 08:30 UTC. */
const T0 = Date.UTC(2026, 11, 1, 8, 30);

let root: string;
let db: Database;
let clock: FakeClock;
let jobs: JobStore;
let background: BackgroundWork;
let telemetry: Telemetry;
let runs: Array<{ id: number; dueAt: number; late: boolean; at: number }>;
let events: TelemetryEvent<"job.run">[];
const schedulers: Scheduler[] = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-scheduler-"));
  db = openDatabase(join(root, "fermix.db"));
  clock = new FakeClock(T0);
  jobs = new JobStore(db, clock.now);
  background = new BackgroundWork(8, clock.now);
  telemetry = new Telemetry();
  events = [];
  telemetry.on("job.run", (e) => events.push(e));
  runs = [];
});
afterEach(async () => {
  for (const s of schedulers.splice(0)) s.stop();
  background.stop();
  await Promise.all(schedulers.map((s) => s.idle()));
  db.close();
  rmSync(root, { recursive: true, force: true });
});

/** A scheduler whose runner records each run and ends it with `outcome` (or waits on `gate` first). */
function scheduler(options: { outcome?: (run: JobRun) => Promise<RunOutcome> } = {}): Scheduler {
  const s = new Scheduler({
    jobs,
    background,
    clock,
    telemetry,
    log: createLogger({}, { write: () => {} }),
    run: async (run) => {
      runs.push({ id: run.job.id, dueAt: run.dueAt, late: run.late, at: clock.now() });
      return options.outcome ? options.outcome(run) : "ok";
    },
  });
  schedulers.push(s);
  return s;
}

const job = (overrides: Partial<NewJob> = {}): NewJob => ({
  request: "Remind the user to stretch",
  schedule: null,
  timezone: "UTC",
  dueAt: T0 + 5000,
  origin: { channel: "telegram", conversation: "telegram:1:", senderId: "1", role: "operator" },
  target: { channel: "telegram", chatId: "1" },
  ...overrides,
});

test("a one-off job runs once, at its due time and not before", async () => {
  const { id } = jobs.create(job());
  scheduler().start();
  await clock.advance(4999);
  expect(runs).toEqual([]);
  await clock.advance(1);
  expect(runs).toEqual([{ id, dueAt: T0 + 5000, late: false, at: T0 + 5000 }]);
  await clock.advance(DAY);
  expect(runs).toHaveLength(1);
  expect(jobs.get(id)).toMatchObject({ state: "done", runs: 1, lastOutcome: "ok" });
  expect(events.map((e) => e.metadata)).toEqual([{ channel: "telegram", kind: "once", outcome: "ok", late: false }]);
});

test("a cron job runs on each tick of the clock, each run for its own due time", async () => {
  const { id } = jobs.create(job({ schedule: "*/5 * * * *", dueAt: T0 + 5 * MINUTE }));
  scheduler().start();
  await clock.advance(30 * MINUTE);
  expect(runs.map((r) => (r.dueAt - T0) / MINUTE)).toEqual([5, 10, 15, 20, 25, 30]);
  expect(runs.every((r) => r.at === r.dueAt && !r.late && r.id === id)).toBe(true);
  expect(jobs.get(id)).toMatchObject({ state: "pending", runs: 6, dueAt: T0 + 35 * MINUTE });
});

test("a daily job over three days runs three times, at 09:00 in its own time zone", async () => {
  jobs.create(job({ schedule: "0 9 * * *", timezone: "Europe/Paris", dueAt: Date.UTC(2026, 11, 1, 8) + DAY }));
  scheduler().start();
  await clock.advance(3 * DAY);
  expect(runs.map((r) => new Date(r.at).toISOString())).toEqual(["2026-12-02T08:00:00.000Z", "2026-12-03T08:00:00.000Z", "2026-12-04T08:00:00.000Z"]);
});

test("downtime: a one-off and a repeating job that fell due meanwhile run once each at start, marked late", async () => {
  const once = jobs.create(job({ dueAt: T0 - 2 * DAY }));
  const hourly = jobs.create(job({ schedule: "0 * * * *", dueAt: T0 - 3 * DAY }));
  scheduler().start();
  await clock.advance(1000);
  expect(runs).toEqual([
    { id: hourly.id, dueAt: T0 - 3 * DAY, late: true, at: T0 },
    { id: once.id, dueAt: T0 - 2 * DAY, late: true, at: T0 },
  ]);
  // Not once per missed hour: the repeating job is next due at its next tick after now.
  expect(jobs.get(hourly.id)).toMatchObject({ state: "pending", dueAt: Date.UTC(2026, 11, 1, 9) });
  expect(events.every((e) => e.metadata.late && e.measurements.late_ms >= 2 * DAY)).toBe(true);
});

test("a run a crash left claimed runs again once at start, for the same due time", async () => {
  const { id } = jobs.create(job({ dueAt: T0 - MINUTE }));
  jobs.claim(id, T0 - 30_000); // the previous process claimed it and died
  scheduler().start();
  await clock.advance(10 * MINUTE);
  expect(runs).toEqual([{ id, dueAt: T0 - MINUTE, late: true, at: T0 }]);
  expect(jobs.get(id)!.state).toBe("done");
});

test("two schedulers on one database never run one due time twice", async () => {
  const { id } = jobs.create(job());
  scheduler().start();
  scheduler().start();
  await clock.advance(10_000);
  expect(runs.map((r) => r.id)).toEqual([id]);
});

test("past the background limit, runs wait their turn instead of being dropped", async () => {
  background = new BackgroundWork(2, clock.now);
  const gates: Array<() => void> = [];
  const s = scheduler({ outcome: () => new Promise<RunOutcome>((resolve) => gates.push(() => resolve("ok"))) });
  for (let i = 0; i < 3; i++) jobs.create(job());
  s.start();
  await clock.advance(5000);
  expect(runs).toHaveLength(2);
  expect(s.status()).toMatchObject({ state: "running", pending: 3, active: 2, waiting: 1 });
  gates.shift()!();
  await settle();
  expect(runs).toHaveLength(3);
  while (gates.length > 0) gates.shift()!();
  await s.idle();
  expect(s.status()).toMatchObject({ pending: 0, active: 0, waiting: 0 });
  expect(jobs.live()).toEqual([]);
});

test("a stop gives back the claim of a run still waiting for a slot, and leaves a run it cut short claimed", async () => {
  background = new BackgroundWork(1, clock.now);
  const s = scheduler({ outcome: (run) => new Promise<RunOutcome>((resolve) => run.signal.addEventListener("abort", () => resolve("stopped"))) });
  const first = jobs.create(job());
  const second = jobs.create(job());
  s.start();
  await clock.advance(5000);
  expect(runs.map((r) => r.id)).toEqual([first.id]);
  s.stop();
  background.stop(); // the shutdown's order: the scheduler first, then background work
  await s.idle();
  expect(jobs.get(first.id)).toMatchObject({ state: "running", runDueAt: T0 + 5000 });
  expect(jobs.get(second.id)).toMatchObject({ state: "pending", runDueAt: null });
  expect(events).toEqual([]);

  // The next start runs both: the interrupted one again, the other for the first time.
  background = new BackgroundWork(1, clock.now);
  runs = [];
  scheduler().start();
  await clock.advance(1000);
  expect(runs.map((r) => r.id).sort()).toEqual([first.id, second.id].sort());
});

test("/stop in the target conversation does not reach a job's run: it finishes, and a repeating job runs again at its next tick", async () => {
  let finish!: () => void;
  const s = scheduler({
    outcome: (run) =>
      new Promise<RunOutcome>((resolve) => {
        if (runs.length > 1) resolve("ok");
        else {
          finish = () => resolve("ok");
          run.signal.addEventListener("abort", () => resolve("stopped"));
        }
      }),
  });
  const { id } = jobs.create(job({ schedule: "*/5 * * * *", dueAt: T0 + 5 * MINUTE }));
  s.start();
  await clock.advance(5 * MINUTE);
  expect(background.list("telegram:1:").map((t) => t.state)).toEqual(["running"]);
  // What /stop calls in that conversation: it stops nothing of the run.
  expect(background.stop("telegram:1:").stopped).toBe(0);
  finish();
  await settle();
  expect(jobs.get(id)).toMatchObject({ state: "pending", lastOutcome: "ok", dueAt: T0 + 10 * MINUTE });
  await clock.advance(5 * MINUTE);
  expect(runs).toHaveLength(2);
  expect(jobs.get(id)!.lastOutcome).toBe("ok");
});

test("a job added after start is picked up at once, before the next job the timer waits for", async () => {
  jobs.create(job({ dueAt: T0 + DAY }));
  const s = scheduler();
  s.start();
  const soon = jobs.create(job({ dueAt: T0 + 2000 }));
  s.wake();
  await clock.advance(2000);
  expect(runs.map((r) => r.id)).toEqual([soon.id]);
});

test("a runner that throws counts as a failed run; the scheduler carries on", async () => {
  const s = scheduler({ outcome: async () => Promise.reject(new Error("boom")) });
  const { id } = jobs.create(job());
  s.start();
  await clock.advance(5000);
  expect(jobs.get(id)).toMatchObject({ state: "done", lastOutcome: "failed" });
  expect(events.map((e) => e.metadata.outcome)).toEqual(["failed"]);
});
