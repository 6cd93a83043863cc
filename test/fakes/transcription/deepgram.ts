/**
 * Deepgram's pre-recorded transcription, `POST /v1/listen?model=…` (its
 * Getting Started guide): the raw bytes of the recording as the body with
 * their audio type as Content-Type, or JSON `{url}`; `Authorization: Token
 * <key>` (Bearer is refused). Without `model` the service uses `base`. The
 * transcript is at `results.channels[0].alternatives[0].transcript`; errors
 * are `{err_code, err_msg, request_id}`.
 */
import { type SttCall, SttFake } from "./base.ts";
import { sniff } from "./speech.ts";

const MODELS = ["nova-3", "nova-2", "nova", "enhanced", "base", "whisper"];

export class DeepgramFake extends SttFake {
  constructor(options: { key?: string } = {}) {
    super(options.key ?? "dg-test-key-0123456789abcdef");
  }

  protected check(call: SttCall, raw: Uint8Array): Response | SttCall["audio"] {
    const { request } = call;
    if (request.method !== "POST" || request.path !== "/v1/listen") return this.fail(call, 404, `Not found: ${request.path}`);
    if (request.headers.authorization !== `Token ${this.key}`) return this.fail(call, 401, "Invalid credentials.");
    const model = request.query.model ?? "base";
    if (!MODELS.includes(model.split("-").slice(0, 2).join("-")) && !MODELS.includes(model)) {
      return this.fail(call, 400, "No such model/language/tier combination found.");
    }
    const type = (request.headers["content-type"] ?? "").toLowerCase();
    if (type.startsWith("application/json")) return this.fail(call, 400, "Content-type was application/json, but we could not process the JSON payload.");
    if (!/^(audio|video)\//.test(type) || raw.byteLength === 0 || !sniff(raw)) {
      return this.fail(call, 400, "Bad Request: failed to process audio: corrupt or unsupported data");
    }
    return { bytes: raw, type };
  }

  protected success(text: string, call: SttCall): unknown {
    const words = text.split(/\s+/).filter(Boolean);
    return {
      metadata: {
        transaction_key: "deprecated",
        request_id: crypto.randomUUID(),
        sha256: new Bun.CryptoHasher("sha256").update(call.audio?.bytes ?? new Uint8Array()).digest("hex"),
        created: new Date().toISOString(),
        duration: words.length * 0.4,
        channels: 1,
        models: [crypto.randomUUID()],
        model_info: {},
      },
      results: {
        channels: [
          {
            alternatives: [
              {
                transcript: text,
                confidence: 0.98,
                words: words.map((word, i) => ({ word: word.toLowerCase(), start: i * 0.4, end: i * 0.4 + 0.35, confidence: 0.98, punctuated_word: word })),
              },
            ],
          },
        ],
      },
    };
  }

  protected errorBody(status: number, message: string): unknown {
    const code = status === 401 ? "INVALID_AUTH" : status === 429 ? "TOO_MANY_REQUESTS" : status >= 500 ? "INTERNAL_SERVER_ERROR" : "Bad Request";
    return { err_code: code, err_msg: message, request_id: crypto.randomUUID() };
  }
}
