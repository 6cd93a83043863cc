/**
 * Scheduled jobs in SQLite: a request the assistant runs when it falls due,
 * once or on a cron schedule, and where its result goes. A run is claimed
 * in one statement (pending and due → running, with the due time it is for)
 * before it starts, so no due time runs twice; a claim a crash interrupted
 * is still `running` at the next start and is run again — its delivery is
 * keyed by (job, due time) in the outbox, so the user gets it once. The
 * store computes no times: the scheduler says when a repeating job is due next.
 */
import type { Database, Statement } from "bun:sqlite";
import type { GatewayChannel } from "../message/index.ts";

export type JobState = "pending" | "running" | "done" | "cancelled";

/** Where a job's result is delivered. */
export interface JobTarget {
  channel: GatewayChannel;
  chatId: string;
  threadId?: string;
}

/** Who scheduled a job, and from where: the run reads that conversation and uses that sender's memory and rights. */
export interface JobOrigin {
  channel: GatewayChannel;
  conversation: string;
  senderId: string;
  role: "operator" | "user";
}

export interface Job {
  id: number;
  request: string;
  /** A cron expression for a repeating job; null for a job that runs once. */
  schedule: string | null;
  /** The IANA time zone the schedule (and the job's times, as shown) are in. */
  timezone: string;
  /** When it is due next (epoch ms). */
  dueAt: number;
  /** For a claimed run: the due time it is for (its delivery key). */
  runDueAt: number | null;
  state: JobState;
  origin: JobOrigin;
  target: JobTarget;
  runs: number;
  lastRunAt: number | null;
  lastOutcome: string | null;
  createdAt: number;
}

export interface NewJob {
  request: string;
  schedule: string | null;
  timezone: string;
  dueAt: number;
  origin: JobOrigin;
  target: JobTarget;
}

interface Row {
  id: number;
  request: string;
  schedule: string | null;
  timezone: string;
  due_at: number;
  run_due_at: number | null;
  state: JobState;
  origin_channel: string;
  origin_conversation: string;
  origin_sender: string;
  origin_role: "operator" | "user";
  target_channel: string;
  target_chat: string;
  target_thread: string | null;
  runs: number;
  last_run_at: number | null;
  last_outcome: string | null;
  created_at: number;
}

const toJob = (row: Row): Job => {
  const target: JobTarget = { channel: row.target_channel as GatewayChannel, chatId: row.target_chat };
  if (row.target_thread !== null) target.threadId = row.target_thread;
  return {
    id: row.id,
    request: row.request,
    schedule: row.schedule,
    timezone: row.timezone,
    dueAt: row.due_at,
    runDueAt: row.run_due_at,
    state: row.state,
    origin: { channel: row.origin_channel as GatewayChannel, conversation: row.origin_conversation, senderId: row.origin_sender, role: row.origin_role },
    target,
    runs: row.runs,
    lastRunAt: row.last_run_at,
    lastOutcome: row.last_outcome,
    createdAt: row.created_at,
  };
};

const LIVE = "state IN ('pending', 'running')";

