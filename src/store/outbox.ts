/**
 * The durable outbox. Every outbound message is recorded before it is sent
 * and marked with the platform's id after. A part is `pending` until the
 * moment before its send, `sending` during it, then `sent`, `failed` or
 * `cancelled` (a /stop, or a replay that superseded it). After a crash,
 * `sending` parts become `unknown` and are never re-sent: at most once per
 * part, never twice.
 *
 * A part that a platform outage held back stays `pending` with `not_before`
 * set: the retrier sends it then. A failure that may heal (`transient`) is
 * picked up again after a restart; a permanent one is not.
 *
 * Each row says what it is for (`purpose`); the reply key is only an
 * identity, and nothing is read from its shape.
 */
import type { Database, Statement } from "bun:sqlite";
import type { GatewayChannel, OutboundMedia, OutboundText, ReplyTarget } from "../message/index.ts";

export type OutboxPayload =
  /** `fallback`: the same part as plain text, sent instead if the platform rejects the formatting. */
  | { kind: "text"; message: OutboundText; fallback?: OutboundText[] }
  /** `inline`: the file's text, sent as messages instead when the file itself cannot be delivered. */
  | { kind: "media"; media: OutboundMedia; inline?: string };

export type OutboxState = "pending" | "sending" | "sent" | "failed" | "unknown" | "cancelled";

/**
 * What a row is for: how long it is retried and what the user is told when
 * it cannot go follow from it (src/gateway/delivery/).
 * - `reply`: (part of) the answer to a message, streamed or recorded whole, with its files;
 * - `notice`: a line said beside an answer (a command's reply, a fault, a tool's message);
 * - `background`: a /background task's result; `job`: a scheduled job's result;
 * - `media`: an attachment a tool sent while a turn ran, under a key of its own (a background task's, a job's);
 * - `inline_fallback`: a file's text, sent as messages because the file could not be;
 * - `undelivered_notice`: the user told that something could not be delivered.
 */
export const OUTBOX_PURPOSES = ["reply", "notice", "background", "job", "media", "inline_fallback", "undelivered_notice"] as const;
export type OutboxPurpose = (typeof OUTBOX_PURPOSES)[number];

export interface OutboxPart {
  id: number;
  replyKey: string;
  part: number;
  channel: GatewayChannel;
  target: ReplyTarget;
  payload: OutboxPayload;
  state: OutboxState;
  platformId: string | null;
  /** Send attempts that failed so far. */
  attempts: number;
  /** Epoch ms before which a retry must not be tried (a backoff or the platform's Retry-After). */
  notBefore: number | null;
  /** Sent by a streaming turn while it ran: superseded, never resumed, when that turn is replayed. */
  live: boolean;
  purpose: OutboxPurpose;
  /** Epoch ms of the first failed send; null while none failed. */
  firstFailedAt: number | null;
  createdAt: number;
}

export interface RecordOptions {
  /** The first part number; default: after the reply's last part. */
  firstPart?: number;
  live?: boolean;
  notBefore?: number;
  /** Default `reply`. */
  purpose?: OutboxPurpose;
}

interface Row {
  id: number;
  reply_key: string;
  part: number;
  channel: string;
  chat_id: string;
  thread_id: string | null;
  kind: string;
  payload: string;
  state: OutboxState;
  platform_id: string | null;
  attempts: number;
  not_before: number | null;
  live: number;
  purpose: OutboxPurpose;
  first_failed_at: number | null;
  created_at: number;
}

const toPart = (row: Row): OutboxPart => {
  const target: ReplyTarget = { chatId: row.chat_id };
  const stored = JSON.parse(row.payload) as { payload: OutboxPayload; replyTo?: string };
  if (row.thread_id !== null) target.threadId = row.thread_id;
  if (stored.replyTo) target.replyTo = stored.replyTo;
  return {
    id: row.id,
    replyKey: row.reply_key,
    part: row.part,
    channel: row.channel as GatewayChannel,
    target,
    payload: stored.payload,
    state: row.state,
    platformId: row.platform_id,
    attempts: row.attempts,
    notBefore: row.not_before,
    live: row.live === 1,
    purpose: row.purpose,
    firstFailedAt: row.first_failed_at,
    createdAt: row.created_at,
  };
};

