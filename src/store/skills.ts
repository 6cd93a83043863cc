/**
 * Skills in SQLite: each skill's state (active, parked, archived) and usage,
 * the proposals the agent made with `propose_skill`, and the history of every
 * change with its origin. Rows only; the texts live in
 * `<workspace>/skills/<name>/SKILL.md` and what they mean is decided in
 * `agent/skills/`.
 */
import type { Database, Statement } from "bun:sqlite";

export type SkillState = "active" | "parked" | "archived";

export interface SkillRow {
  name: string;
  state: SkillState;
  /** How many times use_skill loaded it. */
  uses: number;
  /** Epoch ms of the last use; null when never used. */
  lastUsedAt: number | null;
  /** Epoch ms when it last became active (found, approved, restored, unparked): parking counts from the later of this and the last use. */
  activeSince: number;
  /** SKILL.md as last recorded (sha-256, hex). */
  textHash: string;
  updatedAt: number;
}

export type ProposalState = "pending" | "approved" | "denied";

export interface SkillProposal {
  /** The number the owner types: `/skills approve 3`. */
  id: number;
  name: string;
  /** The whole SKILL.md it would write. */
  content: string;
  reason: string;
  /** SKILL.md when the proposal was made; null for a new skill. */
  baseText: string | null;
  state: ProposalState;
  /** Where the proposing turn ran, and for whom. */
  channel: string;
  senderId: string;
  conversation: string;
  createdAt: number;
  decidedAt: number | null;
  /** Who approved or denied it (channel:sender). */
  decidedBy: string | null;
}

export type SkillChangeKind = "found" | "edited" | "removed" | "proposed" | "approved" | "denied" | "archived" | "restored" | "parked" | "unparked";

/** Where a change came from: the owner's command, the agent's proposal, the folder on disk, or the daemon on its own. */
export type SkillChangeOrigin = "owner" | "agent" | "disk" | "automatic";

export interface SkillChange {
  id: number;
  name: string;
  change: SkillChangeKind;
  origin: SkillChangeOrigin;
  /** channel:sender for the owner and the agent; null otherwise. */
  actor: string | null;
  proposalId: number | null;
  note: string | null;
  at: number;
}

const SKILL_COLUMNS = "name, state, uses, last_used_at AS lastUsedAt, active_since AS activeSince, text_hash AS textHash, updated_at AS updatedAt";
const PROPOSAL_COLUMNS = `id, name, content, reason, base_text AS baseText, state, channel, sender_id AS senderId, conversation,
  created_at AS createdAt, decided_at AS decidedAt, decided_by AS decidedBy`;
const CHANGE_COLUMNS = "id, name, change, origin, actor, proposal_id AS proposalId, note, at";

export class SkillStore {
  private readonly allStmt: Statement;
  private readonly getStmt: Statement;
  private readonly insertStmt: Statement;
  private readonly stateStmt: Statement;
  private readonly hashStmt: Statement;
  private readonly useStmt: Statement;
  private readonly deleteStmt: Statement;
  private readonly addProposalStmt: Statement;
  private readonly proposalStmt: Statement;
  private readonly pendingStmt: Statement;
  private readonly decideStmt: Statement;
  private readonly recordStmt: Statement;
  private readonly historyStmt: Statement;
  private readonly historyOfStmt: Statement;

