/**
 * What the Discord adapter keeps in the `settings` table, per bot: the
 * gateway session (id, resume URL, the last sequence number taken in) so a
 * restart can resume and have Discord replay what arrived meanwhile, and the
 * bot's user id as Ready reported it (`fermix doctor` reads it offline).
 *
 * The sequence number is saved in the same transaction as the inbox write
 * of the message it belongs to (the `commit` of AdapterContext.submit), so
 * Fermix never claims an event it has not stored: what a crash cut off is
 * replayed by the resume, and the idempotency keys drop any repeat.
 */
import type { Database } from "bun:sqlite";
import { SettingsStore } from "../../store/settings.ts";

/** A resumable gateway session. */
export interface StoredSession {
  sessionId: string;
  resumeUrl: string;
  /** The last sequence number whose event is durably handled; null before the first dispatch. */
  seq: number | null;
}

/** The settings key of the bot user id Ready reported, for the bot behind `token`. */
export function learntBotIdKey(token: string): string {
  return `discord.bot_user_id.${botIdOfToken(token) ?? "unknown"}`;
}

/**
 * The bot's user id as its token spells it: a Discord bot token's first
 * segment is the id in base64. Undefined when the token is not shaped so.
 */
export function botIdOfToken(token: string): string | undefined {
  const first = token.split(".")[0] ?? "";
  if (!/^[A-Za-z0-9_-]{4,}={0,2}$/.test(first)) return undefined;
  try {
    const decoded = Buffer.from(first.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8");
    return /^\d{15,21}$/.test(decoded) ? decoded : undefined;
  } catch {
    return undefined;
  }
}

export class DiscordStateStore {
  private readonly sessionKey: string;
  private readonly botIdKey: string;
  private readonly settings: SettingsStore;

  constructor(db: Database, token: string) {
    this.settings = new SettingsStore(db);
    const bot = botIdOfToken(token) ?? "unknown";
    this.sessionKey = `discord.session.${bot}`;
    this.botIdKey = learntBotIdKey(token);
  }

  /** The stored session, or undefined when there is none (or it is unreadable). */
  loadSession(): StoredSession | undefined {
    const raw = this.settings.get(this.sessionKey);
    if (!raw) return undefined;
    try {
      const value = JSON.parse(raw) as Partial<StoredSession>;
      if (typeof value.sessionId !== "string" || typeof value.resumeUrl !== "string") return undefined;
      const seq = typeof value.seq === "number" && Number.isSafeInteger(value.seq) ? value.seq : null;
      return { sessionId: value.sessionId, resumeUrl: value.resumeUrl, seq };
    } catch {
      return undefined;
    }
  }

  /** Store the session; runs inside the caller's transaction when there is one. */
  saveSession(session: StoredSession): void {
    this.settings.set(this.sessionKey, JSON.stringify(session));
  }

  /** Forget the session (Discord invalidated it, or the adapter stopped for good). */
  clearSession(): void {
    this.settings.delete(this.sessionKey);
  }

  /** Remember the bot user id Ready reported. */
  saveBotUserId(id: string): void {
    if (this.settings.get(this.botIdKey) !== id) this.settings.set(this.botIdKey, id);
  }
}
