/**
 * The persona's history in SQLite: every revision of SOUL.md with its full
 * text, and the `/soul` proposals that wait for `/soul apply TOKEN`. Rows
 * only; what a revision or a token means is decided in `agent/soul/`.
 */
import type { Database, Statement } from "bun:sqlite";

/** How a revision came about: the first text seen, an applied proposal, or an edit of the file by hand. */
export type RevisionOrigin = "initial" | "review" | "revert" | "reset" | "manual";

export interface RevisionSummary {
  /** The revision number (1, 2, …). */
  id: number;
  origin: RevisionOrigin;
  /** A review's instruction, "revision N" of a revert, why a manual revision was recorded; null when there is nothing to add. */
  note: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Size of the text in UTF-8 bytes. */
  bytes: number;
}

export interface Revision extends RevisionSummary {
  text: string;
}

export type ProposalKind = "review" | "revert" | "reset";

/** Who made a proposal, and where: the only ones who may apply it. */
export interface ProposalOwner {
  channel: string;
  senderId: string;
  conversation: string;
}

export interface StoredProposal extends ProposalOwner {
  kind: ProposalKind;
  note: string | null;
  /** The revision the proposal was made against. */
  baseRevision: number;
  /** The text SOUL.md would have once applied. */
  text: string;
  createdAt: number;
  expiresAt: number;
  /** When it was applied; null while pending. */
  usedAt: number | null;
}

/** Proposals are kept this long past their expiry, so a late `/soul apply` is told "expired" rather than "unknown". */
const KEEP_EXPIRED_MS = 24 * 60 * 60_000;

const SUMMARY_COLUMNS = "id, origin, note, created_at AS createdAt, length(CAST(text AS BLOB)) AS bytes";
const PROPOSAL_COLUMNS = `kind, note, base_revision AS baseRevision, text, channel, sender_id AS senderId, conversation,
  created_at AS createdAt, expires_at AS expiresAt, used_at AS usedAt`;

export class SoulStore {
  private readonly latestStmt: Statement;
  private readonly revisionStmt: Statement;
  private readonly historyStmt: Statement;
  private readonly insertRevisionStmt: Statement;
  private readonly insertProposalStmt: Statement;
  private readonly proposalStmt: Statement;
  private readonly useStmt: Statement;
  private readonly sweepStmt: Statement;

  constructor(private readonly db: Database) {
    this.latestStmt = db.query(`SELECT ${SUMMARY_COLUMNS}, text FROM soul_revisions ORDER BY id DESC LIMIT 1`);
    this.revisionStmt = db.query(`SELECT ${SUMMARY_COLUMNS}, text FROM soul_revisions WHERE id = ?1`);
    this.historyStmt = db.query(`SELECT ${SUMMARY_COLUMNS} FROM soul_revisions ORDER BY id`);
    this.insertRevisionStmt = db.query(
      `INSERT INTO soul_revisions (origin, note, text, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING ${SUMMARY_COLUMNS}, text`,
    );
    this.insertProposalStmt = db.query(
      `INSERT INTO soul_proposals (token_hash, kind, note, base_revision, text, channel, sender_id, conversation, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
    );
    this.proposalStmt = db.query(`SELECT ${PROPOSAL_COLUMNS} FROM soul_proposals WHERE token_hash = ?1`);
    this.useStmt = db.query("UPDATE soul_proposals SET used_at = ?2 WHERE token_hash = ?1 AND used_at IS NULL");
    this.sweepStmt = db.query("DELETE FROM soul_proposals WHERE expires_at < ?1");
  }

  /** The newest revision, or null before the first one is recorded. */
  latest(): Revision | null {
    return this.latestStmt.get() as Revision | null;
  }

  revision(id: number): Revision | null {
    return this.revisionStmt.get(id) as Revision | null;
  }

  /** Every revision, oldest first, without the texts. */
  history(): RevisionSummary[] {
    return this.historyStmt.all() as RevisionSummary[];
  }

  /** Record a new revision; returns it with its number. */
  addRevision(origin: RevisionOrigin, note: string | null, text: string, at: number): Revision {
    return this.insertRevisionStmt.get(origin, note, text, at) as Revision;
  }

  /** Keep a proposal under the hash of its token; long-expired ones are swept on the way. */
  addProposal(tokenHash: string, proposal: Omit<StoredProposal, "usedAt">): void {
    this.sweepStmt.run(proposal.createdAt - KEEP_EXPIRED_MS);
    const p = proposal;
    this.insertProposalStmt.run(tokenHash, p.kind, p.note, p.baseRevision, p.text, p.channel, p.senderId, p.conversation, p.createdAt, p.expiresAt);
  }

  proposal(tokenHash: string): StoredProposal | null {
    return this.proposalStmt.get(tokenHash) as StoredProposal | null;
  }

  /** Mark a proposal applied; false when it already was (it is single use). */
  markUsed(tokenHash: string, at: number): boolean {
    return this.useStmt.run(tokenHash, at).changes === 1;
  }

  /** Run `work` in one transaction: a revision and the file written with it stand or fall together. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }
}
