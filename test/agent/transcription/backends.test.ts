/**
 * Each speech-to-text backend against the loopback fake of its service: what
 * goes on the wire (path, fields, auth scheme, content type), what comes back,
 * and how failures end — one retry on 429/5xx after Retry-After, none on a
 * 4xx, a deadline per attempt, the caller's abort passed through, and never
 * the key in an error.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { deepgramTranscriber } from "../../../src/agent/transcription/deepgram.ts";
import { type BackendOptions, type Transcriber, TranscriptionFailed } from "../../../src/agent/transcription/index.ts";
import { adtsToM4a } from "../../../src/agent/transcription/m4a.ts";
import { openaiTranscriber } from "../../../src/agent/transcription/openai.ts";
import { xaiTranscriber } from "../../../src/agent/transcription/xai.ts";
import {
  type DeepgramFake,
  type OpenAiSttFake,
  speech,
  startDeepgramFake,
  startOpenAiSttFake,
  startXaiSttFake,
  stt,
  type XaiSttFake,
} from "../../fakes/transcription.ts";
import { until } from "../../helpers/wait.ts";

type AnyFake = OpenAiSttFake | XaiSttFake | DeepgramFake;
const fakes: AnyFake[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.stop();
});

/** The fake, a backend pointed at it, and the waits it was asked for (a sleep that returns at once). */
function setup<F extends AnyFake>(
  fake: F,
  make: (options: BackendOptions) => Transcriber,
  extra: Partial<BackendOptions> = {},
): { fake: F; backend: Transcriber; waits: number[] } {
  fakes.push(fake);
  const waits: number[] = [];
  const backend = make({
    baseUrl: fake.url,
    apiKey: fake.key ?? undefined,
    timeoutMs: 5000,
    sleep: async (ms) => void waits.push(ms),
    ...extra,
  });
  return { fake, backend, waits };
}

async function failure(promise: Promise<unknown>): Promise<TranscriptionFailed> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TranscriptionFailed) return error;
    throw error;
  }
  throw new Error("expected a TranscriptionFailed");
}

const VOICE = { bytes: speech("remind me to call the plumber", "ogg"), mime: "audio/ogg" };

const BACKENDS = [
  ["openai", () => startOpenAiSttFake(), openaiTranscriber],
  ["xai", () => startXaiSttFake(), xaiTranscriber],
  ["deepgram", () => startDeepgramFake(), deepgramTranscriber],
] as const;

describe("openai", () => {
  test("multipart file and model to /audio/transcriptions with a Bearer key; the text comes back", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber);
    expect(await backend.transcribe(VOICE)).toBe("remind me to call the plumber");
    const [call] = fake.calls;
    expect(call!.request.path).toBe("/v1/audio/transcriptions");
    expect(call!.request.headers.authorization).toBe(`Bearer ${fake.key}`);
    expect(call!.request.body).toEqual({ model: "gpt-4o-mini-transcribe", response_format: "json" });
    expect(call!.audio).toMatchObject({ filename: "voice-note.ogg", type: "audio/ogg", container: "ogg" });
  });

  test("the configured model is sent", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber, { model: "whisper-1" });
    expect(await backend.transcribe(VOICE)).toBe("remind me to call the plumber");
    expect(fake.calls[0]!.request.body.model).toBe("whisper-1");
  });

  test("a local OpenAI-compatible server without a key gets no Authorization header", async () => {
    const { fake, backend } = setup(startOpenAiSttFake({ key: null, models: ["Systran/faster-whisper-small"] }), openaiTranscriber, {
      model: "Systran/faster-whisper-small",
    });
    expect(await backend.transcribe(VOICE)).toBe("remind me to call the plumber");
    expect(fake.calls[0]!.request.headers.authorization).toBeUndefined();
  });

  test("a round video note goes as the MP4 it is", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber);
    expect(await backend.transcribe({ bytes: speech("hello from the video note", "mp4"), mime: "video/mp4" })).toBe("hello from the video note");
    expect(fake.calls[0]!.audio).toMatchObject({ filename: "video-note.mp4", type: "video/mp4", container: "mp4" });
  });

  test("a Signal voice note (raw ADTS AAC, which the service refuses) goes remuxed into M4A: <name>.m4a, audio/mp4", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber);
    expect(await backend.transcribe({ bytes: speech("call mum back", "aac"), mime: "audio/aac" })).toBe("call mum back");
    expect(await backend.transcribe({ bytes: speech("and buy bread", "aac"), mime: "audio/aac", filename: "Voice1.aac" })).toBe("and buy bread");
    expect(fake.calls.map((c) => c.audio)).toMatchObject([
      { filename: "voice-note.m4a", type: "audio/mp4", container: "m4a" },
      { filename: "Voice1.m4a", type: "audio/mp4", container: "m4a" },
    ]);
    expect(fake.calls.every((c) => c.status === 200)).toBe(true);
  });

  test("a real AAC recording arrives as exactly its M4A remux", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber);
    fake.reply(stt.heard("a tone"));
    const aac = new Uint8Array(await Bun.file(`${import.meta.dir}/fixtures/voice-440hz-mono-44k.aac`).arrayBuffer());
    expect(await backend.transcribe({ bytes: aac, mime: "audio/aac" })).toBe("a tone");
    expect(Buffer.from(fake.calls[0]!.audio!.bytes).equals(adtsToM4a(aac))).toBe(true);
  });

  test("raw AAC that is not a well-formed stream: a failure that says where and why, and nothing is uploaded", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber);
    const cut = speech("this is cut short", "aac").subarray(0, 20);
    const error = await failure(backend.transcribe({ bytes: cut, mime: "audio/aac" }));
    expect(error.backend).toBe("openai");
    expect(error.reason).toContain("raw AAC could not be remuxed to M4A");
    expect(error.reason).toContain("at byte 0: the stream is cut off: the frame is 32 bytes, 20 remain");
    expect(fake.requests).toHaveLength(0);
  });

  test("an unknown model is the service's 404, named in the reason and not retried", async () => {
    const { fake, backend } = setup(startOpenAiSttFake(), openaiTranscriber, { model: "gpt-9-transcribe" });
    const error = await failure(backend.transcribe(VOICE));
    expect(error.status).toBe(404);
    expect(error.reason).toContain("The model `gpt-9-transcribe` does not exist");
    expect(fake.calls).toHaveLength(1);
  });
});

