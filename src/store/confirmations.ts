/**
 * The rows behind confirmation codes (migration 12): one per `/sandbox`
 * proposal or agent access request, with where it was made, what it grants
 * (JSON), until when, and what became of it. Every change of state is a
 * compare-and-set from `pending`, so two processes answering the same code
 * cannot both use it. The rules — who may answer, where, what a refusal
 * says — are src/gateway/confirm.ts's; this only keeps the rows.
 */
import type { Database, Statement } from "bun:sqlite";

export type CodeKind = "proposal" | "access";
/** failed: confirmed, but the change could no longer be made; ended: the process whose turn waited is gone. */
export type CodeState = "pending" | "confirmed" | "denied" | "failed" | "expired" | "withdrawn" | "ended";

/** How long a decided or expired code is kept (and recognised) before the sweep deletes it. */
export const CODES_KEPT_MS = 60 * 60_000;

export interface CodeRow<G = unknown> {
  code: string;
  kind: CodeKind;
  channel: string;
  senderId: string;
  conversation: string;
  summary: string;
  /** What confirming it applies. */
  grants: G;
  /** The process whose turn waits for an access request; null for a proposal. */
  holder: string | null;
  createdAt: number;
  expiresAt: number;
  state: CodeState;
  decidedAt: number | null;
}

interface Stored {
  code: string;
  kind: CodeKind;
  channel: string;
  sender_id: string;
  conversation: string;
  summary: string;
  grants: string;
  holder: string | null;
  created_at: number;
  expires_at: number;
  state: CodeState;
  decided_at: number | null;
}

const COLUMNS = "code, kind, channel, sender_id, conversation, summary, grants, holder, created_at, expires_at, state, decided_at";

export class ConfirmationStore {
  private readonly insert: Statement;
  private readonly byCode: Statement<Stored, [string]>;
  private readonly move: Statement;
  private readonly pendingRows: Statement<Stored, [number]>;
  private readonly deleteOld: Statement;

  constructor(private readonly db: Database) {
    this.insert = db.query(
      `INSERT INTO confirmation_codes (${COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', NULL) ON CONFLICT (code) DO NOTHING`,
    );
    this.byCode = db.query(`SELECT ${COLUMNS} FROM confirmation_codes WHERE code = ?1`);
    // Leaving pending, the change's secret-looking value (an env set) is no longer needed: it is dropped.
    this.move = db.query(
      `UPDATE confirmation_codes SET state = ?2, decided_at = ?3, grants = json_remove(grants, '$.value')
       WHERE code = ?1 AND state = ?4`,
    );
    this.pendingRows = db.query(`SELECT ${COLUMNS} FROM confirmation_codes WHERE state = 'pending' AND expires_at >= ?1 ORDER BY id`);
    this.deleteOld = db.query("DELETE FROM confirmation_codes WHERE coalesce(decided_at, expires_at) < ?1");
  }

  /** Record a new pending code; false when the code is already taken. */
  add(row: Omit<CodeRow, "state" | "decidedAt">): boolean {
    return (
      this.insert.run(
        row.code,
        row.kind,
        row.channel,
        row.senderId,
        row.conversation,
        row.summary,
        JSON.stringify(row.grants),
        row.holder,
        row.createdAt,
        row.expiresAt,
      ).changes > 0
    );
  }

  get<G = unknown>(code: string): CodeRow<G> | undefined {
    const row = this.byCode.get(code);
    return row ? toRow<G>(row) : undefined;
  }

  /** Move a code from `from` (default pending) to `to`; true only for the one call that did. */
  settle(code: string, to: Exclude<CodeState, "pending">, at: number, from: CodeState = "pending"): boolean {
    return this.move.run(code, to, at, from).changes > 0;
  }

  /** The pending codes not expired at `now`, oldest first. */
  pending<G = unknown>(now: number): CodeRow<G>[] {
    return this.pendingRows.all(now).map((row) => toRow<G>(row));
  }

  /** Delete codes decided, or expired, before `cutoff`; how many went. */
  sweep(cutoff: number): number {
    return this.deleteOld.run(cutoff).changes;
  }

  /** Run `fn` in one transaction (a code used up together with what it applies). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}

function toRow<G>(row: Stored): CodeRow<G> {
  return {
    code: row.code,
    kind: row.kind,
    channel: row.channel,
    senderId: row.sender_id,
    conversation: row.conversation,
    summary: row.summary,
    grants: JSON.parse(row.grants) as G,
    holder: row.holder,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    state: row.state,
    decidedAt: row.decided_at,
  };
}
