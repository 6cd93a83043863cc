/**
 * Which backend, model, API root and key voice notes go to, as config and
 * environment resolve them — and the rule that a key never travels to a host
 * it was not given for.
 */
import { describe, expect, test } from "bun:test";
import { transcriptionSettings } from "../../src/config/transcription.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const settings = (toml: string, env: Record<string, string> = {}) => transcriptionSettings(loadedFrom(toml, env).config);

describe("defaults per backend", () => {
  test("openai: gpt-4o-mini-transcribe at api.openai.com, 20 MB, 60 s", () => {
    expect(settings("")).toEqual({
      backend: "openai",
      model: "gpt-4o-mini-transcribe",
      baseUrl: "https://api.openai.com/v1",
      keySource: "missing",
      maxBytes: 20 * 1024 * 1024,
      timeoutMs: 60_000,
    });
  });

  test("xai: modelless at api.x.ai; a configured model is noted as ignored", () => {
    const s = settings(`[fermix_core.transcription]\nbackend = "xai"\nmodel = "grok-stt"\n`);
    expect(s.baseUrl).toBe("https://api.x.ai/v1");
    expect(s.model).toBeUndefined();
    expect(s.ignoredModel).toBe("grok-stt");
  });

  test("deepgram: nova-3 at api.deepgram.com", () => {
    const s = settings(`[fermix_core.transcription]\nbackend = "deepgram"\n`);
    expect(s).toMatchObject({ model: "nova-3", baseUrl: "https://api.deepgram.com/v1" });
  });

  test("base_url, model, max_file_mb and timeout_ms override; a trailing slash is dropped", () => {
    const s = settings(`[fermix_core.transcription]\nbase_url = "http://stt.lan:9000/v1/"\nmodel = "whisper-1"\nmax_file_mb = 5\ntimeout_ms = 1500\n`);
    expect(s).toMatchObject({ baseUrl: "http://stt.lan:9000/v1", model: "whisper-1", maxBytes: 5 * 1024 * 1024, timeoutMs: 1500 });
  });
});

describe("the key", () => {
  test("the transcription table's own key comes first", () => {
    const s = settings(
      `[fermix_core.providers.openai]\nmodel = "gpt-5.1"\napi_key = "sk-provider-000000"\n[fermix_core.transcription]\napi_key = "sk-stt-000000"\n`,
    );
    expect(s).toMatchObject({ apiKey: "sk-stt-000000", keySource: "transcription" });
  });

  test("openai falls back to the provider named openai when it talks to the same server", () => {
    const s = settings(`[fermix_core.providers.openai]\nmodel = "gpt-5.1"\napi_key = "sk-provider-000000"\n`);
    expect(s).toMatchObject({ apiKey: "sk-provider-000000", keySource: "provider openai" });
  });

  test("never to the provider named openai when transcription goes to another server", () => {
    const s = settings(
      `[fermix_core.providers.openai]\nmodel = "gpt-5.1"\napi_key = "sk-provider-000000"\n[fermix_core.transcription]\nbase_url = "https://stt.example.com/v1"\n`,
    );
    expect(s.apiKey).toBeUndefined();
    expect(s.keySource).toBe("missing");
  });

  test("never to another provider, primary or not", () => {
    const s = settings(`[fermix_core.providers.router]\nbase_url = "https://api.openai.com/v1"\nmodel = "m"\napi_key = "sk-router-000000"\nprimary = true\n`);
    expect(s.apiKey).toBeUndefined();
  });

  test("xai and deepgram never borrow the openai provider's key", () => {
    const provider = `[fermix_core.providers.openai]\nmodel = "gpt-5.1"\napi_key = "sk-provider-000000"\n`;
    expect(settings(`${provider}[fermix_core.transcription]\nbackend = "xai"\n`).apiKey).toBeUndefined();
    expect(settings(`${provider}[fermix_core.transcription]\nbackend = "deepgram"\n`).apiKey).toBeUndefined();
  });

  test("the environment variable of the backend's name, over the config file", () => {
    expect(settings("", { OPENAI_API_KEY: "sk-env-000000" })).toMatchObject({ apiKey: "sk-env-000000", keySource: "transcription" });
    expect(settings(`[fermix_core.transcription]\nbackend = "xai"\napi_key = "xai-file-000000"\n`, { XAI_API_KEY: "xai-env-000000" }).apiKey).toBe(
      "xai-env-000000",
    );
    expect(settings(`[fermix_core.transcription]\nbackend = "deepgram"\n`, { DEEPGRAM_API_KEY: "dg-env-000000", OPENAI_API_KEY: "sk-env-000000" }).apiKey).toBe(
      "dg-env-000000",
    );
  });

  test("an openai-compatible server on this machine may run without a key; xai and deepgram may not", () => {
    expect(settings(`[fermix_core.transcription]\nbase_url = "http://127.0.0.1:8000/v1"\n`).keySource).toBe("none (local server)");
    expect(settings(`[fermix_core.transcription]\nbackend = "deepgram"\nbase_url = "http://127.0.0.1:8000/v1"\n`).keySource).toBe("missing");
  });
});
