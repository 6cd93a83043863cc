/**
 * Realistic inbound Telegram messages for tests: the shapes a real user's
 * client produces (PhotoSize ladders, voice with mime, albums sharing a
 * media_group_id, forum topics), with message_ids from the chat's own
 * counter and media bytes registered so getFile and the download work.
 */
import type { Chat, Message, MessageEntity, PhotoSize, Update, User } from "grammy/types";
import { asReply } from "./chats.ts";
import type { FileKind, FileStore } from "./files.ts";

/** A default human sender. */
export const ALICE: User = { id: 111111111, is_bot: false, first_name: "Alice", last_name: "Liddell", username: "alice", language_code: "en" };
export const BOB: User = { id: 222222222, is_bot: false, first_name: "Bob", username: "bob", language_code: "en" };

/** The private chat Telegram gives a user's DM with the bot: chat.id equals the user id. */
export function privateChat(user: User = ALICE): Chat.PrivateChat {
  const chat: Chat.PrivateChat = { id: user.id, type: "private", first_name: user.first_name };
  if (user.last_name) chat.last_name = user.last_name;
  if (user.username) chat.username = user.username;
  return chat;
}

/** A supergroup (ids are -100…); `forum: true` makes a topics-enabled group. */
export function groupChat(opts: { id?: number; title?: string; forum?: boolean } = {}): Chat.SupergroupChat {
  const chat: Chat.SupergroupChat = { id: opts.id ?? -1001234567890, type: "supergroup", title: opts.title ?? "Fermix testers" };
  if (opts.forum) chat.is_forum = true;
  return chat;
}

/** A message as a user sends it (never a channel post): what `Update.message` holds. */
export type UserMessage = NonNullable<Update["message"]>;
type UserChat = Chat.PrivateChat | Chat.GroupChat | Chat.SupergroupChat;

export interface Origin {
  from?: User;
  chat?: UserChat;
  /** Forum topic: sets message_thread_id and is_topic_message. */
  thread?: number;
  date?: number;
  reply_to?: Message;
  media_group_id?: string;
  caption?: string;
}

interface MediaOpts {
  caption?: string;
  bytes?: Uint8Array;
  /** Reported file_size (defaults to bytes.length); lets a test claim 30 MB without allocating it. */
  size?: number;
}

export interface BuilderContext {
  files: FileStore;
  nextMessageId(chatId: number | string): number;
}

const enc = new TextEncoder();

/** Commands carry a bot_command entity; grammY's `bot.command()` matches on it, not on the text. */
function commandEntities(text: string): MessageEntity[] | undefined {
  const m = /^\/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{5,32})?/.exec(text);
  return m ? [{ type: "bot_command", offset: 0, length: m[0].length }] : undefined;
}

export class MessageBuilder {
  private groups = 0;

  constructor(private readonly ctx: BuilderContext) {}

  private base(o: Origin, media: MediaOpts = {}): UserMessage {
    const from = o.from ?? ALICE;
    const chat = o.chat ?? privateChat(from);
    const caption = o.caption ?? media.caption;
    const msg: UserMessage = {
      message_id: this.ctx.nextMessageId(chat.id),
      from,
      chat,
      date: o.date ?? Math.floor(Date.now() / 1000),
    };
    if (o.thread !== undefined) {
      msg.message_thread_id = o.thread;
      msg.is_topic_message = true;
    }
    if (o.reply_to) msg.reply_to_message = asReply(o.reply_to);
    if (o.media_group_id) msg.media_group_id = o.media_group_id;
    if (caption !== undefined) msg.caption = caption;
    return msg;
  }

  private file(kind: FileKind, m: MediaOpts, fallback: string, extra: { file_name?: string; mime_type?: string } = {}) {
    const ids = this.ctx.files.newIds(kind);
    const bytes = m.bytes ?? enc.encode(fallback);
    this.ctx.files.add(ids.file_id, bytes, { kind, size: m.size, ...extra });
    return { ...ids, file_size: m.size ?? bytes.byteLength };
  }

  text(text: string, o: Origin = {}): UserMessage {
    const msg = this.base(o);
    msg.text = text;
    const entities = commandEntities(text);
    if (entities) msg.entities = entities;
    return msg;
  }

