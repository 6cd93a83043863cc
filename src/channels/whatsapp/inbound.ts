/**
 * WhatsApp Cloud API webhook payloads → common inbound messages. Pure and
 * total: called only after the signature checked out, and every input comes
 * back as `invalid` or a batch, never a throw.
 *
 * One POST can carry several entries, changes and messages. Only change
 * field "messages" holds user messages; status callbacks (sent, delivered,
 * read…) and other fields are acknowledged and counted, never turned into turns.
 */
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { InboundMedia, InboundMessage, MediaKind } from "../../message/index.ts";
import { decodeJson } from "../net.ts";

export interface WhatsAppInbound {
  message: InboundMessage;
  /** The wamid: WhatsApp redelivers a message under the same id. */
  idempotencyKey: string;
}

export type WhatsAppParseResult =
  | { kind: "invalid" }
  | {
      kind: "batch";
      messages: WhatsAppInbound[];
      /** Status callbacks acknowledged and dropped. */
      statuses: number;
      /** Everything else acknowledged and dropped: reactions, other change fields, malformed messages. */
      ignored: number;
      /** Messages older than `maxAgeMs` (a replayed capture, or one WhatsApp held for days): acknowledged, no turn. Absent when none. */
      stale?: number;
    };

export interface WhatsAppParseOptions {
  /** Epoch milliseconds stamped as `receivedAt`; defaults to now. */
  receivedAt?: number;
  /**
   * A message whose own `timestamp` is older than this (ms) gets no turn:
   * a correctly signed POST captured and replayed after the idempotency
   * window is not a new message. Default: no limit.
   */
  maxAgeMs?: number;
}

const Payload = Type.Object({
  object: Type.String(),
  entry: Type.Array(Type.Object({ changes: Type.Array(Type.Object({ field: Type.String(), value: Type.Unknown() })) })),
});
const MessagesValue = Type.Object({
  messages: Type.Optional(Type.Array(Type.Unknown())),
  statuses: Type.Optional(Type.Array(Type.Unknown())),
  contacts: Type.Optional(Type.Array(Type.Unknown())),
});
const Contact = Type.Object({ wa_id: Type.String(), profile: Type.Object({ name: Type.String({ minLength: 1 }) }) });
const BaseMessage = Type.Object({
  from: Type.String({ minLength: 1 }),
  id: Type.String({ minLength: 1 }),
  type: Type.String(),
});
const Media = Type.Object({
  id: Type.String({ minLength: 1 }),
  mime_type: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  filename: Type.Optional(Type.String()),
  voice: Type.Optional(Type.Boolean()),
});
const Text = Type.Object({ body: Type.String() });
// Taps on reply buttons and list rows: the user chose a text, so it is text.
const Button = Type.Object({ text: Type.String() });
const Interactive = Type.Object({
  button_reply: Type.Optional(Type.Object({ title: Type.String() })),
  list_reply: Type.Optional(Type.Object({ title: Type.String() })),
});

type BaseMessageT = typeof BaseMessage.static;
type MediaT = typeof Media.static;

/**
 * The media message types and the kind each becomes; audio turns into "voice"
 * when flagged. A Map, not an object literal, so a `type` of "constructor" or
 * "__proto__" finds nothing instead of a prototype member.
 */
const MEDIA_TYPES: ReadonlyMap<string, MediaKind> = new Map<string, MediaKind>([
  ["image", "image"],
  ["document", "document"],
  ["audio", "audio"],
  ["video", "video"],
  // The gateway treats a sticker alone as empty and replies "looks empty".
  ["sticker", "sticker"],
]);

/** Decode and parse a verified raw body; bytes that are not UTF-8 JSON are `invalid`. */
export function parseWhatsAppBody(rawBody: Uint8Array, options: WhatsAppParseOptions = {}): WhatsAppParseResult {
  const json = decodeJson(rawBody);
  return json === undefined ? { kind: "invalid" } : parseWhatsAppPayload(json, options);
}