export class JobStore {
  private readonly insertStmt: Statement;
  private readonly getStmt: Statement;
  private readonly liveStmt: Statement;
  private readonly dueStmt: Statement;
  private readonly nextDueStmt: Statement;
  private readonly runningStmt: Statement;
  private readonly claimStmt: Statement;
  private readonly releaseStmt: Statement;
  private readonly finishStmt: Statement;
  private readonly cancelStmt: Statement;
  private readonly countStmt: Statement;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.insertStmt = db.query(
      `INSERT INTO jobs (request, schedule, timezone, due_at, state, origin_channel, origin_conversation, origin_sender, origin_role,
                         target_channel, target_chat, target_thread, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12) RETURNING *`,
    );
    this.getStmt = db.query("SELECT * FROM jobs WHERE id = ?1");
    this.liveStmt = db.query(`SELECT * FROM jobs WHERE ${LIVE} ORDER BY due_at, id`);
    this.dueStmt = db.query("SELECT * FROM jobs WHERE state = 'pending' AND due_at <= ?1 ORDER BY due_at, id");
    this.nextDueStmt = db.query("SELECT MIN(due_at) AS due FROM jobs WHERE state = 'pending'");
    this.runningStmt = db.query("SELECT * FROM jobs WHERE state = 'running' ORDER BY run_due_at, id");
    this.claimStmt = db.query(
      "UPDATE jobs SET state = 'running', run_due_at = due_at, updated_at = ?2 WHERE id = ?1 AND state = 'pending' AND due_at <= ?2 RETURNING *",
    );
    this.releaseStmt = db.query("UPDATE jobs SET state = 'pending', run_due_at = NULL, updated_at = ?2 WHERE id = ?1 AND state = 'running'");
    this.finishStmt = db.query(
      `UPDATE jobs SET state = CASE WHEN ?3 IS NULL THEN 'done' ELSE 'pending' END, due_at = COALESCE(?3, due_at), run_due_at = NULL,
              runs = runs + 1, last_run_at = ?4, last_outcome = ?2, updated_at = ?4
       WHERE id = ?1 AND state = 'running'`,
    );
    this.cancelStmt = db.query(`UPDATE jobs SET state = 'cancelled', updated_at = ?2 WHERE id = ?1 AND ${LIVE}`);
    this.countStmt = db.query(`SELECT COUNT(*) AS n FROM jobs WHERE ${LIVE}`);
  }

  create(job: NewJob): Job {
    const row = this.insertStmt.get(
      job.request,
      job.schedule,
      job.timezone,
      job.dueAt,
      job.origin.channel,
      job.origin.conversation,
      job.origin.senderId,
      job.origin.role,
      job.target.channel,
      job.target.chatId,
      job.target.threadId ?? null,
      this.now(),
    ) as Row;
    return toJob(row);
  }

  get(id: number): Job | undefined {
    const row = this.getStmt.get(id) as Row | null;
    return row ? toJob(row) : undefined;
  }

  /** Every job still to run (pending, or claimed and running), soonest first. */
  live(): Job[] {
    return (this.liveStmt.all() as Row[]).map(toJob);
  }

  /** Pending jobs due at `now` or earlier, oldest due first. */
  due(now: number): Job[] {
    return (this.dueStmt.all(now) as Row[]).map(toJob);
  }

  /** The earliest due time of a pending job, or null when none waits. */
  nextDue(): number | null {
    return (this.nextDueStmt.get() as { due: number | null }).due;
  }

  /** Claimed runs: at start, the ones a crash interrupted. */
  running(): Job[] {
    return (this.runningStmt.all() as Row[]).map(toJob);
  }

  /** Claim a due run (pending and due → running, for its due time); undefined when it is not due or someone claimed it first. */
  claim(id: number, now: number): Job | undefined {
    const row = this.db.transaction(() => this.claimStmt.get(id, now) as Row | null)();
    return row ? toJob(row) : undefined;
  }

  /** Give a claim back without running (the daemon stops before the run started): pending again, for the same due time. */
  release(id: number): void {
    this.releaseStmt.run(id, this.now());
  }

  /** A claimed run is over: done, or — for a repeating job — pending again at `nextDueAt`. */
  finish(id: number, outcome: string, nextDueAt: number | null): void {
    this.finishStmt.run(id, outcome.slice(0, 200), nextDueAt, this.now());
  }

  /** Cancel a job that has not finished; false when it had (or does not exist). A run already going finishes, but not again. */
  cancel(id: number): boolean {
    return this.cancelStmt.run(id, this.now()).changes > 0;
  }

  /** How many jobs are still to run. */
  countLive(): number {
    return (this.countStmt.get() as { n: number }).n;
  }
}
