/**
 * OpenAI's `POST /v1/audio/transcriptions`, as documented: multipart with the
 * recording in `file` and a required `model` (an AudioModel); optional
 * `language`, `prompt`, `response_format`, `temperature`. Answers `{text,
 * usage}`; errors are `{error:{message,type,param,code}}`. The service picks
 * the decoder by the file name's extension and refuses a file whose bytes
 * are not what the name says, or an MP4/M4A whose boxes do not add up ("Audio
 * file might be corrupted or unsupported"); raw AAC (ADTS) has no extension
 * it takes; files over 25 MB are refused with 413.
 */
import { filePart, type SttCall, SttFake } from "./base.ts";
import { boxesTile, type Container, sniff } from "./speech.ts";

/** OpenAI's AudioModel values (openai 7.59.0 `resources/audio/audio.d.ts`). */
export const OPENAI_AUDIO_MODELS = ["gpt-4o-mini-transcribe", "gpt-4o-transcribe", "whisper-1", "gpt-transcribe"];
const SIZE_LIMIT = 25 * 1024 * 1024;
/** Extensions the endpoint accepts, and the container each must hold. */
const EXTENSIONS: Record<string, Container[]> = {
  flac: ["flac"],
  m4a: ["m4a", "mp4"],
  mp3: ["mp3"],
  mp4: ["mp4", "m4a"],
  mpeg: ["mp3"],
  mpga: ["mp3"],
  oga: ["ogg"],
  ogg: ["ogg"],
  wav: ["wav"],
  webm: ["webm"],
};

export interface OpenAiSttOptions {
  /** The accepted key (default a test key); null: a local server that takes none. */
  key?: string | null;
  /** Models the server knows (default OpenAI's AudioModel list; a local server may know others). */
  models?: string[];
}

export class OpenAiSttFake extends SttFake {
  private readonly models: string[];

  constructor(options: OpenAiSttOptions = {}) {
    super(options.key === undefined ? "sk-stt-openai-test-0123456789" : options.key);
    this.models = options.models ?? OPENAI_AUDIO_MODELS;
  }

  protected check(call: SttCall): Response | SttCall["audio"] {
    const { request } = call;
    if (request.method !== "POST" || request.path !== "/v1/audio/transcriptions") {
      return this.fail(call, 404, `Invalid URL (${request.method} ${request.path})`);
    }
    if (this.key !== null) {
      const auth = request.headers.authorization;
      if (!auth)
        return this.fail(
          call,
          401,
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        );
      if (auth !== `Bearer ${this.key}`) {
        const given = auth.replace(/^Bearer\s+/i, "");
        return this.fail(
          call,
          401,
          `Incorrect API key provided: ${given.slice(0, 3)}***${given.slice(-2)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        );
      }
    }
    if (request.encoding !== "multipart") return this.fail(call, 400, "Invalid Content-Type header, expected multipart/form-data");
    const file = filePart(request);
    if (!file) return this.fail(call, 400, "Missing required parameter: 'file'.");
    const model = request.body.model;
    if (typeof model !== "string" || model === "") return this.fail(call, 400, "you must provide a model parameter");
    if (!this.models.includes(model)) return this.fail(call, 404, `The model \`${model}\` does not exist or you do not have access to it.`);
    if (file.size > SIZE_LIMIT) return this.fail(call, 413, `Maximum content size limit (${SIZE_LIMIT}) exceeded (${file.size} bytes read)`);
    const ext = file.filename.split(".").pop()?.toLowerCase() ?? "";
    const allowed = EXTENSIONS[ext];
    if (!file.filename.includes(".") || !allowed) {
      return this.fail(call, 400, `Invalid file format. Supported formats: ${JSON.stringify(Object.keys(EXTENSIONS))}`);
    }
    const container = sniff(file.bytes);
    const corrupt = !container || !allowed.includes(container) || ((container === "mp4" || container === "m4a") && !boxesTile(file.bytes));
    if (corrupt) return this.fail(call, 400, "Audio file might be corrupted or unsupported");
    return { bytes: file.bytes, filename: file.filename, type: file.type };
  }

  protected success(text: string, call: SttCall): unknown {
    const model = String(call.request.body.model);
    if (model === "whisper-1") return { text };
    const audioTokens = Math.max(1, Math.round((call.audio?.bytes.byteLength ?? 0) / 16));
    const outputTokens = Math.max(1, text.split(/\s+/).filter(Boolean).length);
    return {
      text,
      usage: {
        type: "tokens",
        input_tokens: audioTokens,
        input_token_details: { text_tokens: 0, audio_tokens: audioTokens },
        output_tokens: outputTokens,
        total_tokens: audioTokens + outputTokens,
      },
    };
  }

  protected errorBody(status: number, message: string): unknown {
    const type = status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
    const code = status === 401 ? "invalid_api_key" : status === 404 ? "model_not_found" : status === 429 ? "rate_limit_exceeded" : null;
    return { error: { message, type, param: null, code } };
  }
}