const COLUMNS =
  "id, reply_key, part, channel, chat_id, thread_id, kind, payload, state, platform_id, attempts, not_before, live, purpose, first_failed_at, created_at";

export class Outbox {
  private readonly insertStmt: Statement;
  private readonly byReplyStmt: Statement;
  private readonly setStateStmt: Statement;
  private readonly sentStmt: Statement;
  private readonly deferStmt: Statement;
  private readonly cancelStmt: Statement;
  private readonly resumableStmt: Statement;
  private readonly orphanStmt: Statement;
  private readonly revivableStmt: Statement;
  private readonly nextPartStmt: Statement;
  private readonly threadStmt: Statement;
  private readonly touchThreadStmt: Statement;
  private readonly sweepStmt: Statement;
  private readonly stateStmt: Statement;
  private readonly chatPendingStmt: Statement;
  private readonly forgetStmt: Statement;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.insertStmt = db.query(
      `INSERT INTO outbox (reply_key, part, channel, chat_id, thread_id, kind, payload, state, live, not_before, purpose, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?9, ?11, ?10, ?10) ON CONFLICT (reply_key, part) DO NOTHING`,
    );
    this.byReplyStmt = db.query(`SELECT ${COLUMNS} FROM outbox WHERE reply_key = ?1 ORDER BY part`);
    this.setStateStmt = db.query("UPDATE outbox SET state = ?2, error = ?3, transient = ?4, updated_at = ?5 WHERE id = ?1");
    this.sentStmt = db.query("UPDATE outbox SET state = 'sent', platform_id = ?2, error = NULL, updated_at = ?3 WHERE id = ?1");
    this.deferStmt = db.query(
      `UPDATE outbox SET state = 'pending', attempts = attempts + 1, not_before = ?2, error = ?3, transient = 1,
       first_failed_at = COALESCE(first_failed_at, ?5), updated_at = ?4 WHERE id = ?1`,
    );
    this.cancelStmt = db.query("UPDATE outbox SET state = 'cancelled', error = ?2, updated_at = ?3 WHERE reply_key = ?1 AND state = 'pending'");
    this.resumableStmt = db.query(`SELECT ${COLUMNS} FROM outbox WHERE state = 'pending' ORDER BY id`);
    this.orphanStmt = db.query("UPDATE outbox SET state = 'unknown', updated_at = ?1 WHERE state = 'sending'");
    this.revivableStmt = db.query("UPDATE outbox SET state = 'pending', updated_at = ?1 WHERE state = 'failed' AND transient = 1");
    this.nextPartStmt = db.query("SELECT COALESCE(MAX(part) + 1, 0) AS next FROM outbox WHERE reply_key = ?1");
    this.threadStmt = db.query("SELECT 1 AS found FROM reply_threads WHERE channel = ?1 AND chat_id = ?2 AND thread_id = ?3");
    this.touchThreadStmt = db.query(
      `INSERT INTO reply_threads (channel, chat_id, thread_id, last_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (channel, chat_id, thread_id) DO UPDATE SET last_at = excluded.last_at`,
    );
    this.sweepStmt = db.query("DELETE FROM outbox WHERE state NOT IN ('pending', 'sending') AND updated_at < ?1");
    this.stateStmt = db.query("SELECT state FROM outbox WHERE id = ?1");
    this.chatPendingStmt = db.query(`SELECT ${COLUMNS} FROM outbox WHERE state = 'pending' AND channel = ?1 AND chat_id = ?2 ORDER BY id`);
    this.forgetStmt = db.query("DELETE FROM outbox WHERE reply_key = ?1 AND state IN ('pending', 'sending')");
  }

  /**
   * Record parts of a reply (idempotent per reply key and part number) and
   * return them, in order. Call inside the transaction that finishes the
   * turn, so the reply and the turn's end commit together.
   */
  record(replyKey: string, channel: GatewayChannel, target: ReplyTarget, payloads: OutboxPayload[], options: RecordOptions = {}): OutboxPart[] {
    const start = options.firstPart ?? this.nextPart(replyKey);
    const now = this.now();
    const stored = (payload: OutboxPayload) => JSON.stringify(target.replyTo ? { payload, replyTo: target.replyTo } : { payload });
    this.db.transaction(() => {
      for (const [i, payload] of payloads.entries()) {
        this.insertStmt.run(
          replyKey,
          start + i,
          channel,
          target.chatId,
          target.threadId ?? null,
          payload.kind,
          stored(payload),
          options.live ? 1 : 0,
          options.notBefore ?? null,
          now,
          options.purpose ?? "reply",
        );
      }
    })();
    return this.parts(replyKey).filter((p) => p.part >= start && p.part < start + payloads.length);
  }

  /** Parts recorded and not yet delivered (pending, or being sent): what the dashboard and /metrics show. */
  unsentCount(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM outbox WHERE state IN ('pending', 'sending')").get() as { n: number }).n;
  }

  /** Whether Fermix has replied in this thread: the thread is one it takes part in. */
  hasRepliedInThread(channel: GatewayChannel, chatId: string, threadId: string): boolean {
    return this.threadStmt.get(channel, chatId, threadId) !== null;
  }

  parts(replyKey: string): OutboxPart[] {
    return (this.byReplyStmt.all(replyKey) as Row[]).map(toPart);
  }

  /** A part's state now (another path may have cancelled it since it was read). */
  state(id: number): OutboxState | undefined {
    return (this.stateStmt.get(id) as { state: OutboxState } | null)?.state;
  }

  /** Every part waiting to be sent to one chat, oldest first: a chat's backlog goes out in order. */
  pendingForChat(channel: GatewayChannel, chatId: string): OutboxPart[] {
    return (this.chatPendingStmt.all(channel, chatId) as Row[]).map(toPart);
  }

  /** About to call the platform: from here on, a crash means "maybe sent". */
  markSending(id: number): void {
    this.setStateStmt.run(id, "sending", null, 0, this.now());
  }

  markSent(part: Pick<OutboxPart, "id" | "channel" | "target">, platformId: string): void {
    const now = this.now();
    this.sentStmt.run(part.id, platformId, now);
    if (part.target.threadId !== undefined) this.touchThreadStmt.run(part.channel, part.target.chatId, part.target.threadId, now);
  }

  /** The part will not be sent. `transient`: the cause may heal, so a restart tries it again. */
  markFailed(id: number, reason: string, transient = false): void {
    this.setStateStmt.run(id, "failed", reason.slice(0, 500), transient ? 1 : 0, this.now());
  }

  /** A send failed for a reason that may heal: back to pending, tried again at `notBefore`; `failedAt` is kept as the first failure if none is yet. */
  defer(id: number, reason: string, notBefore: number, failedAt: number = this.now()): void {
    this.deferStmt.run(id, notBefore, reason.slice(0, 500), this.now(), failedAt);
  }

  /** The next part number of a reply: where parts recorded now will start. */
  nextPart(replyKey: string): number {
    return (this.nextPartStmt.get(replyKey) as { next: number }).next;
  }

  /**
   * Remove a reply's parts that were not delivered (pending, or whose send
   * just failed), as if never recorded: a message offered in another's place
   * that the platform did not take either. Returns how many.
   */
  forget(replyKey: string): number {
    return this.forgetStmt.run(replyKey).changes;
  }

  /** Cancel every part of a reply still waiting to be sent (a /stop, a superseded attempt); returns how many. */
  cancelPending(replyKey: string, reason: string): number {
    return this.cancelStmt.run(replyKey, reason, this.now()).changes;
  }

  /**
   * At start: parts caught mid-send become `unknown` (never re-sent); parts
   * that failed for a reason that may heal are pending again; every pending
   * part is returned, to be sent now or at its `notBefore`.
   */
  recover(): { resume: OutboxPart[]; unknown: number } {
    const now = this.now();
    const unknown = this.orphanStmt.run(now).changes;
    this.revivableStmt.run(now);
    return { resume: (this.resumableStmt.all() as Row[]).map(toPart), unknown };
  }

  /** Delete finished parts (sent, failed, cancelled, unknown) last touched before `cutoff` (epoch ms); returns how many. */
  sweep(cutoff: number): number {
    return this.sweepStmt.run(cutoff).changes;
  }
}
