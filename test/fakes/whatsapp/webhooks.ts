/**
 * Realistic WhatsApp Cloud API webhook bodies, shaped like the official
 * `messages` example of its webhook reference (kept verbatim in
 * test/channels/whatsapp/fixtures.ts): one entry, one change, field
 * "messages", with metadata, contacts and messages (or statuses). Media
 * messages carry an id the fake serves through GET /{media-id}. Only the
 * JSON: the X-Hub-Signature-256 is the caller's job.
 */

export interface WebhookContext {
  wabaId: string;
  phoneNumberId: string;
  displayPhoneNumber: string;
  /** Register bytes as downloadable media; returns its id and sha256. */
  addMedia(bytes: Uint8Array, mime_type: string, opts?: { size?: number; filename?: string }): { id: string; sha256: string };
  /** Remember an inbound message id (reactions to it are then "known"). */
  recordInbound(message: Record<string, unknown>): void;
}

/** The default sender (matches the official example). */
export const WA_USER = { wa_id: "16505551234", name: "Sheena Nelson" };

export interface From {
  from?: string;
  name?: string;
  /** Reply context: the id of the message being replied to. */
  replyTo?: string;
  timestamp?: number;
}

interface Media {
  bytes?: Uint8Array | string;
  mime_type?: string;
  size?: number;
}

let inboundCounter = 0;

/** A wamid like WhatsApp's: "wamid." + base64 of a small binary record holding the phone number and a 20-hex id. */
export function wamid(phone: string): string {
  const hex = (++inboundCounter).toString(16).toUpperCase().padStart(20, "0").slice(-20);
  const digits = phone.replace(/\D/g, "");
  const raw = Buffer.concat([
    Buffer.from([0x18, digits.length]),
    Buffer.from(digits),
    Buffer.from([0x15, 0x02, 0x00, 0x12, 0x18, 0x14]),
    Buffer.from(hex),
    Buffer.from([0x00]),
  ]);
  return `wamid.${raw.toString("base64")}`;
}

export class WhatsAppWebhookBuilder {
  constructor(private readonly ctx: WebhookContext) {}

  /** Wrap a change value in the object/entry/changes envelope. */
  envelope(value: Record<string, unknown>): Record<string, unknown> {
    return {
      object: "whatsapp_business_account",
      entry: [{ id: this.ctx.wabaId, changes: [{ value: { messaging_product: "whatsapp", metadata: this.metadata(), ...value }, field: "messages" }] }],
    };
  }

  private metadata() {
    return { display_phone_number: this.ctx.displayPhoneNumber, phone_number_id: this.ctx.phoneNumberId };
  }

  private message(type: string, payload: Record<string, unknown>, f: From): Record<string, unknown> {
    const from = f.from ?? WA_USER.wa_id;
    const message: Record<string, unknown> = {
      from,
      id: wamid(from),
      timestamp: String(f.timestamp ?? Math.floor(Date.now() / 1000)),
      type,
      ...payload,
    };
    if (f.replyTo) message.context = { from: this.ctx.displayPhoneNumber, id: f.replyTo };
    this.ctx.recordInbound(message);
    return this.envelope({ contacts: [{ profile: { name: f.name ?? WA_USER.name }, wa_id: from }], messages: [message] });
  }

  private media(m: Media, fallbackMime: string, fallbackBytes: string, filename?: string) {
    const bytes = typeof m.bytes === "string" ? new TextEncoder().encode(m.bytes) : (m.bytes ?? new TextEncoder().encode(fallbackBytes));
    const mime_type = m.mime_type ?? fallbackMime;
    const { id, sha256 } = this.ctx.addMedia(bytes, mime_type, { size: m.size, filename });
    return { mime_type, sha256, id };
  }

  text(body: string, f: From = {}): Record<string, unknown> {
    return this.message("text", { text: { body } }, f);
  }

  image(i: Media & { caption?: string } = {}, f: From = {}): Record<string, unknown> {
    const image: Record<string, unknown> = { ...this.media(i, "image/jpeg", "fake-jpeg") };
    if (i.caption !== undefined) image.caption = i.caption;
    return this.message("image", { image }, f);
  }

  document(d: Media & { filename?: string; caption?: string } = {}, f: From = {}): Record<string, unknown> {
    const filename = d.filename ?? "notes.pdf";
    const document: Record<string, unknown> = { filename, ...this.media(d, "application/pdf", "%PDF-1.4 fake", filename) };
    if (d.caption !== undefined) document.caption = d.caption;
    return this.message("document", { document }, f);
  }

  /** Audio; voice notes are audio with `voice: true` and OGG/Opus (there is no "voice" type). */
  audio(a: Media & { voice?: boolean } = {}, f: From = {}): Record<string, unknown> {
    const voice = a.voice ?? false;
    const audio = { ...this.media(a, voice ? "audio/ogg; codecs=opus" : "audio/mpeg", voice ? "OggS-fake-opus" : "ID3-fake"), voice };
    return this.message("audio", { audio }, f);
  }

  video(v: Media & { caption?: string } = {}, f: From = {}): Record<string, unknown> {
    const video: Record<string, unknown> = { ...this.media(v, "video/mp4", "fake-mp4") };
    if (v.caption !== undefined) video.caption = v.caption;
    return this.message("video", { video }, f);
  }

  sticker(s: Media & { animated?: boolean } = {}, f: From = {}): Record<string, unknown> {
    return this.message("sticker", { sticker: { ...this.media(s, "image/webp", "RIFF-fake-webp"), animated: s.animated ?? false } }, f);
  }

  /** The user reacted to `message_id`; omit `emoji` for a removed reaction (the field is then absent). */
  reaction(message_id: string, emoji?: string, f: From = {}): Record<string, unknown> {
    const reaction: Record<string, unknown> = { message_id };
    if (emoji !== undefined) reaction.emoji = emoji;
    return this.message("reaction", { reaction }, f);
  }

  /** A delivery status for a message the business sent (no `messages`, no `contacts`). */
  status(id: string, status: "sent" | "delivered" | "read" | "failed" | "played", recipient_id = WA_USER.wa_id): Record<string, unknown> {
    const entry: Record<string, unknown> = { id, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id };
    if (status === "failed") {
      entry.errors = [{ code: 131026, title: "Message undeliverable", message: "Message undeliverable", error_data: { details: "Message Undeliverable." } }];
    } else {
      entry.conversation = { id: `conv-${recipient_id}`, origin: { type: "service" } };
      entry.pricing = { billable: false, pricing_model: "PMP", category: "service", type: "free_customer_service" };
    }
    return this.envelope({ statuses: [entry] });
  }
}
