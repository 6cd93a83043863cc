/**
 * The engine around the backends: built from config, it picks the backend the
 * config names, refuses without a key before anything is sent, refuses audio
 * over the cap, and treats a transcript without words as a failure.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createTranscription, NoTranscriptionKey, TooLarge, TranscriptionFailed } from "../../../src/agent/transcription/index.ts";
import { transcriptionSettings } from "../../../src/config/transcription.ts";
import { speech, startDeepgramFake, startOpenAiSttFake, startXaiSttFake, stt } from "../../fakes/transcription.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

function engineFor(toml: string, env: Record<string, string> = {}) {
  return createTranscription(transcriptionSettings(loadedFrom(toml, env).config), { sleep: async () => {} });
}

const VOICE = { bytes: speech("what's on my calendar", "ogg"), mime: "audio/ogg" };

describe("the backend the config names", () => {
  test.each([
    ["openai", startOpenAiSttFake],
    ["xai", startXaiSttFake],
    ["deepgram", startDeepgramFake],
  ] as const)("%s", async (backend, start) => {
    const fake = start();
    stops.push(() => fake.stop());
    const engine = engineFor(`[fermix_core.transcription]\nbackend = "${backend}"\nbase_url = "${fake.url}"\napi_key = "${fake.key}"\n`);
    expect(engine.backend).toBe(backend);
    expect(engine.unavailable).toBeNull();
    expect(await engine.transcribe(VOICE)).toBe("what's on my calendar");
    expect(fake.calls).toHaveLength(1);
  });
});

describe("refusals before anything is sent", () => {
  test("no key: unavailable, and transcribe rejects with NoTranscriptionKey naming the variable", async () => {
    const fake = startXaiSttFake();
    stops.push(() => fake.stop());
    const engine = engineFor(`[fermix_core.transcription]\nbackend = "xai"\nbase_url = "${fake.url}"\n`);
    expect(engine.unavailable).toBeInstanceOf(NoTranscriptionKey);
    expect(engine.unavailable?.message).toContain("XAI_API_KEY");
    await expect(engine.transcribe(VOICE)).rejects.toBeInstanceOf(NoTranscriptionKey);
    expect(fake.requests).toHaveLength(0);
  });

  test("audio over max_file_mb: TooLarge with the size and the cap, nothing sent", async () => {
    const fake = startOpenAiSttFake();
    stops.push(() => fake.stop());
    const engine = engineFor(`[fermix_core.transcription]\nbase_url = "${fake.url}"\napi_key = "${fake.key}"\nmax_file_mb = 0.001\n`);
    expect(engine.maxBytes).toBe(1048);
    const big = { bytes: new Uint8Array(2000), mime: "audio/ogg" };
    const error = await engine.transcribe(big).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooLarge);
    expect((error as TooLarge).size).toBe(2000);
    expect((error as TooLarge).cap).toBe(1048);
    expect(fake.requests).toHaveLength(0);
  });
});

test("a transcript with no words is a failure, not an empty message", async () => {
  const fake = startDeepgramFake();
  stops.push(() => fake.stop());
  const engine = engineFor(`[fermix_core.transcription]\nbackend = "deepgram"\nbase_url = "${fake.url}"\napi_key = "${fake.key}"\n`);
  fake.reply(stt.heard("   "));
  const error = await engine.transcribe(VOICE).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TranscriptionFailed);
  expect((error as TranscriptionFailed).reason).toContain("no speech");
});
