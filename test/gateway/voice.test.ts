/**
 * Voice notes through the gateway, in this process, against the fake model
 * and the OpenAI speech-to-text fake: what the agent is given, what the
 * sender is told when it fails, and that nothing is fetched or sent when it
 * need not be.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { lastInputParts, reply, userText } from "../fakes/model-server.ts";
import { type OpenAiSttFake, speech, startOpenAiSttFake, stt } from "../fakes/transcription.ts";
import { DEFAULT_CHANNELS_TOML, type Harness, RecordingChannel, startHarness, TELEGRAM_STRANGER } from "../helpers/gateway.ts";
import { until } from "../helpers/wait.ts";

let h: Harness | undefined;
let sttFake: OpenAiSttFake | undefined;
afterEach(async () => {
  await h?.close();
  await sttFake?.stop();
  h = undefined;
  sttFake = undefined;
});

const voice = { kind: "voice" as const, mime: "audio/ogg", declaredSize: 4096, ref: "voice-1" };

/** A harness whose transcription goes to a fresh OpenAI fake; `extra` adds keys to `[fermix_core.transcription]`. */
async function start(options: { extra?: string; bytes?: Uint8Array } = {}) {
  sttFake = startOpenAiSttFake();
  const telegram = new RecordingChannel(undefined, options.bytes ?? speech("book a table for two at eight", "ogg"));
  h = await startHarness({
    channels: { telegram },
    toml: `${DEFAULT_CHANNELS_TOML}
[fermix_core.transcription]
base_url = "${sttFake.url}"
api_key = "${sttFake.key}"
${options.extra ?? ""}
`,
  });
  return { h, stt: sttFake, telegram };
}

describe("the transcript becomes the message", () => {
  test("a voice note without a caption: the transcript alone is what the agent reads", async () => {
    const { h, stt } = await start();
    h.fake.reply((request) => reply.text(`you said: ${userText(request)}`));
    expect(await h.ingest({ text: "", media: [voice] })).toBe("answered");
    expect(userText(h.fake.requests[0]!)).toBe("book a table for two at eight");
    expect(h.telegram.texts().join("\n")).toContain("you said: book a table for two at eight");
    expect(stt.calls).toHaveLength(1);
    expect(h.eventsNamed("transcription.message")).toEqual([expect.objectContaining({ metadata: { channel: "telegram", backend: "openai", status: "ok" } })]);
    expect(h.eventsNamed("transcription.message")[0]!.measurements.bytes).toBe(h.telegram.mediaBytes.byteLength);
  });

  test("with a caption: the caption first, the transcript under the delimiter", async () => {
    const { h } = await start();
    h.fake.reply(reply.text("noted"));
    expect(await h.ingest({ text: "for Friday", media: [voice] })).toBe("answered");
    expect(userText(h.fake.requests[0]!)).toBe("for Friday\n\n[voice note transcript]\nbook a table for two at eight");
  });

  test("a raw AAC voice note (as Signal sends them) is transcribed by the default openai backend", async () => {
    const { h, stt } = await start({ bytes: speech("pick up the parcel", "aac") });
    h.fake.reply(reply.text("will do"));
    expect(await h.ingest({ text: "", media: [{ ...voice, mime: "audio/aac" }] })).toBe("answered");
    expect(userText(h.fake.requests[0]!)).toBe("pick up the parcel");
    expect(stt.calls[0]!.audio).toMatchObject({ filename: "voice-note.m4a", type: "audio/mp4", container: "m4a" });
  });

  test("several recordings in one message are transcribed in order", async () => {
    const { h, stt: fake } = await start();
    fake.reply(stt.heard("first part"), stt.heard("second part"));
    h.fake.reply(reply.text("ok"));
    const second = { ...voice, ref: "voice-2", kind: "audio" as const, filename: "reply.ogg" };
    expect(await h.ingest({ text: "", media: [voice, second] })).toBe("answered");
    expect(userText(h.fake.requests[0]!)).toBe("first part\n\n[voice note transcript]\nsecond part");
    expect(h.telegram.fetched.map((m) => m.ref)).toEqual(["voice-1", "voice-2"]);
  });

  test("a photo and a voice note together: the picture as image content, the words as text", async () => {
    const { h } = await start();
    h.fake.reply(reply.text("nice"));
    const image = { kind: "image" as const, mime: "image/jpeg", declaredSize: 2048, ref: "photo-1" };
    expect(await h.ingest({ text: "", media: [image, voice] })).toBe("answered");
    const content = lastInputParts(h.fake.requests[0]!);
    expect(content.map((c) => c.type).sort()).toEqual(["input_image", "input_text"]);
    expect(content.find((c) => c.type === "input_text")!.text).toBe("book a table for two at eight");
  });
});

