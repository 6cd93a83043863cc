/**
 * The gateway's media step: images downloaded and passed to the model as
 * image content, audio handed to transcription, other files described in the
 * text. Caps are checked against the declared size before any download, and
 * every refusal is a reply the sender sees — never a silent drop.
 */
import { formatMb } from "../kernel/sizes.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { FetchedMedia, GatewayChannel, InboundMedia, InboundMessage } from "../message/index.ts";

export interface MediaSettings {
  channel: GatewayChannel;
  /** The primary model accepts images. */
  vision: boolean;
  model: string;
  /** The channel's inbound cap, bytes. */
  inboundCap: number;
  /** Transcription's cap, bytes. */
  audioCap: number;
  fetch: (media: InboundMedia, signal?: AbortSignal) => Promise<FetchedMedia>;
  /** Speech to text; absent until a transcription backend exists. */
  transcribe?: (audio: FetchedMedia) => Promise<string>;
  telemetry: Telemetry;
  signal?: AbortSignal;
}

export type MediaOutcome =
  | { kind: "ready"; text: string; images: Array<{ mime: string; data: string }> }
  | { kind: "refused"; reply: string };


const isImage = (m: InboundMedia) => m.kind === "image" || (m.kind === "document" && (m.mime ?? "").startsWith("image/"));
const isAudio = (m: InboundMedia) =>
  m.kind === "audio" || m.kind === "voice" || m.kind === "video_note" || (m.kind === "document" && (m.mime ?? "").startsWith("audio/"));

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
  for (const media of [...images, ...others, ...audio]) {
    const cap = isAudio(media) ? Math.min(settings.audioCap, settings.inboundCap) : settings.inboundCap;
    if (media.declaredSize !== undefined && media.declaredSize > cap) {
      return { kind: "refused", reply: `That file is ${formatMb(media.declaredSize)}, over the ${formatMb(cap)} limit for attachments here, so I did not download it.` };
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

  for (const media of audio) {
    const started = performance.now();
    if (!settings.transcribe) {
      settings.telemetry.emit("transcription.message", {
        measurements: { duration_ms: 0, bytes: media.declaredSize ?? 0 },
        metadata: { channel: settings.channel, backend: "none", status: "refused" },
      });
      return { kind: "refused", reply: "Voice notes and audio are not supported yet in this version of Fermix — please send your message as text." };
    }
    try {
      const fetched = await settings.fetch(media, settings.signal);
      const transcript = await settings.transcribe(fetched);
      settings.telemetry.emit("transcription.message", {
        measurements: { duration_ms: performance.now() - started, bytes: fetched.bytes.byteLength },
        metadata: { channel: settings.channel, backend: "configured", status: "ok" },
      });
      text = `${text.trim()}${text.trim() ? "\n\n" : ""}[voice note transcript]\n${transcript.trim()}`;
    } catch (error) {
      settings.telemetry.emit("transcription.message", {
        measurements: { duration_ms: performance.now() - started, bytes: media.declaredSize ?? 0 },
        metadata: { channel: settings.channel, backend: "configured", status: "error" },
      });
      return { kind: "refused", reply: `I couldn't transcribe that voice note (${error instanceof Error ? error.message : "error"}). Please try again.` };
    }
  }

  for (const media of others) {
    const size = media.declaredSize !== undefined ? `, ${formatMb(media.declaredSize)}` : "";
    text += `${text ? "\n\n" : ""}[attachment: ${media.filename ?? media.kind} (${media.mime ?? "unknown type"}${size}) — its contents are not available to you]`;
  }
  return { kind: "ready", text, images: prepared };
}