/** Collect the user messages of one webhook payload, counting status callbacks and everything ignored. */
export function parseWhatsAppPayload(json: unknown, options: WhatsAppParseOptions = {}): WhatsAppParseResult {
  if (!Value.Check(Payload, json)) return { kind: "invalid" };
  const receivedAt = options.receivedAt ?? Date.now();
  const messages: WhatsAppInbound[] = [];
  let statuses = 0;
  let ignored = 0;
  let stale = 0;
  // A payload for another Meta product (page, instagram) signed with the same
  // app secret is authentic but not ours: acknowledged, not a 400 to retry.
  if (json.object !== "whatsapp_business_account") return { kind: "batch", messages, statuses, ignored: 1 };

  for (const entry of json.entry) {
    for (const change of entry.changes) {
      if (change.field !== "messages" || !Value.Check(MessagesValue, change.value)) {
        ignored += 1;
        continue;
      }
      const value = change.value;
      statuses += value.statuses?.length ?? 0;
      const names = contactNames(value.contacts);
      for (const raw of value.messages ?? []) {
        if (options.maxAgeMs !== undefined && ageMs(raw, receivedAt) > options.maxAgeMs) {
          stale += 1;
          continue;
        }
        const message = toInboundMessage(raw, names, receivedAt);
        if (message) messages.push({ message, idempotencyKey: message.messageId });
        else ignored += 1;
      }
    }
  }
  return stale > 0 ? { kind: "batch", messages, statuses, ignored, stale } : { kind: "batch", messages, statuses, ignored };
}

/** How old a message is by its own `timestamp` (Unix seconds, as a string); 0 when it has none we can read. */
function ageMs(raw: unknown, now: number): number {
  const stamp = (raw as { timestamp?: unknown } | null)?.timestamp;
  const seconds = typeof stamp === "string" && /^\d{1,12}$/.test(stamp) ? Number(stamp) : typeof stamp === "number" ? stamp : Number.NaN;
  return Number.isFinite(seconds) ? now - seconds * 1000 : 0;
}

/**
 * One webhook message, or undefined when it gets no turn. Reactions are
 * dropped on purpose: a 👍 on one of our replies is the user closing the
 * exchange, and answering it (even with "looks empty") would be noise.
 * Types we cannot read (location, contacts, unsupported, …) become an empty
 * message, so the user hears "looks empty" rather than silence.
 */
function toInboundMessage(raw: unknown, names: Map<string, string>, receivedAt: number): InboundMessage | undefined {
  if (!Value.Check(BaseMessage, raw)) return undefined;
  if (raw.type === "reaction") return undefined;
  const base: InboundMessage = {
    channel: "whatsapp",
    // WhatsApp has no group chats in the Cloud API: the conversation is the sender.
    chatId: raw.from,
    senderId: raw.from,
    messageId: raw.id,
    text: "",
    media: [],
    receivedAt,
    direct: true,
  };
  const name = names.get(raw.from);
  if (name) base.senderName = name;

  const kind = MEDIA_TYPES.get(raw.type);
  if (kind) {
    const media: unknown = (raw as Record<string, unknown>)[raw.type];
    // A media message without a usable media id is broken, not empty: skip it.
    if (!Value.Check(Media, media)) return undefined;
    return { ...base, text: media.caption ?? "", media: [toMedia(kind, media)] };
  }
  return { ...base, text: textOf(raw) };
}

function toMedia(kind: MediaKind, media: MediaT): InboundMedia {
  const result: InboundMedia = { kind: kind === "audio" && media.voice === true ? "voice" : kind, ref: media.id };
  if (media.mime_type) result.mime = media.mime_type;
  if (media.filename) result.filename = media.filename;
  return result;
}

/** The text of a text, button or interactive message; "" for anything else. */
function textOf(raw: BaseMessageT): string {
  const fields = raw as Record<string, unknown>;
  if (raw.type === "text") return Value.Check(Text, fields.text) ? fields.text.body : "";
  if (raw.type === "button") return Value.Check(Button, fields.button) ? fields.button.text : "";
  if (raw.type === "interactive" && Value.Check(Interactive, fields.interactive)) {
    return fields.interactive.button_reply?.title ?? fields.interactive.list_reply?.title ?? "";
  }
  return "";
}

/** Profile names by wa_id, from the contacts array that rides along with messages. */
function contactNames(contacts: unknown[] | undefined): Map<string, string> {
  const names = new Map<string, string>();
  for (const contact of contacts ?? []) {
    if (Value.Check(Contact, contact)) names.set(contact.wa_id, contact.profile.name);
  }
  return names;
}
