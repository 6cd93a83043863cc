/**
 * Long-term memory: facts the assistant keeps across conversations, `/new`
 * and compaction, in the one database. Each fact belongs to a scope — the
 * operator's (one for the owner on every channel, the CLI and ACP), or one
 * per (channel, sender) for everyone else — and every read and delete names
 * its scope, so no sender ever sees another's facts. Search is SQLite FTS5,
 * ranked by bm25 and by how recently a fact was learnt or used.
 */
import type { Database, Statement } from "bun:sqlite";
import { describeError } from "../kernel/errors.ts";
import { ftsQuery } from "./fts.ts";

/** The operator's scope: the owner, wherever they write from. */
export const OWNER_SCOPE = "owner";

/** The longest fact kept, in characters: memory is for facts, not documents. */
export const MAX_MEMORY_CHARS = 1000;

/** A fact's score is halved after this long without being learnt or used, a third after twice as long… (ms). */
const RECENCY_HALF_MS = 30 * 24 * 60 * 60_000;

export interface Memory {
  id: number;
  text: string;
  /** The conversation (channel:chat:thread) it was learnt in. */
  conversation: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** Whose memory a turn reads and writes. */
export function memoryScope(who: { channel: string; senderId: string; role: "operator" | "user" }): string {
  return who.role === "operator" ? OWNER_SCOPE : `${who.channel}:${who.senderId}`;
}

interface Row {
  id: number;
  text: string;
  conversation: string;
  created_at: number;
  last_used_at: number | null;
}

const toMemory = (row: Row): Memory => ({
  id: row.id,
  text: row.text,
  conversation: row.conversation,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

const COLUMNS = "m.id, m.text, m.conversation, m.created_at, m.last_used_at";

export class MemoryStore {
  private readonly insertStmt: Statement;
  private readonly sameStmt: Statement;
  private readonly searchStmt: Statement;
  private readonly recentStmt: Statement;
  private readonly getStmt: Statement;
  private readonly deleteStmt: Statement;
  private readonly touchStmt: Statement;
  private readonly countStmt: Statement;
  private readonly probeStmt: Statement;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.insertStmt = db.query("INSERT INTO memories (scope, text, conversation, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING id");
    this.sameStmt = db.query(`SELECT ${COLUMNS} FROM memories m WHERE m.scope = ?1 AND m.text = ?2`);
    this.searchStmt = db.query(
      `SELECT ${COLUMNS} FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
       WHERE memories_fts MATCH ?1 AND m.scope = ?2
       ORDER BY bm25(memories_fts) / (1.0 + MAX(0, ?3 - COALESCE(m.last_used_at, m.created_at)) / CAST(?4 AS REAL)), m.id DESC
       LIMIT ?5`,
    );
    this.recentStmt = db.query(`SELECT ${COLUMNS} FROM memories m WHERE m.scope = ?1 ORDER BY m.created_at DESC, m.id DESC LIMIT ?2`);
    this.getStmt = db.query(`SELECT ${COLUMNS} FROM memories m WHERE m.scope = ?1 AND m.id = ?2`);
    this.deleteStmt = db.query("DELETE FROM memories WHERE scope = ?1 AND id = ?2");
    this.touchStmt = db.query("UPDATE memories SET last_used_at = ?2 WHERE id = ?1");
    this.countStmt = db.query("SELECT COUNT(*) AS n FROM memories");
    this.probeStmt = db.query("SELECT COUNT(*) AS n FROM memories_fts WHERE memories_fts MATCH '\"fermix\"'");
  }

  /** Keep a fact; the same text in the same scope is kept once (`existed` then says so). */
  add(scope: string, text: string, conversation: string): { memory: Memory; existed: boolean } {
    const clean = text.trim();
    const same = this.sameStmt.get(scope, clean) as Row | null;
    if (same) return { memory: toMemory(same), existed: true };
    const createdAt = this.now();
    const { id } = this.insertStmt.get(scope, clean, conversation, createdAt) as { id: number };
    return { memory: { id, text: clean, conversation, createdAt, lastUsedAt: null }, existed: false };
  }

  /** The facts of a scope that share words with `query`, best first (bm25, boosted by recency). */
  search(scope: string, query: string, limit: number): Memory[] {
    const match = ftsQuery(query, "any");
    if (match === null || limit <= 0) return [];
    return (this.searchStmt.all(match, scope, this.now(), RECENCY_HALF_MS, limit) as Row[]).map(toMemory);
  }

  /** The facts of a scope that contain every word of `query` (what "forget that …" removes). */
  matchingAll(scope: string, query: string, limit = 50): Memory[] {
    const match = ftsQuery(query, "all");
    if (match === null) return [];
    return (this.searchStmt.all(match, scope, this.now(), RECENCY_HALF_MS, limit) as Row[]).map(toMemory);
  }

  /** The most recently learnt facts of a scope, newest first. */
  recent(scope: string, limit: number): Memory[] {
    return (this.recentStmt.all(scope, limit) as Row[]).map(toMemory);
  }

  get(scope: string, id: number): Memory | undefined {
    const row = this.getStmt.get(scope, id) as Row | null;
    return row ? toMemory(row) : undefined;
  }

  /** Delete facts of a scope by id (ids of another scope are left alone); returns how many went. */
  delete(scope: string, ids: readonly number[]): number {
    return this.db.transaction(() => ids.reduce((n, id) => n + this.deleteStmt.run(scope, id).changes, 0))();
  }

  /** Note that facts were used (recalled, or put into a prompt): recency counts use, not only learning. */
  touch(ids: readonly number[]): void {
    const at = this.now();
    this.db.transaction(() => {
      for (const id of ids) this.touchStmt.run(id, at);
    })();
  }

  /** How many facts are kept, over all scopes. */
  count(): number {
    return (this.countStmt.get() as { n: number }).n;
  }

  /** Whether the store answers a full-text query right now (health): the error when it does not. */
  check(): { ok: true } | { ok: false; error: string } {
    try {
      this.probeStmt.get();
      return { ok: true };
    } catch (error) {
      return { ok: false, error: describeError(error) };
    }
  }
}
