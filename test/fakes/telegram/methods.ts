/**
 * The Bot API methods that change what a chat shows: sendMessage,
 * editMessageText, deleteMessage, setMessageReaction, sendChatAction and the
 * media sends. Each validates what the real server validates (with its error
 * wording) and updates the chat log, so tests can assert on what the user sees.
 */
import type { InlineKeyboardMarkup, Message, MessageEntity, PhotoSize, ReactionType, User } from "grammy/types";
import type { RecordedFile } from "../recorder.ts";
import { asReply, type ChatEntry, type ChatLog, kindOf } from "./chats.ts";
import { type FileKind, type FileStore, mimeFromName } from "./files.ts";
import { parseTelegramHtml, telegramLength } from "./html.ts";

/** An error the Bot API answers with `{ok:false,error_code,description,parameters?}`. */
export class TgError extends Error {
  constructor(
    readonly error_code: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number; migrate_to_chat_id?: number },
  ) {
    super(description);
  }
}

/** The 73 emoji a non-premium bot may react with (Bot API ReactionTypeEmoji). */
export const ALLOWED_REACTIONS = new Set(
  (
    "👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 " +
    "👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡"
  ).split(" "),
);

const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);

export const TEXT_LIMIT = 4096;
export const CAPTION_LIMIT = 1024;
const UPLOAD_LIMIT = 50 * 1024 * 1024;
const PHOTO_LIMIT = 10 * 1024 * 1024;

/** Request parameters as the Bot API reads them: JSON values, or multipart strings it coerces. */
export class Params {
  constructor(readonly raw: Record<string, unknown>) {}

  str(name: string): string | undefined {
    const v = this.raw[name];
    return v === undefined || v === null ? undefined : typeof v === "string" ? v : String(v);
  }

  num(name: string): number | undefined {
    const v = this.raw[name];
    if (v === undefined || v === null || v === "") return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new TgError(400, `Bad Request: invalid ${name} specified`);
    return n;
  }

  bool(name: string): boolean {
    const v = this.raw[name];
    return v === true || v === "true" || v === "1" || v === 1;
  }

  /** Objects arrive as JSON strings in multipart requests. */
  obj<T>(name: string): T | undefined {
    const v = this.raw[name];
    if (typeof v !== "string") return v as T | undefined;
    try {
      return JSON.parse(v) as T;
    } catch {
      throw new TgError(400, `Bad Request: can't parse ${name} JSON object`);
    }
  }

  chatId(): string {
    const id = this.str("chat_id");
    if (!id) throw new TgError(400, "Bad Request: chat_id is empty");
    return id;
  }
}

export interface TelegramState {
  bot: User;
  chats: ChatLog;
  files: FileStore;
  validateHtml: boolean;
  lengthUnit: "utf16" | "codepoint";
}

/** Text or caption as the server renders it: parsed HTML, explicit entities, or plain. */
function render(s: TelegramState, p: Params, field: "text" | "caption"): { text: string; entities?: MessageEntity[] } {
  const raw = p.str(field) ?? "";
  const mode = p.str("parse_mode")?.toLowerCase();
  if (mode === "html" && s.validateHtml) {
    const parsed = parseTelegramHtml(raw);
    if (!parsed.ok) throw new TgError(400, `Bad Request: can't parse entities: ${parsed.error}`);
    return parsed.entities.length > 0 ? { text: parsed.text, entities: parsed.entities } : { text: parsed.text };
  }
  const entities = p.obj<MessageEntity[]>(field === "text" ? "entities" : "caption_entities");
  return entities ? { text: raw, entities } : { text: raw };
}

/** Fields every sent message shares: ids, sender, chat, thread, reply. */
function envelope(s: TelegramState, p: Params, chatId: string): { message: Message; entry: Omit<ChatEntry, "kind" | "message"> } {
  const thread = p.num("message_thread_id");
  const reply = p.obj<{ message_id: number; allow_sending_without_reply?: boolean }>("reply_parameters");
  const replyId = reply?.message_id ?? p.num("reply_to_message_id");
  let replied: ChatEntry | undefined;
  if (replyId !== undefined) {
    replied = s.chats.find(chatId, replyId);
    if ((!replied || replied.deleted) && !reply?.allow_sending_without_reply) {
      throw new TgError(400, "Bad Request: message to be replied not found");
    }
  }
  const message: Message = {
    message_id: s.chats.nextMessageId(chatId),
    from: s.bot,
    chat: s.chats.chatFor(chatId),
    date: Math.floor(Date.now() / 1000),
  };
  if (thread !== undefined) {
    message.message_thread_id = thread;
    message.is_topic_message = true;
  }
  if (replied && !replied.deleted) message.reply_to_message = asReply(replied.message);
  const preview = p.obj<{ is_disabled?: boolean }>("link_preview_options");
  return {
    message,
    entry: {
      message_id: message.message_id,
      chat_id: chatId,
      sender: "bot",
      history: [],
      deleted: false,
      reactions: [],
      thread_id: thread,
      reply_to: replied?.message_id,
      disable_notification: p.bool("disable_notification"),
      link_preview_disabled: preview?.is_disabled === true || p.bool("disable_web_page_preview"),
      parse_mode: p.str("parse_mode"),
      at: Date.now(),
    },
  };
}

