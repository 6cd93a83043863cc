/**
 * The scheduler: runs each scheduled job when it falls due, as background
 * work (counted against the daemon-wide limit, waiting its turn past it).
 *
 * Guarantees, and the faults they survive:
 * - One due time runs once: a run is claimed in the database before it
 *   starts; a second scheduler pass (or a second daemon) finds it claimed.
 * - A crash mid-run loses nothing: the claim is still there at the next
 *   start and the run happens again; its delivery is keyed by (job, due
 *   time) in the outbox, so what was already sent is not sent twice.
 * - Downtime loses nothing: a job that fell due while the daemon was down
 *   runs once at start, marked late; a repeating job runs once, not once
 *   per missed tick, and is then due at its next tick after now.
 * - A clean stop gives back claims still waiting for a slot; a run it cuts
 *   short stays claimed and runs again at the next start.
 *
 * It sleeps until the next due time (at most `maxWaitMs`, so a changed
 * clock is noticed) and is woken when a job is added or cancelled. Time
 * comes from an injected clock.
 */

import { nextRun } from "../../agent/jobs/when.ts";
import { type Clock, systemClock } from "../../kernel/clock.ts";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import type { Job, JobStore } from "../../store/jobs.ts";
import type { BackgroundWork } from "../background.ts";
import { TURN_KINDS } from "../turn/modes.ts";

/** A run that starts more than this long after its due time counts as late, and says so (ms). */
export const LATE_AFTER_MS = 60_000;
const MAX_WAIT_MS = 60_000;

/** How a run ended: answered (or already delivered before a crash), failed, empty, or stopped by /stop. */
export type RunOutcome = "ok" | "failed" | "empty" | "stopped";

/** One claimed run, handed to the runner. */
export interface JobRun {
  job: Job;
  /** The due time this run is for: with the job id, its delivery key. */
  dueAt: number;
  /** It starts well after its due time (the daemon was down, or a crash interrupted its first attempt). */
  late: boolean;
  signal: AbortSignal;
}

export interface SchedulerDeps {
  jobs: JobStore;
  background: BackgroundWork;
  /** Run one claimed job: the agent turn and the delivery of its result. */
  run(run: JobRun): Promise<RunOutcome>;
  clock?: Clock;
  /** The longest single sleep before looking again (ms); default one minute. */
  maxWaitMs?: number;
  telemetry: Telemetry;
  log: Logger;
}

/** What `fermix doctor` and the dashboard show of the scheduler. */
export interface SchedulerStatus {
  state: "stopped" | "running";
  /** Jobs still to run (pending or running). */
  pending: number;
  /** Runs going on now, and runs waiting for a background slot. */
  active: number;
  waiting: number;
  nextDueAt: number | null;
}

/** The conversation a job's run belongs to (listed by /tasks, stopped by /stop): where its result goes. */
export const targetConversation = (job: Job): string => `${job.target.channel}:${job.target.chatId}:${job.target.threadId ?? ""}`;

export class Scheduler {
  private readonly clock: Clock;
  private timer: unknown = null;
  private startedAt = 0;
  private state: "stopped" | "running" = "stopped";
  /** Aborted at stop: runs still waiting for a slot give their claim back. */
  private stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private active = 0;
  private waiting = 0;

