/**
 * Self-tests of the speech-to-text fakes with plain fetch and FormData: each
 * refuses what its service refuses, in the service's error shape, so a
 * backend that passes against them sends what the service expects.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { parseAdts } from "../../src/agent/transcription/adts.ts";
import {
  type DeepgramFake,
  type OpenAiSttFake,
  sniff,
  speech,
  startDeepgramFake,
  startOpenAiSttFake,
  startXaiSttFake,
  wordsOf,
  type XaiSttFake,
} from "./transcription.ts";

const fakes: Array<OpenAiSttFake | XaiSttFake | DeepgramFake> = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.stop();
});
function keep<T extends OpenAiSttFake | XaiSttFake | DeepgramFake>(fake: T): T {
  fakes.push(fake);
  return fake;
}

function form(fields: Record<string, string>, file?: { bytes: Uint8Array; name: string; type: string }): FormData {
  const body = new FormData();
  if (file) body.append("file", new File([file.bytes], file.name, { type: file.type }));
  for (const [key, value] of Object.entries(fields)) body.append(key, value);
  return body;
}

describe("OpenAI transcription fake", () => {
  const call = (fake: OpenAiSttFake, body: FormData | string, auth = `Bearer ${fake.key}`) =>
    fetch(`${fake.url}/audio/transcriptions`, { method: "POST", headers: { authorization: auth }, body });
  const ogg = { bytes: speech("hi", "ogg"), name: "a.ogg", type: "audio/ogg" };

  test("answers {text, usage} for a good request", async () => {
    const fake = keep(startOpenAiSttFake());
    const res = await call(fake, form({ model: "gpt-4o-mini-transcribe" }, ogg));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ text: "hi", usage: { type: "tokens" } });
  });

  test.each([
    ["no key", {}, "", 401, "You didn't provide an API key"],
    ["a wrong key", {}, "Bearer sk-wrong-key-123", 401, "Incorrect API key provided: sk-***23"],
    ["no model", {}, undefined, 400, "you must provide a model parameter"],
    ["an unknown model", { model: "gpt-9" }, undefined, 404, "does not exist"],
  ])("refuses %s", async (_what, fields, auth, status, message) => {
    const fake = keep(startOpenAiSttFake());
    const res = await call(fake, form(fields as Record<string, string>, ogg), auth ?? `Bearer ${fake.key}`);
    expect(res.status).toBe(status);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain(message);
  });

  test("refuses a missing file, an unknown extension, and a name that disagrees with the bytes", async () => {
    const fake = keep(startOpenAiSttFake());
    expect((await call(fake, form({ model: "whisper-1" }))).status).toBe(400);
    const unknown = await call(fake, form({ model: "whisper-1" }, { ...ogg, name: "a.bin" }));
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain("Invalid file format");
    const liar = await call(fake, form({ model: "whisper-1" }, { ...ogg, name: "a.mp3" }));
    expect(((await liar.json()) as { error: { message: string } }).error.message).toBe("Audio file might be corrupted or unsupported");
  });

  test("refuses raw AAC (Signal's voice notes), which the endpoint does not take", async () => {
    const fake = keep(startOpenAiSttFake());
    const res = await call(fake, form({ model: "whisper-1" }, { bytes: speech("hi", "aac"), name: "voice.aac", type: "audio/aac" }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("Invalid file format");
  });

  test("refuses an M4A whose boxes do not add up (cut off, or bytes after the last box)", async () => {
    const fake = keep(startOpenAiSttFake());
    const m4a = speech("hi", "m4a");
    for (const bytes of [m4a.subarray(0, m4a.byteLength - 1), new Uint8Array([...m4a, 0])]) {
      const res = await call(fake, form({ model: "whisper-1" }, { bytes, name: "voice.m4a", type: "audio/mp4" }));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe("Audio file might be corrupted or unsupported");
    }
    const whole = await call(fake, form({ model: "whisper-1" }, { bytes: m4a, name: "voice.m4a", type: "audio/mp4" }));
    expect(await whole.json()).toMatchObject({ text: "hi" });
  });

  test("refuses a JSON body", async () => {
    const fake = keep(startOpenAiSttFake());
    const res = await fetch(`${fake.url}/audio/transcriptions`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "whisper-1" }),
    });
    expect(res.status).toBe(400);
  });
});

describe("xAI speech-to-text fake", () => {
  test("answers {text, language, duration, words}; refuses a missing file or a wrong key", async () => {
    const fake = keep(startXaiSttFake());
    const ok = await fetch(`${fake.url}/stt`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.key}` },
      body: form({}, { bytes: speech("two words", "mp3"), name: "a.mp3", type: "audio/mpeg" }),
    });
    expect(await ok.json()).toMatchObject({ text: "two words", language: "en", words: [{ text: "two" }, { text: "words" }] });
    const noFile = await fetch(`${fake.url}/stt`, { method: "POST", headers: { authorization: `Bearer ${fake.key}` }, body: form({ language: "en" }) });
    expect(noFile.status).toBe(400);
    const wrongKey = await fetch(`${fake.url}/stt`, {
      method: "POST",
      headers: { authorization: "Bearer nope" },
      body: form({}, { bytes: speech("x"), name: "a.ogg", type: "audio/ogg" }),
    });
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.json()).toHaveProperty("error");
  });
});

describe("Deepgram fake", () => {
  const listen = (fake: DeepgramFake, init: RequestInit, query = "model=nova-3") => fetch(`${fake.url}/listen?${query}`, { method: "POST", ...init });

  test("refuses multipart, JSON without a URL, an unknown model and an empty body", async () => {
    const fake = keep(startDeepgramFake());
    const auth = { authorization: `Token ${fake.key}` };
    expect((await listen(fake, { headers: auth, body: form({}, { bytes: speech("x"), name: "a.ogg", type: "audio/ogg" }) })).status).toBe(400);
    expect((await listen(fake, { headers: { ...auth, "content-type": "application/json" }, body: "{}" })).status).toBe(400);
    expect((await listen(fake, { headers: { ...auth, "content-type": "audio/ogg" }, body: speech("x") }, "model=nova-9")).status).toBe(400);
    const empty = await listen(fake, { headers: { ...auth, "content-type": "audio/ogg" }, body: new Uint8Array() });
    expect(await empty.json()).toMatchObject({ err_code: "Bad Request", err_msg: "Bad Request: failed to process audio: corrupt or unsupported data" });
  });

  test("without a model the request still transcribes (the service falls back to base)", async () => {
    const fake = keep(startDeepgramFake());
    const res = await listen(fake, { headers: { authorization: `Token ${fake.key}`, "content-type": "audio/wav" }, body: speech("plain", "wav") }, "");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ results: { channels: [{ alternatives: [{ transcript: "plain" }] }] } });
    expect(fake.calls[0]!.request.query.model).toBeUndefined();
  });
});

test("the fake AAC recording is a well-formed ADTS stream: one AAC LC frame, 44.1 kHz, mono, carrying the words", () => {
  const { format, frames } = parseAdts(speech("buy milk", "aac"));
  expect(format).toMatchObject({ objectType: 2, sampleRate: 44100, channels: 1 });
  expect(frames).toHaveLength(1);
  expect(wordsOf(frames[0]!)).toBe("buy milk");
});

test("the fake recordings are told apart by their bytes, AAC's ADTS header from an MP3 frame's", () => {
  for (const container of ["ogg", "mp4", "m4a", "mp3", "wav", "webm", "flac", "aac"] as const) expect(sniff(speech("x", container))).toBe(container);
  expect(sniff(new Uint8Array([0xff, 0xfb, 0x90, 0x64]))).toBeUndefined();
});
