/**
 * Discord MESSAGE_CREATE → the common inbound message. Pure and total: every
 * `d`, however malformed, comes back as a message, an ignored event with its
 * reason, or invalid — never a throw (the gateway feeds it whatever arrives).
 *
 * Rules: bots, webhooks, system messages and the bot itself are ignored. A
 * DM (no `guild_id`) always reaches the gateway; in a guild channel only a
 * message that mentions the bot or replies to one of its messages does, with
 * the mention taken out of the text. A message in a thread belongs to the
 * thread's conversation (chat = the parent channel, thread = the thread,
 * which is where replies go). Attachments become media with their declared
 * size — audio (`audio/*`, Discord's voice messages among them) as audio or
 * voice, for the gateway to transcribe; the sender id is the user's
 * snowflake; a DM is marked `direct`.
 */
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type InboundMedia, type InboundMessage, type MediaKind, mediaKindForMime } from "../../message/index.ts";
import { MessageFlags, MessageType } from "./wire.ts";

export type DiscordParseResult =
  | {
      kind: "message";
      /** The message's snowflake: unique across Discord, so it is the idempotency key as it is. */
      key: string;
      message: InboundMessage;
      /** Where the message was posted (the thread's id for a thread message). */
      channelId: string;
      /** Absent for a DM. */
      guildId?: string;
    }
  | { kind: "ignored"; why: string }
  | { kind: "invalid" };

export interface DiscordParseOptions {
  /** The bot's own user id (config `bot_user_id`, else Ready's); unknown, guild messages cannot be addressed to it. */
  botUserId?: string;
  /** The parent channel of a thread, when the channel is a thread Fermix has heard of (directory.ts). */
  threadParent?: (channelId: string) => string | undefined;
  /** Epoch milliseconds stamped as `receivedAt`. */
  receivedAt: number;
}

const Snowflake = Type.String({ pattern: "^\\d{1,25}$" });
const Attachment = Type.Object({
  id: Snowflake,
  filename: Type.String(),
  size: Type.Number({ minimum: 0 }),
  url: Type.String({ minLength: 1 }),
  content_type: Type.Optional(Type.String()),
});
type AttachmentT = typeof Attachment.static;

// Only what the conversion reads; Discord adds fields freely and extra keys never make a payload invalid.
const MessageCreate = Type.Object({
  id: Snowflake,
  channel_id: Snowflake,
  guild_id: Type.Optional(Snowflake),
  author: Type.Object({
    id: Snowflake,
    bot: Type.Optional(Type.Boolean()),
    system: Type.Optional(Type.Boolean()),
    username: Type.Optional(Type.String()),
    global_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
  content: Type.Optional(Type.String()),
  type: Type.Optional(Type.Number()),
  flags: Type.Optional(Type.Number()),
  webhook_id: Type.Optional(Type.Unknown()),
  mentions: Type.Optional(Type.Array(Type.Unknown())),
  referenced_message: Type.Optional(Type.Unknown()),
  attachments: Type.Optional(Type.Array(Type.Unknown())),
});
type MessageCreateT = typeof MessageCreate.static;

const UserRef = Type.Object({ id: Snowflake });
const Referenced = Type.Object({ author: UserRef });

/** Message types a person writes: a plain message and a reply. Joins, pins, boosts and the rest are housekeeping. */
const USER_TYPES = new Set<number>([MessageType.Default, MessageType.Reply]);

/** Convert one MESSAGE_CREATE `d`. */
export function parseMessageCreate(data: unknown, options: DiscordParseOptions): DiscordParseResult {
  if (!Value.Check(MessageCreate, data)) return { kind: "invalid" };
  const msg = data;
  const bot = options.botUserId;
  if (msg.author.bot || msg.author.system) return { kind: "ignored", why: "written by a bot" };
  if (bot && msg.author.id === bot) return { kind: "ignored", why: "the bot's own message" };
  if (msg.webhook_id !== undefined && msg.webhook_id !== null) return { kind: "ignored", why: "posted by a webhook" };
  if (msg.type !== undefined && !USER_TYPES.has(msg.type)) return { kind: "ignored", why: `system message (type ${msg.type})` };

  const content = msg.content ?? "";
  if (msg.guild_id !== undefined) {
    if (!bot) return { kind: "ignored", why: "guild message before the bot's own id is known" };
    if (!addressedTo(msg, bot)) return { kind: "ignored", why: "guild message that neither mentions nor replies to the bot" };
  }

  const parent = msg.guild_id !== undefined ? options.threadParent?.(msg.channel_id) : undefined;
  const message: InboundMessage = {
    channel: "discord",
    chatId: parent ?? msg.channel_id,
    senderId: msg.author.id,
    messageId: msg.id,
    text: bot ? withoutMention(content, bot) : content.trim(),
    media: mediaOf(msg),
    receivedAt: options.receivedAt,
    // A DM is one-to-one with the bot: there an access request shows its code.
    direct: msg.guild_id === undefined,
  };
  if (parent) message.threadId = msg.channel_id;
  const name = msg.author.global_name || msg.author.username;
  if (name) message.senderName = name;
  const result: DiscordParseResult = { kind: "message", key: msg.id, message, channelId: msg.channel_id };
  if (msg.guild_id !== undefined) result.guildId = msg.guild_id;
  return result;
}

/** Whether a guild message is for the bot: it mentions the bot, or replies to one of the bot's messages. */
function addressedTo(msg: MessageCreateT, bot: string): boolean {
  if ((msg.mentions ?? []).some((user) => Value.Check(UserRef, user) && user.id === bot)) return true;
  if (mentionPattern(bot).test(msg.content ?? "")) return true;
  return Value.Check(Referenced, msg.referenced_message) && msg.referenced_message.author.id === bot;
}

const mentionPattern = (bot: string) => new RegExp(`<@!?${bot}>`, "g");

/** The text without the bot's mention (`<@id>` or the legacy `<@!id>`), spaces tidied. */
export function withoutMention(content: string, bot: string): string {
  return content
    .replace(mentionPattern(bot), " ")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

function mediaOf(msg: MessageCreateT): InboundMedia[] {
  const voice = ((msg.flags ?? 0) & MessageFlags.IsVoiceMessage) !== 0;
  const media: InboundMedia[] = [];
  for (const item of msg.attachments ?? []) {
    if (!Value.Check(Attachment, item)) continue;
    media.push(toMedia(item, voice));
  }
  return media;
}

function toMedia(attachment: AttachmentT, voice: boolean): InboundMedia {
  const mime = attachment.content_type?.split(";")[0]?.trim().toLowerCase() || undefined;
  const kind = kindOf(mime, voice);
  const media: InboundMedia = { kind, ref: attachment.url, declaredSize: attachment.size };
  if (mime) media.mime = mime;
  else if (kind === "voice") media.mime = "audio/ogg";
  if (attachment.filename) media.filename = attachment.filename;
  return media;
}

function kindOf(mime: string | undefined, voice: boolean): MediaKind {
  const type = mime ?? "";
  // Any audio/* goes to the transcription step; Discord's voice messages are flagged as such (and are OGG Opus even untyped).
  if (voice && (type === "" || type.startsWith("audio/"))) return "voice";
  return mediaKindForMime(type);
}