describe("xai", () => {
  test("multipart with the file alone to /stt — no model field — with a Bearer key", async () => {
    const { fake, backend } = setup(startXaiSttFake(), xaiTranscriber, { model: "ignored-by-xai" });
    expect(await backend.transcribe(VOICE)).toBe("remind me to call the plumber");
    const [call] = fake.calls;
    expect(call!.request.path).toBe("/v1/stt");
    expect(call!.request.headers.authorization).toBe(`Bearer ${fake.key}`);
    expect(call!.request.body).toEqual({});
    expect(call!.request.files.map((f) => f.field)).toEqual(["file"]);
    expect(call!.audio).toMatchObject({ filename: "voice-note.ogg", type: "audio/ogg" });
  });

  test("raw AAC goes as it is (the service takes AAC): no remux", async () => {
    const { fake, backend } = setup(startXaiSttFake(), xaiTranscriber);
    const aac = speech("call mum back", "aac");
    expect(await backend.transcribe({ bytes: aac, mime: "audio/aac" })).toBe("call mum back");
    expect(fake.calls[0]!.audio).toMatchObject({ filename: "voice-note.aac", type: "audio/aac", container: "aac", bytes: aac });
  });

  test("the fake refuses a model field, as a modelless service would", async () => {
    const { fake } = setup(startXaiSttFake(), xaiTranscriber);
    const form = new FormData();
    form.append("file", new File([VOICE.bytes], "a.ogg", { type: "audio/ogg" }));
    form.append("model", "grok-stt");
    const res = await fetch(`${fake.url}/stt`, { method: "POST", headers: { authorization: `Bearer ${fake.key}` }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("modelless");
  });
});

describe("deepgram", () => {
  test("raw bytes to /listen?model=nova-3 with the container's Content-Type and a Token key", async () => {
    const { fake, backend } = setup(startDeepgramFake(), deepgramTranscriber);
    expect(await backend.transcribe({ bytes: speech("see you at noon", "ogg"), mime: "audio/ogg; codecs=opus" })).toBe("see you at noon");
    const [call] = fake.calls;
    expect(call!.request.path).toBe("/v1/listen");
    expect(call!.request.query).toEqual({ model: "nova-3", smart_format: "true" });
    expect(call!.request.headers.authorization).toBe(`Token ${fake.key}`);
    expect(call!.request.headers["content-type"]).toBe("audio/ogg");
    expect(call!.request.encoding).toBe("raw");
    expect(call!.audio?.container).toBe("ogg");
  });

  test("the configured model goes in the query", async () => {
    const { fake, backend } = setup(startDeepgramFake(), deepgramTranscriber, { model: "nova-2" });
    await backend.transcribe(VOICE);
    expect(fake.calls[0]!.request.query.model).toBe("nova-2");
  });

  test("a Bearer key is refused by the service: the scheme matters", async () => {
    const { fake } = setup(startDeepgramFake(), deepgramTranscriber);
    const res = await fetch(`${fake.url}/listen?model=nova-3`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.key}`, "content-type": "audio/ogg" },
      body: VOICE.bytes,
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ err_code: "INVALID_AUTH" });
  });
});

describe.each(BACKENDS)("%s: failures", (name, start, make) => {
  test("429 with Retry-After: waits what the service asked, once, then succeeds", async () => {
    const { fake, backend, waits } = setup(start(), make);
    fake.reply(stt.rateLimited("2"), stt.heard("second time lucky"));
    expect(await backend.transcribe(VOICE)).toBe("second time lucky");
    expect(waits).toEqual([2000]);
    expect(fake.calls.map((c) => c.status)).toEqual([429, 200]);
  });

  test("a 5xx twice: one retry (after the default pause), then a failure with the status and the service's words", async () => {
    const { fake, backend, waits } = setup(start(), make, { retryDelayMs: 250 });
    fake.reply(stt.status(503, "upstream overloaded"), stt.status(502, "still overloaded"));
    const error = await failure(backend.transcribe(VOICE));
    expect(error.backend).toBe(name);
    expect(error.status).toBe(502);
    expect(error.reason).toContain("HTTP 502");
    expect(error.reason).toContain("still overloaded");
    expect(waits).toEqual([250]);
    expect(fake.calls).toHaveLength(2);
  });

  test("a Retry-After longer than worth waiting fails at once", async () => {
    const { fake, backend, waits } = setup(start(), make, { maxRetryWaitMs: 10_000 });
    fake.reply(stt.rateLimited("3600"));
    const error = await failure(backend.transcribe(VOICE));
    expect(error.status).toBe(429);
    expect(error.reason).toContain("retry after 3600 s");
    expect(waits).toEqual([]);
    expect(fake.calls).toHaveLength(1);
  });

  test("a 4xx is not retried", async () => {
    const { fake, backend } = setup(start(), make);
    fake.reply(stt.status(400, "bad audio"));
    const error = await failure(backend.transcribe(VOICE));
    expect(error.status).toBe(400);
    expect(fake.calls).toHaveLength(1);
  });

  test("a wrong key: the service's 401 in the reason, the key nowhere in it", async () => {
    const wrong = "wrong-key-abcdef-0123456789";
    const { fake, backend } = setup(start(), make, { apiKey: wrong });
    const error = await failure(backend.transcribe(VOICE));
    expect(error.status).toBe(401);
    expect(fake.calls).toHaveLength(1);
    expect(error.message).not.toContain(wrong);
    expect(error.reason).not.toContain(wrong);
  });

  test("an error body that echoes the key (a proxy's page) has it scrubbed from the reason", async () => {
    const { fake, backend } = setup(start(), make);
    fake.reply(stt.status(400, `rejected Authorization: Bearer ${fake.key} for key ${fake.key}`));
    const error = await failure(backend.transcribe(VOICE));
    expect(error.reason).toContain("rejected Authorization: Bearer [redacted]");
    expect(error.message).not.toContain(fake.key!);
  });

  test("a service that never answers: the attempt is abandoned at the timeout and the connection closed", async () => {
    const { fake, backend } = setup(start(), make, { timeoutMs: 300 });
    fake.reply(stt.hang());
    const started = performance.now();
    const error = await failure(backend.transcribe(VOICE));
    expect(error.reason).toBe("no answer within 300 ms");
    expect(performance.now() - started).toBeLessThan(5000);
    // The fake saw the client go away.
    await fake.waitForCalls(1);
    expect(fake.calls[0]!.status).toBe(499);
  });

  test("the caller's abort ends the call with the caller's reason, not a transcription failure", async () => {
    const { fake, backend } = setup(start(), make);
    fake.reply(stt.hang());
    const controller = new AbortController();
    const pending = backend.transcribe(VOICE, controller.signal);
    await until("the transcription request", () => fake.calls.length > 0);
    const reason = new Error("stopped by /stop");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  test("an unreachable server is a failure that names the URL", async () => {
    const { fake, backend } = setup(start(), make);
    await fake.stop();
    const error = await failure(backend.transcribe(VOICE));
    expect(error.reason).toContain("could not reach http://127.0.0.1:");
  });
});