  /** A photo as Telegram delivers it: several sizes, ascending; the last is the original. */
  photo(p: MediaOpts & { width?: number; height?: number; sizes?: number } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, p);
    const width = p.width ?? 1280;
    const height = p.height ?? 960;
    const count = Math.max(1, p.sizes ?? 3);
    const full = p.bytes ?? enc.encode("fake-jpeg-bytes");
    const fullSize = p.size ?? full.byteLength;
    const ladder: PhotoSize[] = [];
    for (let k = count - 1; k >= 0; k--) {
      const scale = 1 / 2 ** (k * 1.5);
      const isFull = k === 0;
      const size = isFull ? fullSize : Math.max(1, Math.round(fullSize * scale * scale));
      const ids = this.file("photo", { bytes: isFull ? full : full.slice(0, Math.max(1, Math.round(full.byteLength * scale))), size }, "");
      ladder.push({ ...ids, width: Math.round(width * scale), height: Math.round(height * scale) });
    }
    msg.photo = ladder;
    return msg;
  }

  document(d: MediaOpts & { file_name?: string; mime_type?: string } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, d);
    const file_name = d.file_name ?? "notes.txt";
    const mime_type = d.mime_type ?? "text/plain";
    msg.document = { ...this.file("document", d, "hello from a document\n", { file_name, mime_type }), file_name, mime_type };
    return msg;
  }

  /** A voice note: OGG/Opus, as every official client records them. */
  voice(v: MediaOpts & { duration?: number; mime_type?: string } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, v);
    const mime_type = v.mime_type ?? "audio/ogg";
    msg.voice = { ...this.file("voice", v, "OggS-fake-opus", { mime_type }), duration: v.duration ?? 3, mime_type };
    return msg;
  }

  audio(a: MediaOpts & { duration?: number; title?: string; performer?: string; file_name?: string; mime_type?: string } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, a);
    const file_name = a.file_name ?? "song.mp3";
    const mime_type = a.mime_type ?? "audio/mpeg";
    msg.audio = { ...this.file("audio", a, "ID3-fake-mp3", { file_name, mime_type }), duration: a.duration ?? 120, file_name, mime_type };
    if (a.title) msg.audio.title = a.title;
    if (a.performer) msg.audio.performer = a.performer;
    return msg;
  }

  /** A round video message: `length` is the diameter, and there is no mime_type. */
  videoNote(v: MediaOpts & { duration?: number; length?: number } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, v);
    msg.video_note = { ...this.file("video_note", v, "fake-mp4-note"), length: v.length ?? 384, duration: v.duration ?? 5 };
    return msg;
  }

  video(v: MediaOpts & { duration?: number; width?: number; height?: number; file_name?: string } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, v);
    const file_name = v.file_name ?? "clip.mp4";
    msg.video = {
      ...this.file("video", v, "fake-mp4", { file_name, mime_type: "video/mp4" }),
      width: v.width ?? 1280,
      height: v.height ?? 720,
      duration: v.duration ?? 10,
      file_name,
      mime_type: "video/mp4",
    };
    return msg;
  }

  sticker(s: MediaOpts & { emoji?: string; set_name?: string } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o, s);
    msg.sticker = {
      ...this.file("sticker", s, "RIFF-fake-webp"),
      type: "regular",
      width: 512,
      height: 512,
      is_animated: false,
      is_video: false,
      emoji: s.emoji ?? "😀",
      set_name: s.set_name ?? "FermixTestStickers",
    };
    return msg;
  }

  poll(p: { question?: string; options?: string[] } = {}, o: Origin = {}): UserMessage {
    const msg = this.base(o);
    const options = (p.options ?? ["Yes", "No"]).map((text, i) => ({ persistent_id: String(i), text, voter_count: 0 }));
    msg.poll = {
      id: String(5000000000000000000n + BigInt(msg.message_id)),
      question: p.question ?? "Lunch?",
      options,
      total_voter_count: 0,
      is_closed: false,
      is_anonymous: true,
      type: "regular",
      allows_multiple_answers: false,
      allows_revoting: false,
      members_only: false,
    };
    return msg;
  }

  /**
   * An album: one message per item sharing a media_group_id, each its own update.
   * The caption (if any) rides on the first item, as clients send it.
   */
  album(items: Array<{ photo?: Parameters<MessageBuilder["photo"]>[0]; document?: Parameters<MessageBuilder["document"]>[0] }>, o: Origin = {}): UserMessage[] {
    const media_group_id = String(13000000000000000n + BigInt(++this.groups));
    return items.map((item, i) => {
      const origin: Origin = { ...o, media_group_id, caption: i === 0 ? o.caption : undefined };
      return item.document ? this.document(item.document, origin) : this.photo(item.photo ?? {}, origin);
    });
  }
}
