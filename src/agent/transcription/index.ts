/**
 * The transcription engine: the backend `[fermix_core.transcription]` names,
 * behind one Transcriber, with what every backend shares around it — no key
 * means nothing is sent (NoTranscriptionKey), audio over `max_file_mb` is
 * refused (TooLarge), and a transcript with no words is a failure rather
 * than an empty message. Adding a backend is one file and one line here.
 */
import { PROVIDER_KEY_ENV } from "../../config/load.ts";
import type { TranscriptionBackend } from "../../config/schema.ts";
import type { TranscriptionSettings } from "../../config/transcription.ts";
import { deepgramTranscriber } from "./deepgram.ts";
import { NoTranscriptionKey, TooLarge, TranscriptionFailed } from "./errors.ts";
import { openaiTranscriber } from "./openai.ts";
import type { AudioClip, BackendOptions, Transcriber } from "./types.ts";
import { xaiTranscriber } from "./xai.ts";

export { uploadName } from "./audio.ts";
export { NoTranscriptionKey, TooLarge, TranscriptionFailed } from "./errors.ts";
export type { AudioClip, BackendOptions, FetchLike, Transcriber } from "./types.ts";

const BACKENDS: Record<TranscriptionBackend, (options: BackendOptions) => Transcriber> = {
  openai: openaiTranscriber,
  xai: xaiTranscriber,
  deepgram: deepgramTranscriber,
};

/** The configured backend, as the gateway uses it. */
export interface TranscriptionEngine extends Transcriber {
  readonly backend: TranscriptionBackend;
  /** Audio over this many bytes is refused. */
  readonly maxBytes: number;
  /** Why nothing can be transcribed (no key), or null: checked before any download, so none is wasted. */
  readonly unavailable: NoTranscriptionKey | null;
}

/** The I/O an engine may be given instead of the real network (tests). */
export type TranscriptionDeps = Pick<BackendOptions, "fetch" | "sleep" | "now" | "retryDelayMs" | "maxRetryWaitMs">;

/** Build the engine for resolved settings (see config/transcription.ts). */
export function createTranscription(settings: TranscriptionSettings, deps: TranscriptionDeps = {}): TranscriptionEngine {
  const { backend, maxBytes } = settings;
  const unavailable = settings.keySource === "missing" ? new NoTranscriptionKey(backend, PROVIDER_KEY_ENV[backend] ?? "") : null;
  const options: BackendOptions = { ...deps, baseUrl: settings.baseUrl, timeoutMs: settings.timeoutMs };
  if (settings.apiKey) options.apiKey = settings.apiKey;
  if (settings.model) options.model = settings.model;
  const transcriber = BACKENDS[backend](options);
  return {
    backend,
    maxBytes,
    unavailable,
    async transcribe(audio: AudioClip, signal?: AbortSignal): Promise<string> {
      if (unavailable) throw unavailable;
      if (audio.bytes.byteLength > maxBytes) throw new TooLarge(audio.bytes.byteLength, maxBytes);
      const text = (await transcriber.transcribe(audio, signal)).trim();
      if (text === "") throw new TranscriptionFailed(backend, "no speech was recognised in the recording");
      return text;
    },
  };
}
