/**
 * The gateway's media step: images downloaded and passed to the model as
 * image content, audio transcribed (voice.ts), other files described in the
 * text. Caps are checked against the declared size before any download, and
 * every refusal is a reply the sender sees — never a silent drop.
 */
import type { TranscriptionEngine } from "../agent/transcription/index.ts";
import type { Logger } from "../kernel/log.ts";
import { formatMb } from "../kernel/sizes.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { FetchedMedia, GatewayChannel, InboundMedia, InboundMessage } from "../message/index.ts";
import { isAudio, refuseAudioEarly, transcribeAudio, withTranscripts } from "./voice.ts";

export interface MediaSettings {
  channel: GatewayChannel;
  /** The primary model accepts images. */
  vision: boolean;
  model: string;
  /** The channel's inbound cap, bytes. */
  inboundCap: number;
  /** Rejects with MediaTooLarge over `maxBytes` (or the channel's cap). */
  fetch: (media: InboundMedia, signal?: AbortSignal, maxBytes?: number) => Promise<FetchedMedia>;
  /** Speech to text; its `maxBytes` is the cap audio is held to. */
  transcription: TranscriptionEngine;
  telemetry: Telemetry;
  log?: Logger;
  signal?: AbortSignal;
}

export type MediaOutcome = { kind: "ready"; text: string; images: Array<{ mime: string; data: string }> } | { kind: "refused"; reply: string };

const isImage = (m: InboundMedia) => m.kind === "image" || (m.kind === "document" && (m.mime ?? "").startsWith("image/"));

/** Whether a message has nothing to act on: no text and no media but stickers. */
export function isEmptyMessage(message: InboundMessage): boolean {
  return message.text.trim() === "" && message.media.every((m) => m.kind === "sticker");
}

export async function prepareMedia(message: InboundMessage, settings: MediaSettings): Promise<MediaOutcome> {
  const images = message.media.filter(isImage);
  const audio = message.media.filter(isAudio);
  const others = message.media.filter((m) => !isImage(m) && !isAudio(m) && m.kind !== "sticker");
  let text = message.text;

  if (images.length > 0 && !settings.vision) {
    return { kind: "refused", reply: `I can't look at images: the configured model (${settings.model}) does not support images (vision = false).` };
  }
  const audioRefusal = refuseAudioEarly(audio, settings);
  if (audioRefusal) return { kind: "refused", reply: audioRefusal };
  for (const media of [...images, ...others]) {
    const cap = settings.inboundCap;
    if (media.declaredSize !== undefined && media.declaredSize > cap) {
      return {
        kind: "refused",
        reply: `That file is ${formatMb(media.declaredSize)}, over the ${formatMb(cap)} limit for attachments here, so I did not download it.`,
      };
    }
  }

  const prepared: Array<{ mime: string; data: string }> = [];
  for (const media of images) {
    let fetched: FetchedMedia;
    try {
      fetched = await settings.fetch(media, settings.signal);
    } catch (error) {
      return { kind: "refused", reply: `I couldn't download that image (${error instanceof Error ? error.message : "error"}). Please send it again.` };
    }
    if (fetched.bytes.byteLength > settings.inboundCap) {
      return { kind: "refused", reply: `That image is over the ${formatMb(settings.inboundCap)} limit for attachments here.` };
    }
    prepared.push({ mime: fetched.mime || media.mime || "image/jpeg", data: Buffer.from(fetched.bytes).toString("base64") });
  }

  if (audio.length > 0) {
    const transcribed = await transcribeAudio(audio, settings);
    if (transcribed.kind === "refused") return transcribed;
    text = withTranscripts(text, transcribed.transcripts);
  }

  for (const media of others) {
    const size = media.declaredSize !== undefined ? `, ${formatMb(media.declaredSize)}` : "";
    text += `${text ? "\n\n" : ""}[attachment: ${media.filename ?? media.kind} (${media.mime ?? "unknown type"}${size}) — its contents are not available to you]`;
  }
  return { kind: "ready", text, images: prepared };
}
