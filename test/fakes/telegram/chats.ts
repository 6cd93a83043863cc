/**
 * Per-chat history as the user would see it: every message the test pushed
 * and every message the bot sent, in message_id order (one counter per chat,
 * shared by both sides, as in Telegram), with edits, deletions, reactions
 * and chat actions applied.
 */
import type { Chat, InlineKeyboardMarkup, Message, MessageEntity, ReactionType } from "grammy/types";

type ReplyMessage = NonNullable<Message["reply_to_message"]>;

export interface ChatEntry {
  message_id: number;
  chat_id: string;
  sender: "bot" | "user";
  kind: "text" | "photo" | "document" | "voice" | "audio" | "video" | "video_note" | "sticker" | "animation" | "poll" | "other";
  /** Current text as displayed (after entity parsing) for text messages. */
  text?: string;
  /** Current caption as displayed, for media. */
  caption?: string;
  /** What the bot sent in `text`/`caption`, before parsing (the HTML source). */
  source?: string;
  parse_mode?: string;
  entities?: MessageEntity[];
  /** Earlier displayed texts, oldest first: one per successful edit. */
  history: string[];
  deleted: boolean;
  /** The bot's reactions on this message. */
  reactions: ReactionType[];
  thread_id?: number;
  reply_to?: number;
  disable_notification?: boolean;
  link_preview_disabled?: boolean;
  /** The inline keyboard under a bot message, as last sent or edited (empty rows once taken off). */
  reply_markup?: InlineKeyboardMarkup;
  /** For media the bot sent: what arrived and how. */
  file?: { source: "upload" | "file_id" | "url"; filename?: string; size?: number; mime_type?: string; url?: string };
  /** The Message object as last returned or delivered. */
  message: Message;
  at: number;
}

export interface ChatAction {
  action: string;
  thread_id?: number;
  at: number;
}

export class ChatLog {
  private readonly entries = new Map<string, ChatEntry[]>();
  private readonly counters = new Map<string, number>();
  private readonly chats = new Map<string, Chat>();
  readonly actions = new Map<string, ChatAction[]>();

  /** The next message_id in a chat (user and bot messages share it). */
  nextMessageId(chatId: number | string): number {
    const key = String(chatId);
    const next = (this.counters.get(key) ?? 0) + 1;
    this.counters.set(key, next);
    return next;
  }

  /** The Chat object for replies: the one seen in an update, or a plausible one from the id. */
  chatFor(chatId: string): Chat {
    const known = this.chats.get(chatId);
    if (known) return known;
    const id = Number(chatId);
    if (!Number.isFinite(id)) return { id: -1009999999999, type: "channel", title: chatId, username: chatId.replace(/^@/, "") };
    return id > 0 ? { id, type: "private", first_name: "User" } : { id, type: "supergroup", title: "Group" };
  }

  /** Remember a message the test delivered to the bot. */
  recordInbound(message: Message): void {
    const key = String(message.chat.id);
    this.chats.set(key, message.chat);
    // Keep the shared counter ahead of ids a test chose by hand.
    this.counters.set(key, Math.max(this.counters.get(key) ?? 0, message.message_id));
    const existing = this.find(key, message.message_id);
    if (existing) {
      // An edited_message: the user changed their text.
      if (existing.text !== undefined && message.text !== undefined) existing.history.push(existing.text);
      existing.text = message.text;
      existing.caption = message.caption;
      existing.message = message;
      return;
    }
    this.add({
      message_id: message.message_id,
      chat_id: key,
      sender: "user",
      kind: kindOf(message),
      text: message.text,
      caption: message.caption,
      entities: message.entities ?? message.caption_entities,
      history: [],
      deleted: false,
      reactions: [],
      thread_id: message.message_thread_id,
      reply_to: message.reply_to_message?.message_id,
      message,
      at: Date.now(),
    });
  }

  add(entry: ChatEntry): ChatEntry {
    const list = this.entries.get(entry.chat_id) ?? [];
    list.push(entry);
    list.sort((a, b) => a.message_id - b.message_id);
    this.entries.set(entry.chat_id, list);
    return entry;
  }

  find(chatId: string, messageId: number): ChatEntry | undefined {
    return this.entries.get(chatId)?.find((e) => e.message_id === messageId);
  }

  list(chatId: number | string): ChatEntry[] {
    return this.entries.get(String(chatId)) ?? [];
  }

  chatIds(): string[] {
    return [...this.entries.keys()];
  }

  recordAction(chatId: string, action: ChatAction): void {
    const list = this.actions.get(chatId) ?? [];
    list.push(action);
    this.actions.set(chatId, list);
  }
}

/** A message as it appears in reply_to_message: Telegram does not nest replies further. */
export function asReply(m: Message): ReplyMessage {
  const { reply_to_message: _, ...rest } = m;
  return { ...rest, reply_to_message: undefined };
}

export function kindOf(m: Message): ChatEntry["kind"] {
  for (const k of ["photo", "document", "voice", "audio", "video", "video_note", "sticker", "animation", "poll"] as const) {
    if (m[k] !== undefined) return k === "document" && m.animation ? "animation" : k;
  }
  return m.text !== undefined ? "text" : "other";
}