  constructor(private readonly db: Database) {
    this.allStmt = db.query(`SELECT ${SKILL_COLUMNS} FROM skills ORDER BY name`);
    this.getStmt = db.query(`SELECT ${SKILL_COLUMNS} FROM skills WHERE name = ?1`);
    this.insertStmt = db.query(
      `INSERT INTO skills (name, state, uses, last_used_at, active_since, text_hash, updated_at) VALUES (?1, 'active', 0, NULL, ?2, ?3, ?2)
       ON CONFLICT (name) DO NOTHING`,
    );
    this.stateStmt = db.query(
      "UPDATE skills SET state = ?2, active_since = CASE WHEN ?2 = 'active' THEN ?3 ELSE active_since END, updated_at = ?3 WHERE name = ?1 AND state <> ?2",
    );
    this.hashStmt = db.query("UPDATE skills SET text_hash = ?2, updated_at = ?3 WHERE name = ?1");
    this.useStmt = db.query("UPDATE skills SET uses = uses + 1, last_used_at = ?2, updated_at = ?2 WHERE name = ?1");
    this.deleteStmt = db.query("DELETE FROM skills WHERE name = ?1");
    this.addProposalStmt = db.query(
      `INSERT INTO skill_proposals (name, content, reason, base_text, state, channel, sender_id, conversation, created_at)
       VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6, ?7, ?8) RETURNING ${PROPOSAL_COLUMNS}`,
    );
    this.proposalStmt = db.query(`SELECT ${PROPOSAL_COLUMNS} FROM skill_proposals WHERE id = ?1`);
    this.pendingStmt = db.query(`SELECT ${PROPOSAL_COLUMNS} FROM skill_proposals WHERE state = 'pending' ORDER BY id`);
    this.decideStmt = db.query("UPDATE skill_proposals SET state = ?2, decided_at = ?3, decided_by = ?4 WHERE id = ?1 AND state = 'pending'");
    this.recordStmt = db.query(
      `INSERT INTO skill_changes (name, change, origin, actor, proposal_id, note, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING ${CHANGE_COLUMNS}`,
    );
    this.historyStmt = db.query(`SELECT ${CHANGE_COLUMNS} FROM skill_changes ORDER BY id DESC LIMIT ?1`);
    this.historyOfStmt = db.query(`SELECT ${CHANGE_COLUMNS} FROM skill_changes WHERE name = ?1 ORDER BY id DESC LIMIT ?2`);
  }

  /** Every skill known, by name. */
  all(): SkillRow[] {
    return this.allStmt.all() as SkillRow[];
  }

  get(name: string): SkillRow | null {
    return this.getStmt.get(name) as SkillRow | null;
  }

  /** A skill seen for the first time, active from `at`; false when it was already known. */
  insert(name: string, textHash: string, at: number): boolean {
    return this.insertStmt.run(name, at, textHash).changes === 1;
  }

  /** Move a skill to `state` (becoming active restarts its idle time); false when it already was in that state. */
  setState(name: string, state: SkillState, at: number): boolean {
    return this.stateStmt.run(name, state, at).changes === 1;
  }

  setHash(name: string, textHash: string, at: number): void {
    this.hashStmt.run(name, textHash, at);
  }

  /** Count one use. */
  use(name: string, at: number): void {
    this.useStmt.run(name, at);
  }

  delete(name: string): void {
    this.deleteStmt.run(name);
  }

  addProposal(p: Pick<SkillProposal, "name" | "content" | "reason" | "baseText" | "channel" | "senderId" | "conversation" | "createdAt">): SkillProposal {
    return this.addProposalStmt.get(p.name, p.content, p.reason, p.baseText, p.channel, p.senderId, p.conversation, p.createdAt) as SkillProposal;
  }

  proposal(id: number): SkillProposal | null {
    return this.proposalStmt.get(id) as SkillProposal | null;
  }

  /** Proposals waiting for the owner, oldest first. */
  pending(): SkillProposal[] {
    return this.pendingStmt.all() as SkillProposal[];
  }

  /** Approve or deny a pending proposal; false when it was no longer pending. */
  decide(id: number, state: "approved" | "denied", at: number, by: string): boolean {
    return this.decideStmt.run(id, state, at, by).changes === 1;
  }

  record(change: Omit<SkillChange, "id">): SkillChange {
    const c = change;
    return this.recordStmt.get(c.name, c.change, c.origin, c.actor, c.proposalId, c.note, c.at) as SkillChange;
  }

  /** The latest changes, newest first: of one skill, or of all. */
  history(limit: number, name?: string): SkillChange[] {
    return (name === undefined ? this.historyStmt.all(limit) : this.historyOfStmt.all(name, limit)) as SkillChange[];
  }

  /** Run `work` in one transaction. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }
}
