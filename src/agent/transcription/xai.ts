/**
 * xAI's speech-to-text: multipart `POST {base}/stt` with the recording in
 * `file`, and nothing else — it is modelless, and no model field is sent.
 * A key is required. The answer is `{text, language, duration, words?}`.
 */
import { uploadName } from "./audio.ts";
import { TranscriptionFailed } from "./errors.ts";
import { requestJson } from "./http.ts";
import type { BackendOptions, Transcriber } from "./types.ts";

export function xaiTranscriber(options: BackendOptions): Transcriber {
  return {
    async transcribe(audio, signal) {
      const { filename, mime } = uploadName(audio);
      const body = await requestJson(
        {
          backend: "xai",
          url: `${options.baseUrl}/stt`,
          init: () => {
            const form = new FormData();
            form.append("file", new File([audio.bytes], filename, { type: mime }));
            return { method: "POST", headers: { authorization: `Bearer ${options.apiKey ?? ""}` }, body: form };
          },
        },
        options,
        signal,
      );
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== "string") throw new TranscriptionFailed("xai", "the answer has no text field");
      return text;
    },
  };
}
