/**
 * Idempotency keys `(channel, platform_message_id)` in SQLite: inbound for
 * 24 h, outbound media for 60 s. A claim is one statement, and the database
 * connection serializes statements, so two concurrent deliveries of one id
 * can never both claim it.
 */
import type { Database, Statement } from "bun:sqlite";

export type IdempotencyScope = "inbound" | "outbound_media";

export const TTL_MS: Readonly<Record<IdempotencyScope, number>> = {
  inbound: 24 * 60 * 60_000,
  outbound_media: 60_000,
};

export class IdempotencyStore {
  private readonly claimStmt: Statement;
  private readonly forgetStmt: Statement;
  private readonly sweepStmt: Statement;
  private readonly seenStmt: Statement;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    // Insert, or take over a row whose time has passed; RETURNING says whether we got it.
    this.claimStmt = db.query(
      `INSERT INTO idempotency (channel, key, scope, expires_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (channel, key) DO UPDATE SET scope = excluded.scope, expires_at = excluded.expires_at
       WHERE idempotency.expires_at <= ?5
       RETURNING 1 AS claimed`,
    );
    this.forgetStmt = db.query("DELETE FROM idempotency WHERE channel = ?1 AND key = ?2");
    this.sweepStmt = db.query("DELETE FROM idempotency WHERE expires_at <= ?1");
    this.seenStmt = db.query("SELECT 1 AS seen FROM idempotency WHERE channel = ?1 AND key = ?2 AND expires_at > ?3");
  }

  /** Record a key; true when it is fresh, false when it was already seen within its TTL. */
  claim(channel: string, key: string, scope: IdempotencyScope = "inbound"): boolean {
    const now = this.now();
    return this.claimStmt.get(channel, key, scope, now + TTL_MS[scope], now) !== null;
  }

  /** Whether a key is currently remembered. */
  seen(channel: string, key: string): boolean {
    return this.seenStmt.get(channel, key, this.now()) !== null;
  }

  /** Forget keys, so the platform's retry of a message we failed to hand off gets through. */
  forget(channel: string, keys: Iterable<string>): void {
    this.db.transaction(() => {
      for (const key of keys) this.forgetStmt.run(channel, key);
    })();
  }

  /** Delete expired rows; returns how many. */
  sweep(): number {
    return this.sweepStmt.run(this.now()).changes;
  }
}
