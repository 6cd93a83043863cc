/**
 * Slack Events API payloads → the common inbound message. Pure and total:
 * the route calls it only after the signature checked out, and every input,
 * however malformed, comes back as one of four results instead of a throw.
 */
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type InboundMedia, type InboundMessage, mediaKindForMime } from "../../message/index.ts";
import { decodeJson } from "../net.ts";

export type SlackParseResult =
  | { kind: "url_verification"; challenge: string }
  | { kind: "message"; message: InboundMessage; idempotencyKey: string; eventId?: string }
  | { kind: "ignored"; why: string }
  | { kind: "invalid" };

export interface SlackParseOptions {
  /** The bot's own user id (`U…`): its messages are ignored and its mention stripped. */
  botUserId?: string;
  /**
   * Whether the bot takes part in a channel thread. Absent, every thread reply
   * is handled; the caller can narrow that with what its conversation store knows.
   */
  botInThread?: (channel: string, threadTs: string) => boolean;
  /** Epoch milliseconds stamped as `receivedAt`; defaults to now. */
  receivedAt?: number;
}

const Envelope = Type.Object({ type: Type.String() });
const UrlVerification = Type.Object({ type: Type.Literal("url_verification"), challenge: Type.String() });
const EventCallback = Type.Object({
  type: Type.Literal("event_callback"),
  event_id: Type.Optional(Type.String()),
  authorizations: Type.Optional(Type.Array(Type.Unknown())),
  event: Type.Object({ type: Type.String() }),
});
const BotAuthorization = Type.Object({ user_id: Type.String({ minLength: 1 }), is_bot: Type.Literal(true) });

// Only what the conversion reads is declared; Slack adds fields freely and
// TypeBox objects accept extra keys, so new fields never make a payload invalid.
const MessageEvent = Type.Object({
  type: Type.Union([Type.Literal("message"), Type.Literal("app_mention")]),
  channel: Type.String({ minLength: 1 }),
  ts: Type.String({ minLength: 1 }),
  user: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  thread_ts: Type.Optional(Type.String()),
  subtype: Type.Optional(Type.String()),
  // Only its presence matters: any bot_id means a bot wrote it.
  bot_id: Type.Optional(Type.Unknown()),
  channel_type: Type.Optional(Type.String()),
  files: Type.Optional(Type.Array(Type.Unknown())),
});
const SlackFile = Type.Object({
  name: Type.Optional(Type.String()),
  mimetype: Type.Optional(Type.String()),
  size: Type.Optional(Type.Number()),
  url_private: Type.Optional(Type.String({ minLength: 1 })),
  url_private_download: Type.Optional(Type.String({ minLength: 1 })),
});

type MessageEventT = typeof MessageEvent.static;
type SlackFileT = typeof SlackFile.static;

/**
 * Subtypes that are still a person talking to us. Everything else (edits,
 * deletions, bot_message, joins, topic changes…) is housekeeping and ignored.
 * me_message is `/me waves`: typed by the user, so it counts.
 */
const USER_SUBTYPES = new Set(["file_share", "thread_broadcast", "me_message"]);

/** Decode and parse a verified raw body; bytes that are not UTF-8 JSON are `invalid`. */
export function parseSlackBody(rawBody: Uint8Array, options: SlackParseOptions = {}): SlackParseResult {
  const json = decodeJson(rawBody);
  return json === undefined ? { kind: "invalid" } : parseSlackEvent(json, options);
}

/** Classify one parsed Events API envelope: challenge, inbound message, ignored event, or invalid envelope. */
export function parseSlackEvent(json: unknown, options: SlackParseOptions = {}): SlackParseResult {
  if (!Value.Check(Envelope, json)) return { kind: "invalid" };
  if (json.type === "url_verification") {
    return Value.Check(UrlVerification, json) ? { kind: "url_verification", challenge: json.challenge } : { kind: "invalid" };
  }
  // Other envelope types (app_rate_limited, …) are authentic Slack traffic we
  // have no use for: acknowledged, never a 400 that would make Slack retry.
  if (json.type !== "event_callback") return { kind: "ignored", why: `envelope:${json.type}` };
  if (!Value.Check(EventCallback, json)) return { kind: "invalid" };

  const event: unknown = json.event;
  if (!Value.Check(MessageEvent, event)) {
    const type = json.event.type;
    return { kind: "ignored", why: type === "message" || type === "app_mention" ? "malformed_event" : `event:${type}` };
  }
  const botUserId = options.botUserId ?? botFromAuthorizations(json.authorizations);
  const skip = ignoreReason(event, botUserId, options.botInThread);
  if (skip) return { kind: "ignored", why: skip };

  const message = toInboundMessage(event, botUserId, options.receivedAt ?? Date.now());
  // The key is the message's identity (channel + ts), not event_id: a mention
  // in a channel arrives twice, as `message` and as `app_mention`, with two
  // different event_ids but one ts, and must become one turn. Slack's retries
  // repeat the same channel and ts, so they are caught too.
  const idempotencyKey = `${event.channel}:${event.ts}`;
  return json.event_id ? { kind: "message", message, idempotencyKey, eventId: json.event_id } : { kind: "message", message, idempotencyKey };
}

