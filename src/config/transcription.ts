/**
 * Where voice notes go to be transcribed, judged from config alone: the
 * backend, its model, its API root and the key it is sent. The daemon builds
 * the engine from this and `fermix doctor` reports it, so they never disagree.
 *
 * The key is `[fermix_core.transcription] api_key` (the config layers already
 * put XAI_API_KEY, DEEPGRAM_API_KEY or OPENAI_API_KEY there for the backend of
 * that name, environment over file). For `openai` only, it then falls back to
 * the key of the provider named `openai` — and only when that provider talks
 * to the same server, so a key is never sent to a host it was not given for.
 * An `openai` backend pointed at a server on this machine or a private
 * network (a local whisper server) may run without a key, as providers may.
 */
import { MB } from "../kernel/sizes.ts";
import type { Config, TranscriptionBackend } from "./schema.ts";
import { isLocalUrl, sameOrigin } from "./urls.ts";

/** Each backend's API root and model when the config names none. */
export const TRANSCRIPTION_DEFAULTS = {
  openai: { baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini-transcribe" },
  // Modelless: xAI's speech-to-text takes no model field.
  xai: { baseUrl: "https://api.x.ai/v1" },
  deepgram: { baseUrl: "https://api.deepgram.com/v1", model: "nova-3" },
} as const satisfies Record<TranscriptionBackend, { baseUrl: string; model?: string }>;

/** Where the key comes from: the transcription table (file, keychain or environment), the `openai` provider, or none. */
export type TranscriptionKeySource = "transcription" | "provider openai" | "none (local server)" | "missing";

export interface TranscriptionSettings {
  backend: TranscriptionBackend;
  /** Undefined for the modelless xai backend. */
  model?: string;
  /** The API root including its version, without a trailing slash. */
  baseUrl: string;
  apiKey?: string;
  keySource: TranscriptionKeySource;
  /** Audio over this many bytes is refused. */
  maxBytes: number;
  /** One request's deadline, ms. */
  timeoutMs: number;
  /** A configured model the backend ignores (xai), for doctor to mention. */
  ignoredModel?: string;
}

/** The transcription settings a config resolves to. */
export function transcriptionSettings(config: Config): TranscriptionSettings {
  const t = config.fermix_core.transcription;
  const backend = t.backend ?? "openai";
  const defaults: { baseUrl: string; model?: string } = TRANSCRIPTION_DEFAULTS[backend];
  const baseUrl = (t.base_url ?? defaults.baseUrl).replace(/\/+$/, "");
  const settings: TranscriptionSettings = {
    backend,
    baseUrl,
    keySource: "missing",
    maxBytes: Math.floor(t.max_file_mb * MB),
    timeoutMs: t.timeout_ms,
  };
  if (backend === "xai") {
    if (t.model) settings.ignoredModel = t.model;
  } else {
    settings.model = t.model ?? defaults.model;
  }

  if (t.api_key) {
    settings.apiKey = t.api_key;
    settings.keySource = "transcription";
    return settings;
  }
  if (backend === "openai") {
    const provider = config.fermix_core.providers.openai;
    if (provider?.api_key && sameOrigin(provider.base_url, baseUrl)) {
      settings.apiKey = provider.api_key;
      settings.keySource = "provider openai";
      return settings;
    }
    if (isLocalUrl(baseUrl)) settings.keySource = "none (local server)";
  }
  return settings;
}