describe("/ultra with a voice note", () => {
  test("`/ultra` alone as the caption: the transcript is the request the planner gets", async () => {
    const { h } = await start();
    h.fake.fallback((r) => {
      const instructions = String(r.body.instructions);
      if (instructions.includes("## Ultra mode: planning")) return reply.text('{"parts": [{"title": "a", "task": "find a table"}]}');
      return reply.text(instructions.includes("## Ultra mode: merging") ? "Booked." : "Found one.");
    });
    expect(await h.ingest({ text: "/ultra", media: [voice] })).toBe("command");
    expect(userText(h.fake.requests[0]!)).toBe("book a table for two at eight");
    expect(h.fake.requests).toHaveLength(3);
  });
});

describe("failures reply and schedule no turn", () => {
  test("declared over max_file_mb: refused naming the cap, nothing downloaded, nothing sent", async () => {
    const { h, stt } = await start();
    expect(await h.ingest({ text: "", media: [{ ...voice, declaredSize: 25 * 1024 * 1024 }] })).toBe("refused");
    const [text] = h.telegram.texts();
    expect(text).toContain("25 MB");
    expect(text).toContain("20 MB limit");
    expect(h.telegram.fetched).toEqual([]);
    expect(stt.requests).toHaveLength(0);
    expect(h.fake.requests).toHaveLength(0);
    expect(h.eventsNamed("transcription.message")[0]!.metadata).toEqual({ channel: "telegram", backend: "openai", status: "refused", reason: "too_large" });
  });

  test("no declared size: checked against the bytes, never sent to the backend", async () => {
    const { h, stt } = await start({ extra: "max_file_mb = 0.00001", bytes: speech("a long ramble ".repeat(10), "ogg") });
    expect(await h.ingest({ text: "", media: [{ ...voice, declaredSize: undefined }] })).toBe("refused");
    expect(h.telegram.texts()[0]).toContain("limit for transcription, so I did not transcribe it");
    expect(h.telegram.fetched).toHaveLength(1);
    expect(stt.requests).toHaveLength(0);
    expect(h.fake.requests).toHaveLength(0);
  });

  test("the backend fails twice: asked to try again, no turn, no reason or key in the reply", async () => {
    const { h, stt: fake } = await start({ extra: "timeout_ms = 5000" });
    fake.reply(stt.status(500, "transcoder crashed"), stt.status(500, "transcoder crashed"));
    expect(await h.ingest({ text: "", media: [voice] })).toBe("refused");
    const [text] = h.telegram.texts();
    expect(text).toContain("try again");
    expect(text).not.toContain("transcoder crashed");
    expect(text).not.toContain(fake.key!);
    expect(fake.calls).toHaveLength(2);
    expect(h.fake.requests).toHaveLength(0);
    expect(h.eventsNamed("transcription.message")[0]!.metadata).toEqual({ channel: "telegram", backend: "openai", status: "error", reason: "failed" });
  });

  test("a Signal-style raw AAC note cut off mid-frame: asked to try again, no turn, nothing uploaded", async () => {
    const aac = speech("half a sentence", "aac");
    const { h, stt } = await start({ bytes: aac.subarray(0, aac.byteLength - 3) });
    expect(await h.ingest({ text: "", media: [{ ...voice, mime: "audio/aac", declaredSize: undefined }] })).toBe("refused");
    expect(h.telegram.texts()).toEqual(["I couldn't transcribe that voice note just now. Please try again in a moment."]);
    expect(stt.requests).toHaveLength(0);
    expect(h.fake.requests).toHaveLength(0);
    expect(h.eventsNamed("transcription.message")[0]!.metadata).toEqual({ channel: "telegram", backend: "openai", status: "error", reason: "failed" });
  });

  test("a voice note from an unauthorized sender: dropped before any download or transcription", async () => {
    const { h, stt } = await start();
    expect(await h.ingest({ senderId: TELEGRAM_STRANGER, text: "", media: [voice] })).toBe("dropped");
    expect(h.telegram.fetched).toEqual([]);
    expect(stt.requests).toHaveLength(0);
    expect(h.telegram.actions).toEqual([]);
    expect(h.eventsNamed("transcription.message")).toEqual([]);
  });

  test("/stop while a transcription runs ends the turn quietly: no failure reply", async () => {
    const { h, stt: fake } = await start();
    fake.reply(stt.hang());
    const outcome = h.ingest({ text: "", media: [voice] });
    await until("the transcription request", () => fake.calls.length > 0);
    expect(await h.ingest({ text: "/stop" })).toBe("command");
    expect(await outcome).toBe("cancelled");
    expect(h.telegram.texts().some((t) => t.includes("try again"))).toBe(false);
    expect(h.fake.requests).toHaveLength(0);
  });
});