export function sendMessage(s: TelegramState, p: Params): Message {
  const chatId = p.chatId();
  const { text, entities } = render(s, p, "text");
  if (text.trim() === "") throw new TgError(400, "Bad Request: message text is empty");
  if (telegramLength(text, s.lengthUnit) > TEXT_LIMIT) throw new TgError(400, "Bad Request: message is too long");
  const { message, entry } = envelope(s, p, chatId);
  message.text = text;
  if (entities) message.entities = entities;
  const preview = p.obj<Message["link_preview_options"]>("link_preview_options");
  if (preview) message.link_preview_options = preview;
  const markup = inlineKeyboard(p);
  if (markup) message.reply_markup = markup;
  s.chats.add({ ...entry, kind: "text", text, source: p.str("text"), entities, message, ...(markup ? { reply_markup: markup } : {}) });
  return message;
}

/** A reply_markup parameter that is an inline keyboard, validated as the server does; undefined when absent. */
function inlineKeyboard(p: Params): InlineKeyboardMarkup | undefined {
  const markup = p.obj<{ inline_keyboard?: unknown }>("reply_markup");
  if (markup === undefined) return undefined;
  const rows = markup?.inline_keyboard;
  if (!Array.isArray(rows) || !rows.every(Array.isArray))
    throw new TgError(400, "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be an Object");
  for (const button of rows.flat() as Array<{ text?: unknown; callback_data?: unknown }>) {
    if (typeof button?.text !== "string" || button.text === "")
      throw new TgError(400, "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard");
    if (typeof button.callback_data === "string" && new TextEncoder().encode(button.callback_data).byteLength > 64) {
      throw new TgError(400, "Bad Request: BUTTON_DATA_INVALID");
    }
  }
  return markup as InlineKeyboardMarkup;
}

