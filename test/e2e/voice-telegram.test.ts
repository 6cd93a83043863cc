/**
 * Voice notes on Telegram with the compiled binary: the daemon long-polls the
 * Bot API fake, downloads the recording, sends it to a speech-to-text fake,
 * and the model answers the transcript. Refusals are replies the sender sees,
 * with no turn and — where the size is known first — no download at all.
 */
import { expect, test } from "bun:test";
import { reply, userText } from "../fakes/model-server.ts";
import { waitFor } from "../fakes/recorder.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import { speech, startDeepgramFake, startOpenAiSttFake, startXaiSttFake, stt } from "../fakes/transcription.ts";
import { ACP_OFF, providerToml, telegramToml, transcriptionToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();
const MB = 1024 * 1024;

/** The model (echoing what it was told), the Bot API fake, and a home whose config ends with `extra`. */
async function setup(extra: string, env: Record<string, string> = {}) {
  const model = await start.model();
  model.fallback((request) => reply.text(`Noted: ${userText(request)}`));
  const telegram = start.telegram();
  const home = start.home(env);
  home.writeConfig(
    providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF + extra,
  );
  return { model, telegram, home };
}

/** A speech-to-text fake of `kind`, stopped after the test. */
function sttFake<T extends { stop(): Promise<void> }>(fake: T): T {
  start.defer(() => fake.stop());
  return fake;
}

test("voice notes without and with a caption, and a round video note, become what the model reads", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, telegram, home } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  const d = await start.daemon(home);

  telegram.pushMessage(telegram.message.voice({ bytes: speech("remind me to water the plants", "ogg") }));
  await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("water the plants")), 15_000);
  expect(userText(model.requests[0]!)).toBe("remind me to water the plants");
  const [first] = openai.calls;
  expect(first!.request.headers.authorization).toBe(`Bearer ${openai.key}`);
  expect(first!.request.body.model).toBe("gpt-4o-mini-transcribe");
  expect(first!.audio).toMatchObject({ filename: "voice-note.ogg", type: "audio/ogg", container: "ogg" });

  telegram.pushMessage(telegram.message.voice({ bytes: speech("and feed the cat", "ogg"), caption: "before Sunday" }));
  await model.waitForRequests(2, 15_000);
  expect(userText(model.requests[1]!)).toBe("before Sunday\n\n[voice note transcript]\nand feed the cat");

  telegram.pushMessage(telegram.message.videoNote({ bytes: speech("waving hello from the park", "mp4") }));
  await model.waitForRequests(3, 15_000);
  expect(userText(model.requests[2]!)).toBe("waving hello from the park");
  expect(openai.calls[2]!.audio).toMatchObject({ filename: "video-note.mp4", type: "video/mp4", container: "mp4" });

  await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("waving hello")), 15_000);
  expect(d.logs()).not.toContain(openai.key!);
}, 60_000);

test("over max_file_mb: refused naming the cap before any download; an unauthorized sender's voice note fetches and sends nothing", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, telegram, home } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  const d = await start.daemon(home);

  telegram.pushMessage(telegram.message.voice({ bytes: speech("a very long story", "ogg"), size: 25 * MB }));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("25 MB");
  expect(texts[0]).toContain("20 MB limit for transcription");

  const [fromBob] = telegram.pushMessage(telegram.message.voice({ bytes: speech("let me in", "ogg") }, { from: BOB }));
  await telegram.waitForRequest("getUpdates", (r) => Number(r.body.offset) > fromBob!.update_id, 5000);
  await waitFor(() => d.logs().includes("unauthorized sender dropped"), { what: "Bob's message to be dropped" });
  expect(telegram.botMessages(BOB.id)).toEqual([]);

  expect(telegram.calls("getFile")).toEqual([]);
  expect(telegram.calls("file")).toEqual([]);
  expect(openai.requests).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("no transcription key configured: the reply points at `fermix setup`, nothing is downloaded", async () => {
  const { model, telegram, home } = await setup("");
  await start.daemon(home);
  telegram.pushMessage(telegram.message.voice({ bytes: speech("hello?", "ogg") }));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("fermix setup");
  expect(telegram.calls("getFile")).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("the backend fails (after its one retry): the sender is asked to try again, the reason is logged without the key", async () => {
  const openai = sttFake(startOpenAiSttFake());
  openai.reply(stt.status(500, "transcoder crashed", "0"), stt.status(503, "transcoder still down", "0"));
  const { model, telegram, home } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  const d = await start.daemon(home);
  telegram.pushMessage(telegram.message.voice({ bytes: speech("is this thing on", "ogg") }));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("try again");
  expect(texts[0]).not.toContain("transcoder");
  expect(openai.calls.map((c) => c.status)).toEqual([500, 503]);
  expect(model.requests).toEqual([]);
  expect(d.logs()).toContain("transcription failed");
  expect(d.logs()).toContain("transcoder still down");
  expect(d.logs()).not.toContain(openai.key!);
}, 60_000);

test("backend = xai: the recording alone, no model field, a Bearer key; telemetry names the backend", async () => {
  const xai = sttFake(startXaiSttFake());
  const { model, telegram, home } = await setup(transcriptionToml({ backend: "xai", baseUrl: xai.url, apiKey: xai.key! }), { FERMIX_LOG_LEVEL: "debug" });
  const d = await start.daemon(home);
  telegram.pushMessage(telegram.message.voice({ bytes: speech("grok, what's the time", "ogg") }));
  await model.waitForRequests(1, 15_000);
  expect(userText(model.requests[0]!)).toBe("grok, what's the time");
  const [call] = xai.calls;
  expect(call!.request.path).toBe("/v1/stt");
  expect(call!.request.body).toEqual({});
  expect(call!.request.headers.authorization).toBe(`Bearer ${xai.key}`);
  expect(d.logs()).toMatch(/event=transcription\.message channel=telegram backend=xai status=ok duration_ms=\S+ bytes=\d+/);
  expect(d.logs()).not.toContain(xai.key!);
}, 60_000);

test("backend = deepgram from DEEPGRAM_API_KEY: raw bytes with a Token key to /listen?model=nova-3", async () => {
  const deepgram = sttFake(startDeepgramFake());
  const { model, telegram, home } = await setup(transcriptionToml({ backend: "deepgram", baseUrl: deepgram.url }), { DEEPGRAM_API_KEY: deepgram.key! });
  const d = await start.daemon(home);
  telegram.pushMessage(telegram.message.voice({ bytes: speech("deepgram hears you", "ogg") }));
  await model.waitForRequests(1, 15_000);
  expect(userText(model.requests[0]!)).toBe("deepgram hears you");
  const [call] = deepgram.calls;
  expect(call!.request.query).toEqual({ model: "nova-3", smart_format: "true" });
  expect(call!.request.headers.authorization).toBe(`Token ${deepgram.key}`);
  expect(call!.request.headers["content-type"]).toBe("audio/ogg");
  expect(d.logs()).not.toContain(deepgram.key!);
}, 60_000);
