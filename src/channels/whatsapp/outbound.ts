/**
 * The WhatsApp reply port: text with link previews off, media uploaded then
 * sent by id, and reactions with any single emoji. The Cloud API cannot edit
 * or delete a message, show a typing indicator through this port, or send
 * silently, so those are not claimed (no draft streaming, no "💭" stream).
 */
import { statSync } from "node:fs";
import { isSingleEmoji } from "../../kernel/emoji.ts";
import { formatMb, MB } from "../../kernel/sizes.ts";
import {
  FormattingRejected,
  type OutboundMedia,
  type OutboundMediaKind,
  type OutboundText,
  type ReplyCapabilities,
  type ReplyPort,
  type ReplyTarget,
  type SentMessage,
} from "../../message/index.ts";
import { type WhatsAppApi, WhatsAppApiError } from "./api.ts";
import { whatsAppProfile } from "./profile.ts";

/** The outbound caps per media kind: the Cloud API's limits for uploaded media. */
export const WHATSAPP_MEDIA_CAPS: Readonly<Record<OutboundMediaKind, number>> = {
  image: 5 * MB,
  audio: 16 * MB,
  voice: 16 * MB,
  video: 16 * MB,
  document: 100 * MB,
};

/** A caption longer than this is refused by the API; it then goes as its own message. */
const CAPTION_LIMIT = 1024;
/** Kinds whose message object takes a caption; audio does not. */
const CAPTIONED = new Set<OutboundMediaKind>(["image", "video", "document"]);

export const WHATSAPP_CAPABILITIES: ReplyCapabilities = whatsAppProfile.capabilities;

/**
 * Whether a Graph error is WhatsApp refusing the text body itself. Meta
 * documents no formatting error for plain text (its styles are literal
 * characters); what it does document is 100 "Invalid parameter" and 131009
 * "Parameter value is not valid" with `details` naming the parameter — for a
 * text message that is the body (e.g. over 4,096 characters as WhatsApp
 * counts them). Resending that once as plain text (shorter: no markers) is
 * the closest equivalent; the exact details wording is not documented.
 */
export function isTextBodyRejection(error: unknown): boolean {
  if (!(error instanceof WhatsAppApiError) || error.status !== 400) return false;
  if (error.code !== 100 && error.code !== 131009) return false;
  return /text\s*(\[\s*['"]?body|\.body)/i.test(error.details ?? error.message);
}

/** Told when a file is not sent for being over its cap (the adapter counts it as a failed media reply). */
export type OverCapHook = (media: OutboundMedia, size: number) => void;

/** A reply port for one WhatsApp conversation: the sender's wa_id. */
export function whatsAppReplyPort(api: WhatsAppApi, target: ReplyTarget, onOverCap: OverCapHook = () => {}): ReplyPort {
  const to = target.chatId;

  const sendText = async (message: OutboundText): Promise<SentMessage> => {
    try {
      return { id: await api.sendMessage(to, "text", { preview_url: false, body: message.text }) };
    } catch (error) {
      if (!message.plain && isTextBodyRejection(error)) throw new FormattingRejected((error as Error).message);
      throw error;
    }
  };
  const plainText = (text: string): OutboundText => ({ text, notify: false, linkPreview: false, plain: true });

  return {
    capabilities: WHATSAPP_CAPABILITIES,
    sendText,
    async editText() {
      throw new Error("WhatsApp messages cannot be edited");
    },
    async deleteMessage() {
      throw new Error("WhatsApp messages cannot be deleted");
    },
    async react(messageId, emoji) {
      const chosen = emoji.trim();
      if (!isSingleEmoji(chosen)) throw new Error(`a WhatsApp reaction is one emoji; "${emoji}" is not`);
      await api.sendMessage(to, "reaction", { message_id: messageId, emoji: chosen });
    },
    async sendMedia(media: OutboundMedia) {
      const cap = WHATSAPP_MEDIA_CAPS[media.kind];
      const size = statSync(media.path).size;
      if (size > cap) {
        onOverCap(media, size);
        // Never a silent drop: the user hears which file did not come and why.
        return sendText(
          plainText(`📎 ${media.filename} is ${formatMb(size)}, over WhatsApp's ${formatMb(cap)} limit for ${media.kind} files, so it was not sent.`),
        );
      }
      const bytes = new Uint8Array(await Bun.file(media.path).arrayBuffer());
      const mime = media.mime.split(";")[0]!.trim();
      const id = await api.uploadMedia(bytes, mime, media.filename);
      const caption = media.caption?.trim() ?? "";
      const inline = caption !== "" && CAPTIONED.has(media.kind) && caption.length <= CAPTION_LIMIT;
      const payload: Record<string, unknown> = { id };
      if (inline) payload.caption = caption;
      if (media.kind === "document") payload.filename = media.filename;
      // WhatsApp has no "voice" message type: a voice note is audio (OGG/Opus).
      const sent = await api.sendMessage(to, media.kind === "voice" ? "audio" : media.kind, payload);
      if (caption !== "" && !inline) await sendText(plainText(caption));
      return { id: sent };
    },
    async typing() {
      // Not claimed in capabilities; nothing to show.
    },
  };
}
