/**
 * What a speech-to-text service answers is network input: whatever the body,
 * status or headers, a backend gives a string or a TranscriptionFailed —
 * never another exception, never a hang.
 */
import { expect, test } from "bun:test";
import { deepgramTranscriber } from "../../../src/agent/transcription/deepgram.ts";
import { type BackendOptions, type Transcriber, TranscriptionFailed } from "../../../src/agent/transcription/index.ts";
import { openaiTranscriber } from "../../../src/agent/transcription/openai.ts";
import { xaiTranscriber } from "../../../src/agent/transcription/xai.ts";
import { mutateBytes, mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";

const VALID: Record<string, unknown> = {
  openai: { text: "hello", usage: { type: "tokens", input_tokens: 3, output_tokens: 1, total_tokens: 4 } },
  xai: { text: "hello", language: "en", duration: 1.2, words: [{ text: "hello", start: 0, end: 0.4 }] },
  deepgram: { metadata: { request_id: "r", channels: 1 }, results: { channels: [{ alternatives: [{ transcript: "hello", confidence: 0.9 }] }] } },
};
const MAKERS: Record<string, (o: BackendOptions) => Transcriber> = { openai: openaiTranscriber, xai: xaiTranscriber, deepgram: deepgramTranscriber };
const STATUSES = [200, 200, 200, 201, 400, 401, 404, 413, 429, 500, 503];
const RETRY_AFTER = [null, "0", "1", "-3", "abc", "Wed, 21 Oct 2015 07:28:00 GMT", "1e9", ""];

test.each(Object.keys(MAKERS))("%s: fuzzed answers give a transcript or a TranscriptionFailed", async (name) => {
  const r = rng(7000 + name.length);
  for (let i = 0; i < 400; i++) {
    const body =
      r.next() < 0.4
        ? JSON.stringify(mutateJson(r, VALID[name]))
        : r.next() < 0.5
          ? JSON.stringify(randomJson(r))
          : Buffer.from(mutateBytes(r, VALID[name])).toString("latin1");
    const status = r.pick(STATUSES);
    const retryAfter = r.pick(RETRY_AFTER);
    const headers: Record<string, string> = retryAfter === null ? {} : { "retry-after": retryAfter };
    const backend = MAKERS[name]!({
      baseUrl: "http://stt.invalid/v1",
      apiKey: "fuzz-key-000000",
      timeoutMs: 1000,
      fetch: async () => new Response(body, { status, headers }),
      sleep: async () => {},
      maxRetryWaitMs: 5000,
    });
    try {
      const text = await backend.transcribe({ bytes: new Uint8Array([1, 2, 3]), mime: "audio/ogg" });
      expect(typeof text).toBe("string");
    } catch (error) {
      if (!(error instanceof TranscriptionFailed)) throw new Error(`case ${i}: ${String(error)} for ${status} ${body.slice(0, 80)}`);
      expect(error.message).not.toContain("fuzz-key-000000");
    }
  }
});