  constructor(private readonly deps: SchedulerDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Start: runs the crash left claimed, then everything due (late ones marked), then sleeps until the next. */
  start(): void {
    if (this.state === "running") return;
    this.state = "running";
    this.stopping = new AbortController();
    this.startedAt = this.clock.now();
    const interrupted = this.deps.jobs.running();
    if (interrupted.length > 0) this.deps.log.warn("scheduled runs interrupted by a restart run again", { jobs: interrupted.map((j) => j.id).join(",") });
    for (const job of interrupted) this.launch(job, job.runDueAt ?? job.dueAt);
    this.deps.log.info("scheduler started", { pending: this.deps.jobs.countLive() });
    this.tick();
  }

  /** A job was added or cancelled: look again now. */
  wake(): void {
    if (this.state === "running") this.tick();
  }

  /** Stop: no new runs; runs waiting for a slot give their claims back; runs going on are left to the shutdown. */
  stop(): void {
    if (this.state === "stopped") return;
    this.state = "stopped";
    this.stopping.abort();
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Whether a run's abort came from a stop of the scheduler (shutdown), not from /stop. */
  get stopped(): boolean {
    return this.state === "stopped";
  }

  /** Whether it runs jobs in this process (the daemon), as opposed to `fermix ask` that only stores them. */
  get running(): boolean {
    return this.state === "running";
  }

  /** Wait until no run is in flight (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  status(): SchedulerStatus {
    return {
      state: this.state,
      pending: this.deps.jobs.countLive(),
      active: this.active,
      waiting: this.waiting,
      nextDueAt: this.deps.jobs.nextDue(),
    };
  }

  /** Claim and launch every due job, then sleep until the next one is due. */
  private tick(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.state !== "running") return;
    const now = this.clock.now();
    for (const job of this.deps.jobs.due(now)) {
      const claimed = this.deps.jobs.claim(job.id, now);
      if (claimed) this.launch(claimed, claimed.runDueAt ?? claimed.dueAt);
    }
    const next = this.deps.jobs.nextDue();
    if (next === null) return;
    const wait = Math.min(Math.max(0, next - this.clock.now()), this.deps.maxWaitMs ?? MAX_WAIT_MS);
    this.timer = this.clock.setTimeout(() => this.tick(), wait);
  }

  /** Run a claimed job as background work, waiting for a slot if all are taken. */
  private launch(job: Job, dueAt: number): void {
    const { deps } = this;
    const late = dueAt < this.startedAt || this.clock.now() - dueAt > LATE_AFTER_MS;
    const stopping = this.stopping.signal;
    const request = job.request.length > 60 ? `${job.request.slice(0, 57)}…` : job.request;
    this.waiting++;
    let over!: () => void;
    const tracked = new Promise<void>((resolve) => (over = resolve));
    this.inFlight.add(tracked);
    const done = () => {
      this.inFlight.delete(tracked);
      over();
    };
    deps.background
      .startWhenFree(
        targetConversation(job),
        `scheduled job #${job.id}: ${request}`,
        async (signal) => {
          this.waiting--;
          this.active++;
          try {
            await this.runOnce(job, dueAt, late, signal);
          } finally {
            this.active--;
            done();
          }
        },
        // /stop in the target conversation does not reach a job's run: only a shutdown interrupts it.
        { signal: stopping, stoppable: TURN_KINDS.scheduled.stoppable },
      )
      .catch(() => {
        // Stopped while waiting for a slot: the run never started; it is pending again for the same due time.
        this.waiting--;
        deps.jobs.release(job.id);
        done();
      });
  }

  private async runOnce(job: Job, dueAt: number, late: boolean, signal: AbortSignal): Promise<void> {
    const { deps } = this;
    const started = this.clock.now();
    let outcome: RunOutcome;
    try {
      outcome = await deps.run({ job, dueAt, late, signal });
    } catch (error) {
      deps.log.error("scheduled job failed unexpectedly", { job: job.id, error: describeError(error) });
      outcome = "failed";
    }
    if (signal.aborted && this.stopped) {
      // Cut short by the shutdown: still claimed, it runs again at the next start (its delivery key stays the same).
      deps.log.info("scheduled run interrupted by shutdown; it runs again at the next start", { job: job.id });
      return;
    }
    const now = this.clock.now();
    const next = job.schedule ? this.nextAfter(job, Math.max(now, dueAt)) : null;
    deps.jobs.finish(job.id, outcome, next);
    deps.telemetry.emit("job.run", {
      measurements: { duration_ms: now - started, late_ms: Math.max(0, started - dueAt) },
      metadata: { channel: job.target.channel, kind: job.schedule ? "repeat" : "once", outcome, late },
    });
    deps.log.info("scheduled job ran", {
      job: job.id,
      outcome,
      late,
      ...(next !== null ? { next_due: new Date(next).toISOString() } : {}),
    });
    this.wake();
  }

  /** A repeating job's next due time after `after`; null (done) when the schedule has no more. */
  private nextAfter(job: Job, after: number): number | null {
    try {
      return nextRun(job.schedule!, job.timezone, after);
    } catch (error) {
      this.deps.log.error("a repeating job's schedule no longer reads; it stops", { job: job.id, error: describeError(error) });
      return null;
    }
  }
}
