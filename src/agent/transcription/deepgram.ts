/**
 * Deepgram's pre-recorded transcription: the raw bytes of the recording as
 * the body of `POST {base}/listen?model=…&smart_format=true`, its container's
 * MIME type as Content-Type, and `Authorization: Token <key>` (not Bearer).
 * The transcript is at `results.channels[0].alternatives[0].transcript`.
 */
import { TRANSCRIPTION_DEFAULTS } from "../../config/transcription.ts";
import { uploadName } from "./audio.ts";
import { TranscriptionFailed } from "./errors.ts";
import { requestJson } from "./http.ts";
import type { BackendOptions, Transcriber } from "./types.ts";

export function deepgramTranscriber(options: BackendOptions): Transcriber {
  return {
    async transcribe(audio, signal) {
      const { mime } = uploadName(audio);
      const query = new URLSearchParams({ model: options.model ?? TRANSCRIPTION_DEFAULTS.deepgram.model, smart_format: "true" });
      const body = await requestJson(
        {
          backend: "deepgram",
          url: `${options.baseUrl}/listen?${query}`,
          init: () => ({
            method: "POST",
            headers: { authorization: `Token ${options.apiKey ?? ""}`, "content-type": mime },
            body: audio.bytes,
          }),
        },
        options,
        signal,
      );
      const transcript = transcriptOf(body);
      if (transcript === undefined) throw new TranscriptionFailed("deepgram", "the answer has no results.channels[0].alternatives[0].transcript");
      return transcript;
    },
  };
}

function transcriptOf(body: unknown): string | undefined {
  const channels = (body as { results?: { channels?: unknown } } | null)?.results?.channels;
  if (!Array.isArray(channels)) return undefined;
  const alternatives = (channels[0] as { alternatives?: unknown } | undefined)?.alternatives;
  if (!Array.isArray(alternatives)) return undefined;
  const transcript = (alternatives[0] as { transcript?: unknown } | undefined)?.transcript;
  return typeof transcript === "string" ? transcript : undefined;
}
