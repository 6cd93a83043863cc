/**
 * Conversation history in SQLite. A conversation has a current window: `/new`
 * opens a fresh one (older windows stay on disk); compaction replaces the
 * oldest messages of the window by a summary.
 */
import type { Database, Statement } from "bun:sqlite";
import type { MessageSender } from "../message/untrusted.ts";

export type HistoryRole = "user" | "assistant" | "summary";

export interface HistoryMessage {
  id: number;
  role: HistoryRole;
  text: string;
  /** Who said a user message, where it was recorded (absent before senders were kept, and for the assistant's own). */
  sender?: MessageSender;
}

type HistoryRow = { id: number; role: HistoryRole; text: string; sender_id: string | null; sender_name: string | null; sender_trusted: number | null };

function historyMessage(row: HistoryRow): HistoryMessage {
  const message: HistoryMessage = { id: row.id, role: row.role, text: row.text };
  if (row.sender_id !== null && row.sender_trusted !== null) {
    message.sender = { id: row.sender_id, trusted: row.sender_trusted === 1, ...(row.sender_name !== null ? { name: row.sender_name } : {}) };
  }
  return message;
}

export class ConversationStore {
  private readonly windowStmt: Statement;
  private readonly touchStmt: Statement;
  private readonly historyStmt: Statement;
  private readonly appendStmt: Statement;
  private readonly newWindowStmt: Statement;
  private readonly compactStmt: Statement;
  private readonly recentUserStmt: Statement;
  private readonly latestStmt: Statement;
  private readonly chatStmt: Statement;
  private readonly updatedStmt: Statement;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.windowStmt = db.query("SELECT window FROM conversations WHERE key = ?1");
    this.touchStmt = db.query(
      "INSERT INTO conversations (key, window, updated_at) VALUES (?1, 0, ?2) ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at",
    );
    this.historyStmt = db.query(
      // A summary stands for everything before the messages it was kept with: it always comes first.
      "SELECT id, role, content AS text, sender_id, sender_name, sender_trusted FROM messages WHERE conversation = ?1 AND window = ?2 AND compacted = 0 ORDER BY role = 'summary' DESC, id",
    );
    this.appendStmt = db.query(
      "INSERT INTO messages (conversation, window, role, content, created_at, sender_id, sender_name, sender_trusted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
    );
    this.newWindowStmt = db.query(
      `INSERT INTO conversations (key, window, updated_at) VALUES (?1, 1, ?2)
       ON CONFLICT (key) DO UPDATE SET window = conversations.window + 1, updated_at = excluded.updated_at`,
    );
    this.compactStmt = db.query("UPDATE messages SET compacted = 1 WHERE conversation = ?1 AND id = ?2");
    this.recentUserStmt = db.query(
      "SELECT content AS text FROM messages WHERE conversation = ?1 AND sender_id = ?2 AND role = 'user' ORDER BY id DESC LIMIT ?3",
    );
    this.latestStmt = db.query(
      "SELECT id, role, content AS text, sender_id, sender_name, sender_trusted FROM messages WHERE conversation = ?1 AND window = ?2 AND compacted = 0 AND role != 'summary' ORDER BY id DESC LIMIT ?3",
    );
    this.chatStmt = db.query("SELECT 1 AS found FROM conversations WHERE substr(key, 1, length(?1)) = ?1 LIMIT 1");
    this.updatedStmt = db.query("SELECT updated_at FROM conversations WHERE key = ?1");
  }

  private window(key: string): number {
    return (this.windowStmt.get(key) as { window: number } | null)?.window ?? 0;
  }

  /** The current window's messages, oldest first (a summary, if any, comes first). */
  history(key: string): HistoryMessage[] {
    return (this.historyStmt.all(key, this.window(key)) as HistoryRow[]).map(historyMessage);
  }

  /** The latest `limit` messages of the conversation's current window, oldest first, without its summary: its tail, read without the rest. */
  latest(key: string, limit: number): HistoryMessage[] {
    return (this.latestStmt.all(key, this.window(key), limit) as HistoryRow[]).map(historyMessage).reverse();
  }

  /** Append a message; a user message names its sender (who said it, in a group, and whether their words are trusted). */
  append(key: string, role: HistoryRole, text: string, sender?: MessageSender): number {
    this.touchStmt.run(key, this.now());
    const trusted = sender === undefined ? null : sender.trusted ? 1 : 0;
    return (this.appendStmt.get(key, this.window(key), role, text, this.now(), sender?.id ?? null, sender?.name ?? null, trusted) as { id: number }).id;
  }

  /**
   * The latest `limit` messages one sender sent in the conversation (any window, compacted or not),
   * newest first. Only messages recorded with their sender count: in a group, nobody else's words
   * are taken for theirs.
   */
  recentUserTexts(key: string, senderId: string, limit: number): string[] {
    return (this.recentUserStmt.all(key, senderId, limit) as Array<{ text: string }>).map((row) => row.text);
  }

  /** Whether Fermix has talked in this chat (any thread of it): where a scheduled job may deliver. */
  hasChat(channel: string, chatId: string): boolean {
    return this.chatStmt.get(`${channel}:${chatId}:`) !== null;
  }

  /** When a message was last added to the conversation (epoch ms), or null when it has none. */
  lastActivity(key: string): number | null {
    return (this.updatedStmt.get(key) as { updated_at: number } | null)?.updated_at ?? null;
  }

  /** `/new`: later turns start from an empty window; nothing is deleted. */
  newWindow(key: string): void {
    this.newWindowStmt.run(key, this.now());
  }

  /** Replace the given messages (the older part of the window, any earlier summary included) by one summary. */
  compact(key: string, ids: readonly number[], summary: string): void {
    this.db.transaction(() => {
      for (const id of ids) this.compactStmt.run(key, id);
      this.append(key, "summary", summary);
    })();
  }
}
