/**
 * The gateway's audio step: voice notes, audio files and round video notes
 * become text through the transcription engine, in the order they came.
 * What can be refused without downloading is refused first — no backend key,
 * a declared size over `max_file_mb` — so nothing is fetched in vain. Every
 * failure is a reply the sender sees and schedules no turn: no key points at
 * `fermix setup`, too large names the cap, anything else asks to try again
 * (the backend's reason goes to the log, never the key). Every attempt emits
 * `transcription.message` with its duration, channel, backend and outcome.
 */
import { NoTranscriptionKey, TooLarge, type TranscriptionEngine, TranscriptionFailed } from "../agent/transcription/index.ts";
import { describeError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";
import { formatMb } from "../kernel/sizes.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { type FetchedMedia, type GatewayChannel, type InboundMedia, MediaTooLarge } from "../message/index.ts";

/** The line the agent sees above a transcript that follows a caption (or another transcript). */
export const TRANSCRIPT_DELIMITER = "[voice note transcript]";

export interface VoiceSettings {
  channel: GatewayChannel;
  transcription: TranscriptionEngine;
  /** The channel's own inbound cap, bytes. */
  inboundCap: number;
  fetch: (media: InboundMedia, signal?: AbortSignal, maxBytes?: number) => Promise<FetchedMedia>;
  telemetry: Telemetry;
  log?: Logger;
  signal?: AbortSignal;
}

export type VoiceOutcome = { kind: "ready"; transcripts: string[] } | { kind: "refused"; reply: string };

type Reason = "no_key" | "too_large" | "download_failed" | "failed";

const noKeyReply = (backend: string) =>
  `I can't listen to voice notes yet: no speech-to-text key is set up for the ${backend} transcription backend. ` +
  "The owner of this assistant can add one with `fermix setup` — meanwhile, please send your message as text.";
const tooLargeReply = (size: number | undefined, cap: number, downloaded: boolean) =>
  `That voice note is ${size === undefined ? "too large" : formatMb(size)} — over the ${formatMb(cap)} limit for transcription, ` +
  `so I ${downloaded ? "did not transcribe" : "did not download"} it. Please send a shorter one, or text.`;
const DOWNLOAD_FAILED_REPLY = "I couldn't download that voice note. Please try again in a moment.";
const FAILED_REPLY = "I couldn't transcribe that voice note just now. Please try again in a moment.";

/** The audio attachments of a message: voice notes, audio, round video notes, audio-MIME documents. */
export const isAudio = (m: InboundMedia): boolean =>
  m.kind === "audio" || m.kind === "voice" || m.kind === "video_note" || (m.kind === "document" && (m.mime ?? "").startsWith("audio/"));

/** The cap a recording is held to: transcription's, or the channel's when that is lower. */
function capOf(settings: VoiceSettings): number {
  return Math.min(settings.transcription.maxBytes, settings.inboundCap);
}

/** A reply refusing the audio before anything is downloaded, or null when every recording may be fetched. */
export function refuseAudioEarly(audio: readonly InboundMedia[], settings: VoiceSettings): string | null {
  if (audio.length === 0) return null;
  const { unavailable } = settings.transcription;
  if (unavailable) {
    for (const media of audio) emit(settings, 0, media.declaredSize ?? 0, "refused", "no_key");
    return noKeyReply(unavailable.backend);
  }
  const cap = capOf(settings);
  const over = audio.find((m) => m.declaredSize !== undefined && m.declaredSize > cap);
  if (over) {
    emit(settings, 0, over.declaredSize ?? 0, "refused", "too_large");
    return tooLargeReply(over.declaredSize, cap, false);
  }
  return null;
}

/** Download and transcribe each recording in order; the first failure ends it with its reply. Rethrows when aborted. */
export async function transcribeAudio(audio: readonly InboundMedia[], settings: VoiceSettings): Promise<VoiceOutcome> {
  const engine = settings.transcription;
  const cap = capOf(settings);
  const transcripts: string[] = [];
  for (const media of audio) {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    let fetched: FetchedMedia;
    try {
      fetched = await settings.fetch(media, settings.signal, cap);
    } catch (error) {
      if (settings.signal?.aborted) throw error;
      if (error instanceof MediaTooLarge) {
        emit(settings, elapsed(), error.size, "refused", "too_large");
        return { kind: "refused", reply: tooLargeReply(error.size, cap, false) };
      }
      settings.log?.warn("voice note download failed", { backend: engine.backend, error: describeError(error) });
      emit(settings, elapsed(), media.declaredSize ?? 0, "error", "download_failed");
      return { kind: "refused", reply: DOWNLOAD_FAILED_REPLY };
    }
    const bytes = fetched.bytes.byteLength;
    try {
      transcripts.push(await engine.transcribe(fetched, settings.signal));
      emit(settings, elapsed(), bytes, "ok");
    } catch (error) {
      if (settings.signal?.aborted) throw error;
      const { status, reason, reply } = classify(error);
      if (error instanceof TranscriptionFailed) {
        settings.log?.warn("transcription failed", { backend: error.backend, status: error.status, reason: error.reason });
      } else if (!(error instanceof TooLarge) && !(error instanceof NoTranscriptionKey)) {
        settings.log?.error("transcription failed unexpectedly", { backend: engine.backend, error: describeError(error) });
      }
      emit(settings, elapsed(), bytes, status, reason);
      return { kind: "refused", reply };
    }
  }
  return { kind: "ready", transcripts };
}

/** The message text: the caption first, then each transcript, under the delimiter when something precedes it. */
export function withTranscripts(caption: string, transcripts: readonly string[]): string {
  let text = caption.trim();
  for (const transcript of transcripts) {
    text = text === "" ? transcript : `${text}\n\n${TRANSCRIPT_DELIMITER}\n${transcript}`;
  }
  return text;
}

/** The telemetry outcome and the sender's reply for a failed transcription. */
function classify(error: unknown): { status: "error" | "refused"; reason: Reason; reply: string } {
  if (error instanceof TooLarge) return { status: "refused", reason: "too_large", reply: tooLargeReply(error.size, error.cap, true) };
  if (error instanceof NoTranscriptionKey) return { status: "refused", reason: "no_key", reply: noKeyReply(error.backend) };
  return { status: "error", reason: "failed", reply: FAILED_REPLY };
}

function emit(settings: VoiceSettings, durationMs: number, bytes: number, status: "ok" | "error" | "refused", reason?: Reason): void {
  settings.telemetry.emit("transcription.message", {
    measurements: { duration_ms: durationMs, bytes },
    metadata: {
      channel: settings.channel,
      backend: settings.transcription.backend,
      status,
      ...(reason ? { reason } : {}),
    },
  });
}