/** Why a well-formed message event gets no turn, or undefined when it should get one. */
function ignoreReason(event: MessageEventT, botUserId: string | undefined, botInThread: SlackParseOptions["botInThread"]): string | undefined {
  if (event.subtype !== undefined && !USER_SUBTYPES.has(event.subtype)) return `subtype:${event.subtype}`;
  if (event.bot_id != null) return "bot";
  if (!event.user) return "no_user";
  if (botUserId && event.user === botUserId) return "own_message";
  if (isDirect(event)) return undefined;
  // In a channel, answer only when the bot is mentioned or the message
  // continues a thread the bot is in (README.md "Channels").
  if (event.type === "app_mention" || (botUserId && mentions(event.text ?? "", botUserId))) return undefined;
  if (event.thread_ts && (botInThread?.(event.channel, event.thread_ts) ?? true)) return undefined;
  return "not_addressed";
}

function toInboundMessage(event: MessageEventT, botUserId: string | undefined, receivedAt: number): InboundMessage {
  // InboundMessage has one thread field, and it must name where the reply
  // goes: a channel message is answered in its thread, and a top-level
  // channel message starts that thread at its own ts. Using ts here also
  // makes the follow-ups (whose thread_ts is that ts) the same conversation.
  // A DM is answered in the DM itself, so it has no thread unless the user
  // opened one.
  const threadId = event.thread_ts || (isDirect(event) ? undefined : event.ts);
  const message: InboundMessage = {
    channel: "slack",
    chatId: event.channel,
    senderId: event.user!,
    messageId: event.ts,
    text: cleanText(event.text ?? "", botUserId),
    media: mediaOf(event.files),
    receivedAt,
    direct: isDirect(event),
  };
  if (threadId) message.threadId = threadId;
  return message;
}

/** A DM: Slack says so in channel_type; app_mention carries none, and DM channel ids start with D. */
function isDirect(event: MessageEventT): boolean {
  if (event.channel_type) return event.channel_type === "im" || event.channel_type === "app_home";
  return event.type === "message" && event.channel.startsWith("D");
}

function mentionPattern(botUserId: string, anchored: boolean): RegExp {
  const id = botUserId.replace(/[^A-Za-z0-9]/g, "");
  // Slack writes a mention as <@U123> or, from older clients, <@U123|name>.
  return new RegExp(`${anchored ? "^\\s*" : ""}<@${id}(?:\\|[^>]*)?>${anchored ? "[\\s,:]*" : ""}`);
}

function mentions(text: string, botUserId: string): boolean {
  return mentionPattern(botUserId, false).test(text);
}

/** Drop the leading bot mention ("@fermix what's up" → "what's up") and undo Slack's three HTML escapes. */
function cleanText(text: string, botUserId: string | undefined): string {
  const stripped = botUserId ? text.replace(mentionPattern(botUserId, true), "") : text;
  // Slack escapes only these three; &amp; goes last so "&amp;lt;" stays "&lt;".
  return stripped.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Files become media; one without a download URL (external, tombstoned, over the plan limit) is skipped. */
function mediaOf(files: unknown[] | undefined): InboundMedia[] {
  const media: InboundMedia[] = [];
  for (const file of files ?? []) {
    if (!Value.Check(SlackFile, file)) continue;
    const ref = file.url_private_download ?? file.url_private;
    if (!ref) continue;
    media.push(toMedia(file, ref));
  }
  return media;
}

function toMedia(file: SlackFileT, ref: string): InboundMedia {
  const media: InboundMedia = { kind: mediaKindForMime(file.mimetype), ref };
  if (file.mimetype) media.mime = file.mimetype;
  if (file.size !== undefined && Number.isFinite(file.size) && file.size >= 0) media.declaredSize = file.size;
  if (file.name) media.filename = file.name;
  return media;
}

/** The bot user id Slack lists among the event's authorizations, when the caller did not configure one. */
function botFromAuthorizations(authorizations: unknown[] | undefined): string | undefined {
  for (const entry of authorizations ?? []) {
    if (Value.Check(BotAuthorization, entry)) return entry.user_id;
  }
  return undefined;
}
