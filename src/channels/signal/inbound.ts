/**
 * signal-cli `receive` notifications → the common inbound message. Pure and
 * total: whatever signal-cli prints, malformed or not, comes back as one of
 * three results instead of a throw.
 *
 * The ids this module decides, and the rest of the adapter relies on:
 * - `senderId` is the sender's ACI UUID (stable across number changes, what
 *   /whoami shows), or the phone number when signal-cli knows no UUID. The
 *   number, when both are known, goes in `senderAliases`, so an allowlist or
 *   owner written as a phone number still matches (gateway/trust.ts).
 * - `chatId` is that same sender id for a direct message, and
 *   `group:<groupId>` (signal-cli's base64 group id) for a group message.
 * - `messageId` is `<author>:<timestamp>`: Signal names a message by its
 *   author and the sender's timestamp, and a reaction needs both.
 * - An attachment's `ref` is its id in signal-cli's attachment store.
 */
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type InboundMedia, type InboundMessage, mediaKindForMime } from "../../message/index.ts";
import { isAttachmentId } from "./files.ts";

export type SignalParseResult = { kind: "message"; message: InboundMessage; idempotencyKey: string } | { kind: "ignored"; why: string } | { kind: "invalid" };

export interface SignalParseOptions {
  /** Our own account number: anything it wrote is never a turn. */
  account?: string;
  /** Epoch milliseconds stamped as `receivedAt`. */
  receivedAt: number;
}

/** The chat id prefix of a group conversation. */
export const GROUP_PREFIX = "group:";

// Only what the conversion reads is declared; TypeBox objects accept extra
// keys, so fields signal-cli adds later never make an envelope invalid.
const Timestamp = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Attachment = Type.Object({
  id: Type.Optional(Type.String()),
  contentType: Type.Optional(Type.String()),
  filename: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  size: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});
