/**
 * xAI's speech-to-text, `POST /v1/stt` (xAI's API reference): multipart with the
 * recording in `file`; modelless — the form has no `model` field, and this
 * fake refuses one, so a client that sends it is caught. Optional fields:
 * `language`, `format`, `diarize`, repeated `keyterm`. Bearer auth. OGG/Opus,
 * MP3, WAV, M4A (MP4), FLAC and AAC are accepted as they are. Answers
 * `{text, language, duration, words}`; an error body carries `error`.
 */
import { filePart, type SttCall, SttFake } from "./base.ts";
import { sniff } from "./speech.ts";

const KNOWN_FIELDS = new Set(["file", "language", "format", "diarize", "keyterm"]);

export class XaiSttFake extends SttFake {
  constructor(options: { key?: string } = {}) {
    super(options.key ?? "xai-stt-test-key-0123456789");
  }

  protected check(call: SttCall): Response | SttCall["audio"] {
    const { request } = call;
    if (request.method !== "POST" || request.path !== "/v1/stt") return this.fail(call, 404, `No route for ${request.method} ${request.path}`);
    const auth = request.headers.authorization;
    if (auth !== `Bearer ${this.key}`) return this.fail(call, 401, "Incorrect API key provided. Obtain an API key from https://console.x.ai.");
    if (request.encoding !== "multipart") return this.fail(call, 400, "Expected a multipart/form-data body with the audio in `file`");
    const unknown = Object.keys(request.body).find((field) => !KNOWN_FIELDS.has(field));
    if (unknown) return this.fail(call, 400, `Unknown field \`${unknown}\`: speech-to-text is modelless and takes no ${unknown}`);
    const file = filePart(request);
    if (!file) return this.fail(call, 400, "Missing the audio: send it in the `file` field");
    const container = sniff(file.bytes);
    if (!container || container === "webm") return this.fail(call, 400, "Unsupported or corrupted audio");
    return { bytes: file.bytes, filename: file.filename, type: file.type };
  }

  protected success(text: string, call: SttCall): unknown {
    const words = text.split(/\s+/).filter(Boolean);
    return {
      text,
      language: "en",
      duration: Math.round(((call.audio?.bytes.byteLength ?? 0) / 100) * 10) / 10,
      words: words.map((word, i) => ({ text: word, start: i * 0.4, end: i * 0.4 + 0.35 })),
    };
  }

  protected errorBody(status: number, message: string): unknown {
    return { code: status === 401 ? "Unauthenticated" : status === 429 ? "Too many requests" : "Client specified an invalid argument", error: message };
  }
}
