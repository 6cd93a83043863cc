/**
 * The shared vocabulary, on the ground floor: the common inbound message every
 * adapter produces, the hand-off from a channel to the gateway, and the reply
 * port every adapter implements. Nothing past `ingest` knows which platform a
 * message came from; it only knows what the port says it can do. Types and
 * tiny pure helpers only: this module imports nothing above config.
 */
import type { GatewayChannel } from "../config/schema.ts";
import { formatMb } from "../kernel/sizes.ts";

/** Every source of turns: the configured channels and the local command line. */
export type { GatewayChannel } from "../config/schema.ts";

export type MediaKind = "image" | "audio" | "voice" | "video" | "video_note" | "document" | "sticker";

/** What a file is by its MIME type alone (an attachment on Slack, Discord or Signal; a file the agent sends). */
export function mediaKindForMime(mime: string | undefined): "image" | "audio" | "video" | "document" {
  const type = (mime ?? "").toLowerCase();
  if (type.startsWith("image/")) return "image";
  if (type.startsWith("audio/")) return "audio";
  if (type.startsWith("video/")) return "video";
  return "document";
}

/** One attachment as the platform announced it; bytes are fetched only after authorization. */
export interface InboundMedia {
  kind: MediaKind;
  mime?: string;
  /** Size in bytes as declared by the platform, checked against caps before download. */
  declaredSize?: number;
  filename?: string;
  /** Opaque platform reference (Telegram file_id, WhatsApp media id, Slack url_private…). */
  ref: string;
}

export interface InboundMessage {
  channel: GatewayChannel;
  /** Where replies go: Telegram chat id, Slack channel, WhatsApp/Signal sender, Discord channel. */
  chatId: string;
  /** Telegram forum topic, Slack thread_ts, … ; absent for unthreaded chats. */
  threadId?: string;
  /** The stable id used for authorization and shown by /whoami. */
  senderId: string;
  /**
   * Other ids the platform vouches for as the same sender (Signal: the phone
   * number beside the UUID in `senderId`). Authorization accepts any of them,
   * so an owner or allowlist entry may be written either way; /whoami and
   * everything else use `senderId`.
   */
  senderAliases?: string[];
  senderName?: string;
  /** The platform's id for this message: the idempotency key and the target of reactions. */
  messageId: string;
  text: string;
  media: InboundMedia[];
  /** Epoch milliseconds when Fermix received it. */
  receivedAt: number;
  /** Parts of one album share this (Telegram's media_group_id); WhatsApp albums group by sender instead. */
  albumGroup?: string;
  /**
   * The chat is one-to-one between the sender and the bot (a DM), as the
   * platform says: every adapter sets it from its platform's own signal.
   * Access requests show their confirmation code only in direct chats.
   */
  direct?: boolean;
}

/**
 * Whether a message came from a one-to-one chat: the adapter's word. A
 * message without it (one stored by an older version) reads as direct only
 * when the chat is the sender's own; where there is no message at all (a
 * scheduled job's chat), the channel's profile decides (`isDirect`).
 */
export function isDirectChat(message: Pick<InboundMessage, "chatId" | "senderId" | "direct">): boolean {
  return message.direct ?? message.chatId === message.senderId;
}

/** The bytes of one inbound attachment, after download. */
export interface FetchedMedia {
  bytes: Uint8Array;
  mime: string;
  filename?: string;
}

/** A message the port has sent, as the platform identifies it. */
export interface SentMessage {
  /** The platform message id (Telegram message_id, Slack ts, WhatsApp wamid, …). */
  id: string;
}

/** One outbound text message, already rendered for the channel. */
export interface OutboundText {
  /** Text in the channel's dialect (Telegram HTML, Slack mrkdwn, …), or plain when `plain`. */
  text: string;
  /** Only the first message of a reply notifies. */
  notify: boolean;
  /** Link previews are off on every outbound message. */
  linkPreview: false;
  /** True when `text` is plain text, not the channel's markup (the formatting fallback). */
  plain: boolean;
  /**
   * The Markdown this message was rendered from, when known: kept in the
   * outbox so that a reply replayed after a crash knows exactly what of it was
   * already delivered on a channel that cannot take a message back.
   */
  source?: string;
  /**
   * One-tap buttons under the message (an access request's Approve / Deny),
   * on channels whose capabilities say `buttons`; others never get them.
   */
  buttons?: ReplyButton[];
}

/**
 * A button under an outbound message. `data` comes back unchanged in the
 * ButtonPress when someone taps it (at most 64 bytes: Telegram's
 * callback_data limit, within Discord's 100-character custom_id).
 */
export interface ReplyButton {
  label: string;
  data: string;
}

/**
 * Someone tapped a button: what every button channel's adapter hands the
 * gateway, in one call (`AdapterContext.press`), instead of a message. The
 * press is authorized like a message from `senderId` in that chat.
 */
