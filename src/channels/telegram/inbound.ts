/**
 * Telegram updates → common inbound messages. Pure: no I/O, no clock (the
 * arrival time is passed in), so every message kind is tested on data.
 *
 * Only `message` updates become turns. A `callback_query` (a tap on one of
 * the bot's inline buttons) becomes a ButtonPress, handed to the gateway
 * apart from the inbox. Edits, channel posts, reactions and the rest are
 * skipped (their offset still advances), since the bot asks only for
 * `message` and `callback_query` in `allowed_updates`.
 */
import type { Message, Update } from "grammy/types";
import type { ButtonPress, InboundMedia, InboundMessage } from "../../message/index.ts";

/** One accepted Telegram message and the key redeliveries are recognised by. */
export interface TelegramInbound {
  /** `<chat id>:<message id>`: Telegram message ids are unique per chat only. */
  key: string;
  message: InboundMessage;
}

/** The update types the poller asks for; everything else is never delivered. */
export const ALLOWED_UPDATES = ["message", "callback_query"] as const;

/** Convert one update; null for anything that is not a user's message. */
export function toInbound(update: Update, receivedAt: number): TelegramInbound | null {
  const msg = update.message;
  // A message without `from` is a channel post relayed into a group: nobody to authorize.
  if (!msg?.from) return null;
  const chatId = String(msg.chat.id);
  const message: InboundMessage = {
    channel: "telegram",
    chatId,
    senderId: String(msg.from.id),
    messageId: String(msg.message_id),
    text: msg.text ?? msg.caption ?? "",
    media: mediaOf(msg),
    receivedAt,
    direct: msg.chat.type === "private",
  };
  // Only forum topics (and topic-enabled private chats) are threads; a reply chain in a plain group is not.
  if (msg.is_topic_message && msg.message_thread_id !== undefined) message.threadId = String(msg.message_thread_id);
  const name = senderName(msg.from);
  if (name) message.senderName = name;
  if (msg.media_group_id) message.albumGroup = msg.media_group_id;
  return { key: `${chatId}:${msg.message_id}`, message };
}

/** Convert a batch, in update order, skipping what is not a message. */
export function toInboundBatch(updates: readonly Update[], receivedAt: number): TelegramInbound[] {
  return updates.map((u) => toInbound(u, receivedAt)).filter((x): x is TelegramInbound => x !== null);
}

/** One tap on an inline button: the query to answer, and the press (null when there is nothing to act on). */
export interface TelegramPress {
  queryId: string;
  press: ButtonPress | null;
}

const isId = (value: unknown): value is number | string => (typeof value === "number" && Number.isFinite(value)) || (typeof value === "string" && value !== "");

/** Convert a callback_query update; null for any other update (or one without an id to answer). */
export function toPress(update: Update): TelegramPress | null {
  if (!update || typeof update !== "object") return null;
  const query = update.callback_query as Partial<NonNullable<Update["callback_query"]>> | undefined;
  if (!query || typeof query !== "object" || typeof query.id !== "string") return null;
  const msg = query.message;
  // An inline-mode message or a game button carries no chat: nothing of ours to answer.
  if (!msg || typeof msg !== "object" || !msg.chat || !isId(msg.chat.id) || !isId(msg.message_id) || !isId(query.from?.id) || typeof query.data !== "string") {
    return { queryId: query.id, press: null };
  }
  const press: ButtonPress = {
    channel: "telegram",
    chatId: String(msg.chat.id),
    senderId: String(query.from.id),
    messageId: String(msg.message_id),
    data: query.data,
    direct: msg.chat.type === "private",
  };
  // A message too old for the bot to see is "inaccessible" (date 0) and has no thread fields.
  if ("is_topic_message" in msg && msg.is_topic_message === true && isId(msg.message_thread_id)) press.threadId = String(msg.message_thread_id);
  return { queryId: query.id, press };
}

/** The button presses of a batch, in update order. */
export function toPresses(updates: readonly Update[]): TelegramPress[] {
  return updates.map(toPress).filter((x): x is TelegramPress => x !== null);
}

/** The offset that confirms every update in the batch: one past the highest update_id. */
export function nextOffset(updates: readonly Update[], current: number): number {
  return updates.reduce((max, u) => Math.max(max, u.update_id + 1), current);
}

function senderName(from: NonNullable<Message["from"]>): string {
  const full = [from.first_name, from.last_name].filter(Boolean).join(" ").trim();
  return full || from.username || "";
}

/** The attachment of a message, if any; a message carries at most one. */
export function mediaOf(msg: Message): InboundMedia[] {
  if (msg.photo && msg.photo.length > 0) {
    // Sizes arrive ascending; the last is the original.
    const largest = msg.photo[msg.photo.length - 1]!;
    return [media("image", largest.file_id, largest.file_size, "image/jpeg")];
  }
  if (msg.voice) return [media("voice", msg.voice.file_id, msg.voice.file_size, msg.voice.mime_type ?? "audio/ogg")];
  if (msg.audio) return [media("audio", msg.audio.file_id, msg.audio.file_size, msg.audio.mime_type ?? "audio/mpeg", msg.audio.file_name)];
  // Round video notes have no mime_type; they are always MP4, and transcribed from it.
  if (msg.video_note) return [media("video_note", msg.video_note.file_id, msg.video_note.file_size, "video/mp4")];
  if (msg.video) return [media("video", msg.video.file_id, msg.video.file_size, msg.video.mime_type ?? "video/mp4", msg.video.file_name)];
  // An animation also sets `document` for old clients; it is a (silent) video.
  if (msg.animation) {
    const a = msg.animation;
    return [media("video", a.file_id, a.file_size, a.mime_type ?? "video/mp4", a.file_name)];
  }
  if (msg.sticker) {
    const s = msg.sticker;
    const mime = s.is_animated ? "application/x-tgsticker" : s.is_video ? "video/webm" : "image/webp";
    return [media("sticker", s.file_id, s.file_size, mime)];
  }
  if (msg.document) {
    const d = msg.document;
    // An audio file sent "as a file" is still audio: it gets transcribed like a voice note.
    const kind = d.mime_type?.startsWith("audio/") ? "audio" : "document";
    return [media(kind, d.file_id, d.file_size, d.mime_type, d.file_name)];
  }
  // Polls, dice, locations, contacts…: nothing to act on, so the gateway answers "looks empty".
  return [];
}

function media(kind: InboundMedia["kind"], ref: string, size: number | undefined, mime?: string, filename?: string): InboundMedia {
  const out: InboundMedia = { kind, ref };
  if (mime) out.mime = mime;
  if (size !== undefined) out.declaredSize = size;
  if (filename) out.filename = filename;
  return out;
}
