/**
 * OpenAI's transcription endpoint, and any server that copies it (a local
 * whisper server, a proxy): multipart `POST {base}/audio/transcriptions` with
 * the recording in `file` and the `model`; the answer is `{text}`.
 */
import { TRANSCRIPTION_DEFAULTS } from "../../config/transcription.ts";
import { isRawAac, uploadName } from "./audio.ts";
import { requestJson } from "./http.ts";
import { TranscriptionFailed, UnsupportedAudio } from "./errors.ts";
import type { BackendOptions, Transcriber } from "./types.ts";

export function openaiTranscriber(options: BackendOptions): Transcriber {
  return {
    async transcribe(audio, signal) {
      // OpenAI decodes by container and takes no raw ADTS AAC: say so rather than upload it to be refused.
      // (A self-hosted server behind base_url may decode it: it gets the file.)
      if (isRawAac(audio) && isOpenAi(options.baseUrl)) throw new UnsupportedAudio("openai", "raw AAC audio");
      const { filename, mime } = uploadName(audio);
      const body = await requestJson(
        {
          backend: "openai",
          url: `${options.baseUrl}/audio/transcriptions`,
          init: () => {
            const form = new FormData();
            form.append("file", new File([audio.bytes], filename, { type: mime }));
            form.append("model", options.model ?? TRANSCRIPTION_DEFAULTS.openai.model);
            form.append("response_format", "json");
            const headers: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
            return { method: "POST", headers, body: form };
          },
        },
        options,
        signal,
      );
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== "string") throw new TranscriptionFailed("openai", "the answer has no text field");
      return text;
    },
  };
}

/** Whether `baseUrl` is OpenAI's own API, not a compatible server of someone else's. */
function isOpenAi(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === "api.openai.com";
  } catch {
    return false;
  }
}
