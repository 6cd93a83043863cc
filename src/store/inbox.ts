/**
 * The durable inbox. An accepted inbound message and its idempotency key are
 * committed in one transaction before the platform is acknowledged; the entry
 * is deleted when its turn is done, and whatever a crash left behind is
 * replayed at the next start. Concurrent accepts are committed together in
 * one transaction (group commit), which is what keeps webhook throughput up.
 */
import type { Database, Statement } from "bun:sqlite";
import type { InboundMessage } from "../message/index.ts";
import type { IdempotencyStore } from "./idempotency.ts";

export interface InboxEntry {
  id: number;
  channel: string;
  key: string;
  message: InboundMessage;
  acceptedAt: number;
}

export interface AcceptItem {
  key: string;
  message: InboundMessage;
}

export interface AcceptResult {
  fresh: InboxEntry[];
  duplicates: number;
}

interface PendingAccept {
  channel: string;
  items: AcceptItem[];
  resolve: (result: AcceptResult) => void;
  reject: (error: unknown) => void;
}

export class Inbox {
  private readonly insertStmt: Statement;
  private readonly deleteStmt: Statement;
  private readonly pendingStmt: Statement;
  private batch: PendingAccept[] = [];
  private doneSoon: number[] = [];
  private flushScheduled = false;

  constructor(
    private readonly db: Database,
    private readonly idempotency: IdempotencyStore,
    private readonly now: () => number = Date.now,
  ) {
    this.insertStmt = db.query("INSERT INTO inbox (channel, key, message, accepted_at) VALUES (?1, ?2, ?3, ?4)");
    this.deleteStmt = db.query("DELETE FROM inbox WHERE id = ?1");
    this.pendingStmt = db.query("SELECT id, channel, key, message, accepted_at FROM inbox ORDER BY id");
  }

  /** Claim keys and record the fresh messages in one transaction, now. */
  acceptNow(channel: string, items: AcceptItem[]): AcceptResult {
    return this.db.transaction(() => this.acceptInTransaction(channel, items))();
  }

  /**
   * Like acceptNow, but committed together with every other accept that
   * arrives before the next turn of the event loop.
   */
  accept(channel: string, items: AcceptItem[]): Promise<AcceptResult> {
    return new Promise((resolve, reject) => {
      this.batch.push({ channel, items, resolve, reject });
      this.scheduleFlush();
    });
  }

  /**
   * Complete entries in the next group commit. For turns that short-circuit
   * (dropped, empty, a command): should a crash fall in that window, the
   * replay repeats nothing visible, because replies go through the outbox
   * under keys derived from the message. A turn's answer must use `complete`
   * inside its own commit instead.
   */
  completeSoon(ids: Iterable<number>): void {
    for (const id of ids) this.doneSoon.push(id);
    this.scheduleFlush();
  }

  /** The turn of these entries is done: forget them (their idempotency keys stay). */
  complete(ids: Iterable<number>): void {
    this.db.transaction(() => {
      for (const id of ids) this.deleteStmt.run(id);
    })();
  }

  /** A hand-off failed: drop the entries and forget their keys, so the platform's retry gets through. */
  release(entries: Iterable<Pick<InboxEntry, "id" | "channel" | "key">>): void {
    this.db.transaction(() => {
      for (const entry of entries) {
        this.deleteStmt.run(entry.id);
        this.idempotency.forget(entry.channel, [entry.key]);
      }
    })();
  }

  /**
   * Drop entries accepted before `cutoff` (epoch ms) that are still here: a
   * message whose turn never completed in all that time (it failed on every
   * replay) is given up rather than replayed at every start. Returns how many.
   */
  sweep(cutoff: number): number {
    return this.db.query("DELETE FROM inbox WHERE accepted_at < ?1").run(cutoff).changes;
  }

  /** Entries whose turn never finished, oldest first: what to replay at start. */
  pending(): InboxEntry[] {
    return (this.pendingStmt.all() as Array<{ id: number; channel: string; key: string; message: string; accepted_at: number }>).map((row) => ({
      id: row.id,
      channel: row.channel,
      key: row.key,
      message: JSON.parse(row.message),
      acceptedAt: row.accepted_at,
    }));
  }

  private acceptInTransaction(channel: string, items: AcceptItem[]): AcceptResult {
    const fresh: InboxEntry[] = [];
    let duplicates = 0;
    const acceptedAt = this.now();
    for (const { key, message } of items) {
      if (!this.idempotency.claim(channel, key, "inbound")) {
        duplicates++;
        continue;
      }
      const id = Number(this.insertStmt.run(channel, key, JSON.stringify(message), acceptedAt).lastInsertRowid);
      fresh.push({ id, channel, key, message, acceptedAt });
    }
    return { fresh, duplicates };
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.batch;
    const done = this.doneSoon;
    this.batch = [];
    this.doneSoon = [];
    this.flushScheduled = false;
    let results: AcceptResult[];
    try {
      results = this.db.transaction(() => {
        for (const id of done) this.deleteStmt.run(id);
        return batch.map((p) => this.acceptInTransaction(p.channel, p.items));
      })();
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    for (const [i, p] of batch.entries()) p.resolve(results[i]!);
  }
}
