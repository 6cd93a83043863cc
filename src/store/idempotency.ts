/**
 * Idempotency keys `(channel, platform_message_id)` in SQLite: inbound for
 * at least 24 h — longer where the channel accepts older messages (WhatsApp's
 * `max_message_age_hours`), so a signed capture replayed anywhere inside the
 * window finds its key — and outbound media for 60 s. A claim runs
 * synchronously on the one database connection (an INSERT OR IGNORE, and
 * only when the key is taken an UPDATE that takes over an expired row), so
 * two concurrent deliveries of one id can never both claim it; the inbox
 * claims inside its transaction.
 *
 * A key's lifetime follows a reload: it lives until both the time to live in
 * force when it was written (`expires_at`) and the one in force now, counted
 * from when it was seen (`seen_at`), have passed. Widening a window covers
 * the keys already written; narrowing it never drops a key early.
 */
import type { Database, Statement } from "bun:sqlite";
import type { ChannelRequirements } from "../config/channels.ts";
import type { Config } from "../config/schema.ts";

export type IdempotencyScope = "inbound" | "outbound_media";

/** The shortest each scope's keys live. */
export const TTL_MS: Readonly<Record<IdempotencyScope, number>> = {
  inbound: 24 * 60 * 60_000,
  outbound_media: 60_000,
};

/** How long a channel's inbound keys live under `config`: 24 h, or the channel's acceptance window (its profile's) where that is longer. */
export function inboundTtlMs(config: Config, channel: Pick<ChannelRequirements, "acceptanceWindowMs">): number {
  return Math.max(TTL_MS.inbound, channel.acceptanceWindowMs(config));
}

export interface IdempotencyOptions {
  /** Epoch ms (default Date.now). */
  now?: () => number;
  /** A channel's inbound time to live, read at each claim and sweep (default: 24 h for every channel). */
  inboundTtlMs?: (channel: string) => number;
}

export class IdempotencyStore {
  private readonly claimStmt: Statement;
  private readonly takeOverStmt: Statement;
  private readonly forgetStmt: Statement;
  private readonly channelsStmt: Statement;
  private readonly sweepStmt: Statement;
  private readonly seenStmt: Statement;
  private readonly now: () => number;
  private readonly inboundTtl: (channel: string) => number;

  constructor(
    private readonly db: Database,
    options: IdempotencyOptions | (() => number) = {},
  ) {
    const opts = typeof options === "function" ? { now: options } : options;
    this.now = opts.now ?? Date.now;
    this.inboundTtl = opts.inboundTtlMs ?? (() => TTL_MS.inbound);
    // A fresh key is one plain insert (the common case; an upsert with RETURNING cost ~30% more per webhook);
    // a taken one is ours only if both its times have passed (?5: now; ?6, ?7: the inbound and media cutoffs now).
    this.claimStmt = db.query("INSERT OR IGNORE INTO idempotency (channel, key, scope, expires_at, seen_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    this.takeOverStmt = db.query(
      `UPDATE idempotency SET scope = ?3, expires_at = ?4, seen_at = ?5
       WHERE channel = ?1 AND key = ?2 AND expires_at <= ?5 AND seen_at <= CASE scope WHEN 'inbound' THEN ?6 ELSE ?7 END`,
    );
    this.forgetStmt = db.query("DELETE FROM idempotency WHERE channel = ?1 AND key = ?2");
    // The sweep asks each channel's time to live once: only channels with a row past its first time are read.
    this.channelsStmt = db.query("SELECT DISTINCT channel FROM idempotency WHERE expires_at <= ?1");
    this.sweepStmt = db.query("DELETE FROM idempotency WHERE channel = ?1 AND expires_at <= ?2 AND seen_at <= CASE scope WHEN 'inbound' THEN ?3 ELSE ?4 END");
    this.seenStmt = db.query(
      "SELECT 1 AS seen FROM idempotency WHERE channel = ?1 AND key = ?2 AND (expires_at > ?3 OR seen_at > CASE scope WHEN 'inbound' THEN ?4 ELSE ?5 END)",
    );
  }

  /** Record a key; true when it is fresh, false when it was already seen within its time to live. */
  claim(channel: string, key: string, scope: IdempotencyScope = "inbound"): boolean {
    const now = this.now();
    const inbound = this.inboundTtl(channel);
    const expiresAt = now + (scope === "inbound" ? inbound : TTL_MS.outbound_media);
    if (this.claimStmt.run(channel, key, scope, expiresAt, now).changes === 1) return true;
    return this.takeOverStmt.run(channel, key, scope, expiresAt, now, now - inbound, now - TTL_MS.outbound_media).changes === 1;
  }

  /** Whether a key is currently remembered. */
  seen(channel: string, key: string): boolean {
    const now = this.now();
    return this.seenStmt.get(channel, key, now, now - this.inboundTtl(channel), now - TTL_MS.outbound_media) !== null;
  }

  /** Forget keys, so the platform's retry of a message we failed to hand off gets through. */
  forget(channel: string, keys: Iterable<string>): void {
    this.db.transaction(() => {
      for (const key of keys) this.forgetStmt.run(channel, key);
    })();
  }

  /** Delete the keys whose time has passed, by each channel's time to live in force now; returns how many. */
  sweep(): number {
    const now = this.now();
    return this.db.transaction(() => {
      let removed = 0;
      for (const { channel } of this.channelsStmt.all(now) as Array<{ channel: string }>) {
        removed += this.sweepStmt.run(channel, now, now - this.inboundTtl(channel), now - TTL_MS.outbound_media).changes;
      }
      return removed;
    })();
  }
}