export function editMessageReplyMarkup(s: TelegramState, p: Params): Message {
  const entry = editable(s, p, "edit");
  if (entry.sender !== "bot") throw new TgError(400, "Bad Request: message can't be edited");
  const markup = inlineKeyboard(p) ?? { inline_keyboard: [] };
  if (JSON.stringify(markup) === JSON.stringify(entry.reply_markup ?? { inline_keyboard: [] })) {
    throw new TgError(
      400,
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
  }
  entry.reply_markup = markup;
  const message: Message = { ...entry.message, edit_date: Math.floor(Date.now() / 1000) };
  if (markup.inline_keyboard.length > 0) message.reply_markup = markup;
  else delete message.reply_markup;
  entry.message = message;
  return message;
}

function editable(s: TelegramState, p: Params, verb: "edit" | "delete" | "react"): ChatEntry {
  if (p.str("inline_message_id")) throw new TgError(400, "Bad Request: inline messages are not supported by this fake");
  const chatId = p.chatId();
  const id = p.num("message_id");
  if (id === undefined) throw new TgError(400, "Bad Request: message identifier is not specified");
  const entry = s.chats.find(chatId, id);
  if (!entry || entry.deleted) {
    throw new TgError(400, verb === "react" ? "Bad Request: MESSAGE_ID_INVALID" : `Bad Request: message to ${verb} not found`);
  }
  return entry;
}

export function editMessageText(s: TelegramState, p: Params): Message {
  const entry = editable(s, p, "edit");
  if (entry.sender !== "bot") throw new TgError(400, "Bad Request: message can't be edited");
  if (entry.text === undefined) throw new TgError(400, "Bad Request: there is no text in the message to edit");
  const { text, entities } = render(s, p, "text");
  if (text.trim() === "") throw new TgError(400, "Bad Request: message text is empty");
  if (telegramLength(text, s.lengthUnit) > TEXT_LIMIT) throw new TgError(400, "Bad Request: MESSAGE_TOO_LONG");
  if (text === entry.text && JSON.stringify(entities ?? []) === JSON.stringify(entry.entities ?? []) && p.raw.reply_markup === undefined) {
    throw new TgError(
      400,
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
  }
  entry.history.push(entry.text);
  entry.text = text;
  entry.source = p.str("text");
  entry.entities = entities;
  entry.parse_mode = p.str("parse_mode");
  const message: Message = { ...entry.message, text, edit_date: Math.floor(Date.now() / 1000) };
  if (entities) message.entities = entities;
  else delete message.entities;
  entry.message = message;
  return message;
}

export function deleteMessage(s: TelegramState, p: Params): true {
  editable(s, p, "delete").deleted = true;
  return true;
}

export function setMessageReaction(s: TelegramState, p: Params): true {
  const entry = editable(s, p, "react");
  const reaction = p.obj<ReactionType[]>("reaction") ?? [];
  for (const r of reaction) {
    if (r.type !== "emoji" || !ALLOWED_REACTIONS.has(r.emoji)) throw new TgError(400, "Bad Request: REACTION_INVALID");
  }
  // A bot without Premium may set only one reaction per message.
  if (reaction.length > 1) throw new TgError(400, "Bad Request: REACTIONS_TOO_MANY");
  entry.reactions = reaction;
  return true;
}

export function sendChatAction(s: TelegramState, p: Params): true {
  const chatId = p.chatId();
  const action = p.str("action") ?? "";
  if (!CHAT_ACTIONS.has(action)) throw new TgError(400, "Bad Request: wrong parameter action in request");
  s.chats.recordAction(chatId, { action, thread_id: p.num("message_thread_id"), at: Date.now() });
  return true;
}

/** Bot API method → the field carrying the file (also the Message field it comes back in). */
export const MEDIA_METHODS: Record<string, FileKind> = {
  sendPhoto: "photo",
  sendDocument: "document",
  sendVoice: "voice",
  sendAudio: "audio",
  sendVideo: "video",
  sendVideoNote: "video_note",
  sendSticker: "sticker",
  sendAnimation: "animation",
};

type Input = { source: "upload"; part: RecordedFile } | { source: "url"; url: string } | { source: "file_id"; file_id: string };

/** Find the file: an `attach://` part (grammY), a part named like the field, a URL, or a known file_id. */
function resolveInput(s: TelegramState, p: Params, field: FileKind, parts: RecordedFile[]): Input {
  const value = p.str(field);
  if (value === undefined) {
    const part = parts.find((f) => f.field === field);
    if (!part) throw new TgError(400, `Bad Request: there is no ${field} in the request`);
    return { source: "upload", part };
  }
  if (value.startsWith("attach://")) {
    const part = parts.find((f) => f.field === value.slice("attach://".length));
    if (!part) throw new TgError(400, "Bad Request: wrong file identifier/HTTP URL specified");
    return { source: "upload", part };
  }
  // The fake never fetches: a URL is recorded, not downloaded.
  if (/^https?:\/\//i.test(value)) return { source: "url", url: value };
  if (!s.files.get(value)) throw new TgError(400, "Bad Request: wrong file identifier/HTTP URL specified");
  return { source: "file_id", file_id: value };
}

export function sendMedia(s: TelegramState, p: Params, method: string, parts: RecordedFile[]): Message {
  const field = MEDIA_METHODS[method]!;
  const chatId = p.chatId();
  const input = resolveInput(s, p, field, parts);
  const size = input.source === "upload" ? input.part.size : input.source === "file_id" ? s.files.get(input.file_id)!.size : undefined;
  if (size !== undefined && input.source === "upload" && size > UPLOAD_LIMIT) throw new TgError(413, "Request Entity Too Large");
  if (field === "photo" && size !== undefined && size > PHOTO_LIMIT) throw new TgError(400, "Bad Request: PHOTO_SAVE_FILE_INVALID");
  const caption = render(s, p, "caption");
  if (telegramLength(caption.text, s.lengthUnit) > CAPTION_LIMIT) throw new TgError(400, "Bad Request: message caption is too long");
  const { message, entry } = envelope(s, p, chatId);
  const filename =
    input.source === "upload" ? input.part.filename : input.source === "url" ? input.url.split("/").pop() : s.files.get(input.file_id)?.file_name;
  const mime_type = mimeFromName(filename ?? "", field === "voice" ? "audio/ogg" : "application/octet-stream");
  // The sent file becomes downloadable by the bot, as on Telegram.
  const bytes = input.source === "upload" ? input.part.bytes : input.source === "file_id" ? s.files.get(input.file_id)!.bytes : new Uint8Array();
  const ids = s.files.newIds(field);
  s.files.add(ids.file_id, bytes, { kind: field, size, file_name: filename, mime_type });
  const file_size = size ?? bytes.byteLength;
  const common = { ...ids, file_size };
  const duration = p.num("duration") ?? 1;
  if (field === "photo") {
    const thumb = s.files.newIds("photo");
    s.files.add(thumb.file_id, bytes.slice(0, 64), { kind: "photo" });
    message.photo = [
      { ...thumb, width: 320, height: 240, file_size: Math.min(file_size, 64) },
      { ...common, width: 1280, height: 960 },
    ] satisfies PhotoSize[];
  } else if (field === "document") message.document = { ...common, file_name: filename, mime_type };
  else if (field === "voice") message.voice = { ...common, duration, mime_type };
  else if (field === "audio") message.audio = { ...common, duration, file_name: filename, mime_type };
  else if (field === "video") message.video = { ...common, width: 1280, height: 720, duration, file_name: filename, mime_type };
  else if (field === "video_note") message.video_note = { ...common, length: 384, duration };
  else if (field === "animation") message.animation = { ...common, width: 480, height: 270, duration, file_name: filename, mime_type };
  else message.sticker = { ...common, type: "regular", width: 512, height: 512, is_animated: false, is_video: false };
  if (caption.text !== "") message.caption = caption.text;
  if (caption.entities) message.caption_entities = caption.entities;
  s.chats.add({
    ...entry,
    kind: kindOf(message),
    caption: caption.text === "" ? undefined : caption.text,
    source: p.str("caption"),
    entities: caption.entities,
    file: { source: input.source, filename, size, mime_type, url: input.source === "url" ? input.url : undefined },
    message,
  });
  return message;
}
