/**
 * The durable outbox. Every outbound message is recorded before it is sent
 * and marked with the platform's id after. A part is `pending` until the
 * moment before its send, `sending` during it, then `sent` or `failed`. After
 * a crash, `pending` parts are resumed and `sending` ones become `unknown` and
 * are never re-sent: at most once per part, never twice.
 */
import type { Database, Statement } from "bun:sqlite";
import type { GatewayChannel, OutboundMedia, OutboundText, ReplyTarget } from "../message/index.ts";

export type OutboxPayload =
  /** `fallback`: the same part as plain text, sent instead if the platform rejects the formatting. */
  | { kind: "text"; message: OutboundText; fallback?: OutboundText[] }
  | { kind: "media"; media: OutboundMedia };

export interface OutboxPart {
  id: number;
  replyKey: string;
  part: number;
  channel: GatewayChannel;
  target: ReplyTarget;
  payload: OutboxPayload;
  state: "pending" | "sending" | "sent" | "failed" | "unknown";
  platformId: string | null;
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
  state: OutboxPart["state"];
  platform_id: string | null;
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
  };
};

export class Outbox {
  private readonly insertStmt: Statement;
  private readonly byReplyStmt: Statement;
  private readonly setStateStmt: Statement;
  private readonly sentStmt: Statement;
  private readonly resumableStmt: Statement;
  private readonly orphanStmt: Statement;
  private readonly nextPartStmt: Statement;
  private readonly threadStmt: Statement;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.insertStmt = db.query(
      `INSERT INTO outbox (reply_key, part, channel, chat_id, thread_id, kind, payload, state, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8) ON CONFLICT (reply_key, part) DO NOTHING`,
    );
    this.byReplyStmt = db.query("SELECT * FROM outbox WHERE reply_key = ?1 ORDER BY part");
    this.setStateStmt = db.query("UPDATE outbox SET state = ?2, error = ?3, updated_at = ?4 WHERE id = ?1");
    this.sentStmt = db.query("UPDATE outbox SET state = 'sent', platform_id = ?2, updated_at = ?3 WHERE id = ?1");
    this.resumableStmt = db.query("SELECT * FROM outbox WHERE state = 'pending' ORDER BY id");
    this.orphanStmt = db.query("UPDATE outbox SET state = 'unknown', updated_at = ?1 WHERE state = 'sending'");
    this.nextPartStmt = db.query("SELECT COALESCE(MAX(part) + 1, 0) AS next FROM outbox WHERE reply_key = ?1");
    this.threadStmt = db.query("SELECT 1 AS found FROM outbox WHERE channel = ?1 AND chat_id = ?2 AND thread_id = ?3 LIMIT 1");
  }

  /**
   * Record parts of a reply (idempotent per reply key and part number) and
   * return every part of that reply, in order. Call inside the transaction
   * that finishes the turn, so the reply and the turn's end commit together.
   */
  record(replyKey: string, channel: GatewayChannel, target: ReplyTarget, payloads: OutboxPayload[], firstPart?: number): OutboxPart[] {
    const start = firstPart ?? (this.nextPartStmt.get(replyKey) as { next: number }).next;
    const now = this.now();
    const stored = (payload: OutboxPayload) => JSON.stringify(target.replyTo ? { payload, replyTo: target.replyTo } : { payload });
    this.db.transaction(() => {
      payloads.forEach((payload, i) =>
        this.insertStmt.run(replyKey, start + i, channel, target.chatId, target.threadId ?? null, payload.kind, stored(payload), now),
      );
    })();
    return this.parts(replyKey).filter((p) => p.part >= start && p.part < start + payloads.length);
  }

  /** Whether Fermix has replied in this thread: the thread is one it takes part in. */
  hasRepliedInThread(channel: GatewayChannel, chatId: string, threadId: string): boolean {
    return this.threadStmt.get(channel, chatId, threadId) !== null;
  }

  parts(replyKey: string): OutboxPart[] {
    return (this.byReplyStmt.all(replyKey) as Row[]).map(toPart);
  }

  /** About to call the platform: from here on, a crash means "maybe sent". */
  markSending(id: number): void {
    this.setStateStmt.run(id, "sending", null, this.now());
  }

  markSent(id: number, platformId: string): void {
    this.sentStmt.run(id, platformId, this.now());
  }

  markFailed(id: number, reason: string): void {
    this.setStateStmt.run(id, "failed", reason.slice(0, 500), this.now());
  }

  /**
   * At start: parts caught mid-send become `unknown` (never re-sent), and the
   * parts never attempted are returned to be sent now.
   */
  recover(): { resume: OutboxPart[]; unknown: number } {
    const unknown = this.orphanStmt.run(this.now()).changes;
    return { resume: (this.resumableStmt.all() as Row[]).map(toPart), unknown };
  }
}
