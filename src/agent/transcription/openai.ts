/**
 * OpenAI's transcription endpoint, and any server that copies it (a local
 * whisper server, a proxy): multipart `POST {base}/audio/transcriptions` with
 * the recording in `file` and the `model`; the answer is `{text}`. The
 * endpoint decodes by container and takes no raw ADTS AAC (Signal's voice
 * notes), so such a recording is first remuxed — not re-encoded — into M4A.
 */
import { TRANSCRIPTION_DEFAULTS } from "../../config/transcription.ts";
import { isRawAac, uploadName } from "./audio.ts";
import { TranscriptionFailed } from "./errors.ts";
import { requestJson } from "./http.ts";
import type { AudioClip, BackendOptions, Transcriber } from "./types.ts";

export function openaiTranscriber(options: BackendOptions): Transcriber {
  return {
    async transcribe(clip, signal) {
      const audio = isRawAac(clip) ? await asM4a(clip) : clip;
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

/**
 * Raw AAC as an M4A file of the same frames, uploaded as `<stem>.m4a`, `audio/mp4`. A stream that cannot
 * be read fails as this backend's failure: the reason goes to the log, the sender is asked to try again.
 */
async function asM4a(clip: AudioClip): Promise<AudioClip> {
  // Loaded only here: no other path needs the remuxer, so start-up and an idle daemon do not carry it.
  const { adtsToM4a, MalformedAdts } = await import("./m4a.ts");
  try {
    return { ...clip, bytes: adtsToM4a(clip.bytes), mime: "audio/mp4" };
  } catch (error) {
    if (error instanceof MalformedAdts) throw new TranscriptionFailed("openai", `raw AAC could not be remuxed to M4A: ${error.message}`);
    throw error;
  }
}