export interface ButtonPress {
  channel: GatewayChannel;
  /** The chat the button's message is in. */
  chatId: string;
  threadId?: string;
  senderId: string;
  senderAliases?: string[];
  /** The platform id of the message that carries the button. */
  messageId: string;
  /** The button's `data`, as sent. */
  data: string;
  /** The press came from a one-to-one chat (see InboundMessage.direct). */
  direct?: boolean;
}

/**
 * What became of a press: `text` is a short answer for the presser alone
 * (Telegram's answerCallbackQuery toast, a Discord ephemeral reply); `done`
 * says the buttons have served (approved, denied, expired): the adapter may
 * take them off the message.
 */
export interface PressResult {
  ok: boolean;
  text: string;
  done: boolean;
}

export type OutboundMediaKind = "image" | "audio" | "voice" | "video" | "document";

export interface OutboundMedia {
  kind: OutboundMediaKind;
  /** A local file path. */
  path: string;
  filename: string;
  mime: string;
  caption?: string;
  notify: boolean;
}

/** What a channel can do; the gateway and the streaming engine never call what is absent. */
export interface ReplyCapabilities {
  edit: boolean;
  delete: boolean;
  /** Reactions: false, "any" single emoji, or the platform's fixed set. */
  react: false | "any" | readonly string[];
  media: boolean;
  typing: boolean;
  /** One-tap buttons under a message (OutboundText.buttons) whose presses come back as ButtonPress; absent: none. */
  buttons?: boolean;
}

/**
 * The way back to one conversation. Built per turn by the adapter; the
 * gateway wraps it in the durable outbox, so every send path goes through it.
 */
export interface ReplyPort {
  readonly capabilities: ReplyCapabilities;
  sendText(message: OutboundText): Promise<SentMessage>;
  editText(target: SentMessage, message: OutboundText): Promise<void>;
  deleteMessage(target: SentMessage): Promise<void>;
  /** React to an inbound message by its platform id. */
  react(messageId: string, emoji: string): Promise<void>;
  sendMedia(media: OutboundMedia): Promise<SentMessage>;
  /** Show "typing…" (or the platform's equivalent) for a few seconds. */
  typing(): Promise<void>;
  /**
   * A surface with its own permission dialog (an editor over ACP:
   * session/request_permission) asks its user directly. Resolves "cancelled"
   * when the user dismissed it or `signal` ended the wait. Absent elsewhere:
   * the gateway prompts with a confirmation code instead.
   */
  askPermission?(ask: PermissionAsk, signal: AbortSignal): Promise<"allow" | "deny" | "cancelled">;
}

/** What a permission dialog shows. */
export interface PermissionAsk {
  /** One line: what is asked for. */
  title: string;
  /** Why, in the asker's words. */
  reason: string;
  /** The path concerned. */
  path: string;
  /** Whether it is about reading or changing. */
  kind: "read" | "edit";
}

/** Thrown by a port when the platform rejected a message for its formatting; the sender retries once as plain text. */
export class FormattingRejected extends Error {
  override name = "FormattingRejected";
}

/**
 * A send the platform did not take, as every port reports it: whether trying
 * again later can help (network errors, 5xx, 429) or not (401/403, a chat that
 * is gone), the HTTP status when there was one, and how long the platform
 * asked us to wait. The message is safe to log: status first, then the
 * platform's own words, never a credential.
 */
export class SendFailed extends Error {
  override name = "SendFailed";
  constructor(
    message: string,
    readonly transient: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Whether an HTTP status means "try again later": 408, 425, 429 and every 5xx. */
export function transientStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** The key of a conversation: one turn at a time per (channel, chat, thread). */
export function conversationKey(message: Pick<InboundMessage, "channel" | "chatId" | "threadId">): string {
  return `${message.channel}:${message.chatId}:${message.threadId ?? ""}`;
}

/** Where a reply goes; enough to rebuild a port after a restart (outbox resume). */
export interface ReplyTarget {
  chatId: string;
  threadId?: string;
  /** The inbound message being answered, for reactions and reply threading. */
  replyTo?: string;
}

/** One message to submit, with its idempotency key (the platform message id, usually). */
export interface Submission {
  key: string;
  message: InboundMessage;
}

export interface SubmitResult {
  fresh: number;
  duplicates: number;
}

/** The daemon is at capacity: the platform should retry later. */
export class HandoffUnavailable extends Error {
  override name = "HandoffUnavailable";
  constructor() {
    super("webhook handoff unavailable: too much work in flight");
  }
}

/**
 * An inbound attachment over a cap, refused by the size the platform declared
 * or as its bytes arrived — never downloaded past the cap. Thrown by a
 * channel's `fetchMedia`; the gateway answers it with a reply naming the cap.
 */
export class MediaTooLarge extends Error {
  override name = "MediaTooLarge";
  constructor(
    readonly size: number,
    readonly cap: number,
  ) {
    super(`the file is ${formatMb(size)}, over the ${formatMb(cap)} limit`);
  }
}