const Mention = Type.Object({
  start: Type.Number(),
  length: Type.Number(),
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  number: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  uuid: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const DataMessage = Type.Object({
  timestamp: Type.Optional(Timestamp),
  message: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  attachments: Type.Optional(Type.Array(Type.Unknown())),
  mentions: Type.Optional(Type.Array(Type.Unknown())),
  groupInfo: Type.Optional(Type.Object({ groupId: Type.String({ minLength: 1 }), type: Type.Optional(Type.String()) })),
});
const Envelope = Type.Object({
  source: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sourceNumber: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sourceUuid: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sourceName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  timestamp: Timestamp,
  dataMessage: Type.Optional(Type.Unknown()),
});

type DataMessageT = typeof DataMessage.static;

/** Envelope parts that are never a person talking to us, by the name the log gives the skip. */
const NOT_MESSAGES = ["receiptMessage", "typingMessage", "syncMessage", "storyMessage", "callMessage", "editMessage"] as const;

/**
 * dataMessage fields that make it housekeeping rather than something said:
 * a reaction, a deletion, a disappearing-timer change, polls, pins, payments.
 */
const HOUSEKEEPING = [
  "reaction",
  "remoteDelete",
  "isExpirationUpdate",
  "pollCreate",
  "pollVote",
  "pollTerminate",
  "pinMessage",
  "unpinMessage",
  "adminDelete",
  "payment",
] as const;

/** Classify the params of one `receive` notification: a message to submit, something to ignore, or garbage. */
export function parseSignalReceive(params: unknown, options: SignalParseOptions): SignalParseResult {
  const envelope = envelopeOf(params);
  if (envelope === undefined) return { kind: "invalid" };
  if (!Value.Check(Envelope, envelope)) return { kind: "invalid" };
  const raw = envelope as Record<string, unknown>;

  if (envelope.dataMessage == null) {
    const part = NOT_MESSAGES.find((key) => raw[key] != null);
    return { kind: "ignored", why: part ?? (raw.exception != null ? "undecryptable" : "no_data_message") };
  }
  const data: unknown = envelope.dataMessage;
  if (!Value.Check(DataMessage, data)) return { kind: "invalid" };
  const record = data as Record<string, unknown>;
  const chore = HOUSEKEEPING.find((key) => record[key] != null && record[key] !== false);
  if (chore) return { kind: "ignored", why: chore };
  if (data.groupInfo?.type === "UPDATE") return { kind: "ignored", why: "group_update" };

  const uuid = nonEmpty(envelope.sourceUuid);
  const number = nonEmpty(envelope.sourceNumber) ?? (isPhoneNumber(envelope.source) ? nonEmpty(envelope.source) : undefined);
  const senderId = uuid ?? number ?? nonEmpty(envelope.source);
  if (!senderId) return { kind: "ignored", why: "no_source" };
  if (options.account && number === options.account) return { kind: "ignored", why: "own_message" };

  const timestamp = data.timestamp ?? envelope.timestamp;
  const messageId = `${senderId}:${timestamp}`;
  const message: InboundMessage = {
    channel: "signal",
    chatId: data.groupInfo ? `${GROUP_PREFIX}${data.groupInfo.groupId}` : senderId,
    senderId,
    messageId,
    text: withMentions(data),
    media: mediaOf(data.attachments),
    receivedAt: options.receivedAt,
    direct: !data.groupInfo,
  };
  if (uuid && number) message.senderAliases = [number];
  const name = nonEmpty(envelope.sourceName);
  if (name) message.senderName = name;
  return { kind: "message", message, idempotencyKey: messageId };
}

/** The envelope of on-start receiving (`params.envelope`) or of a manual subscription (`params.result.envelope`). */
function envelopeOf(params: unknown): unknown {
  if (params === null || typeof params !== "object") return undefined;
  const p = params as { envelope?: unknown; result?: { envelope?: unknown } | null };
  if (p.envelope !== undefined) return p.envelope;
  if (p.result && typeof p.result === "object") return p.result.envelope;
  return undefined;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function isPhoneNumber(value: string | null | undefined): boolean {
  return typeof value === "string" && /^\+\d{3,18}$/.test(value);
}

/**
 * The text, with each mention put back as "@name": Signal sends a mention as
 * U+FFFC in the body plus a range saying who it was.
 */
function withMentions(data: DataMessageT): string {
  const text = data.message ?? "";
  const mentions = (data.mentions ?? []).filter((m): m is typeof Mention.static => Value.Check(Mention, m));
  // Right to left, so earlier offsets stay valid as the text changes length.
  const ordered = [...mentions].sort((a, b) => b.start - a.start);
  let out = text;
  for (const m of ordered) {
    if (!Number.isInteger(m.start) || !Number.isInteger(m.length) || m.start < 0 || m.length < 0 || m.start + m.length > out.length) continue;
    const who = nonEmpty(m.name) ?? nonEmpty(m.number) ?? nonEmpty(m.uuid) ?? "someone";
    out = `${out.slice(0, m.start)}@${who}${out.slice(m.start + m.length)}`;
  }
  return out;
}

/** Attachments that signal-cli stored (they have an id) become media; the others cannot be read and are skipped. */
function mediaOf(attachments: unknown[] | undefined): InboundMedia[] {
  const media: InboundMedia[] = [];
  for (const entry of attachments ?? []) {
    if (!Value.Check(Attachment, entry) || !entry.id || !isAttachmentId(entry.id)) continue;
    const item: InboundMedia = { kind: mediaKindForMime(entry.contentType), ref: entry.id };
    if (entry.contentType) item.mime = entry.contentType;
    if (typeof entry.size === "number" && Number.isFinite(entry.size) && entry.size >= 0) item.declaredSize = entry.size;
    const filename = nonEmpty(entry.filename);
    item.filename = filename ?? entry.id;
    media.push(item);
  }
  return media;
}

/** The author and timestamp a `messageId` names (see the module comment), or undefined when it is not one of ours. */
export function parseMessageId(messageId: string): { author: string; timestamp: number } | undefined {
  const colon = messageId.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const timestamp = Number(messageId.slice(colon + 1));
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) return undefined;
  return { author: messageId.slice(0, colon), timestamp };
}
