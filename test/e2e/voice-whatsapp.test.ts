/**
 * WhatsApp voice notes with the compiled binary: a signed webhook in, the
 * recording fetched from the Cloud API fake (media id → URL → bytes), sent to
 * a speech-to-text fake, and the model's answer back on WhatsApp. WhatsApp
 * audio carries no caption, so only the captionless case exists here.
 */
import { expect, test } from "bun:test";
import { reply, userText } from "../fakes/model-server.ts";
import { waitFor } from "../fakes/recorder.ts";
import { speech, startDeepgramFake, startOpenAiSttFake, startXaiSttFake, stt } from "../fakes/transcription.ts";
import { WA_USER } from "../fakes/whatsapp.ts";
import { CHANNELS_OFF, providerToml, transcriptionToml, whatsappToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { postWhatsAppWebhook } from "../helpers/sign.ts";

const APP_SECRET = "e2e-whatsapp-app-secret-0123456789";
const start = e2eResources();
const MB = 1024 * 1024;

async function setup(extra: string) {
  const model = await start.model();
  model.fallback((request) => reply.text(`Noted: ${userText(request)}`));
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      whatsappToml({
        accessToken: wa.token,
        phoneNumberId: wa.phoneNumberId,
        verifyToken: "e2e-verify",
        appSecret: APP_SECRET,
        allowedSenderIds: [WA_USER.wa_id],
        graphApiBase: wa.graphBase("v21.0"),
      }) +
      extra,
  );
  const daemon = await start.daemon(home);
  const post = async (payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload);
    const res = await postWhatsAppWebhook(daemon.url, body, APP_SECRET);
    expect(res.status).toBe(200);
  };
  return { model, wa, daemon, post };
}

function sttFake<T extends { stop(): Promise<void> }>(fake: T): T {
  start.defer(() => fake.stop());
  return fake;
}

test("a voice note (deepgram) is transcribed and answered: its OGG/Opus sent as audio/ogg with a Token key", async () => {
  const deepgram = sttFake(startDeepgramFake());
  const { model, wa, daemon, post } = await setup(transcriptionToml({ backend: "deepgram", baseUrl: deepgram.url, apiKey: deepgram.key! }));
  await post(wa.webhook.audio({ voice: true, bytes: speech("is the shop open on sunday", "ogg") }));
  const texts = await wa.waitForTexts(WA_USER.wa_id, (t) => t.join("\n").includes("shop open"), 15_000);
  expect(texts.join("\n")).toContain("Noted: is the shop open on sunday");
  expect(userText(model.requests[0]!)).toBe("is the shop open on sunday");
  const [call] = deepgram.calls;
  expect(call!.request.headers.authorization).toBe(`Token ${deepgram.key}`);
  expect(call!.request.headers["content-type"]).toBe("audio/ogg");
  expect(wa.calls("media.download")).toHaveLength(1);
  expect(daemon.logs()).not.toContain(deepgram.key!);
}, 60_000);

test("a voice note (xai): sent as a file with no model field, the transcript answered", async () => {
  const xai = sttFake(startXaiSttFake());
  const { model, wa, daemon, post } = await setup(transcriptionToml({ backend: "xai", baseUrl: xai.url, apiKey: xai.key! }));
  await post(wa.webhook.audio({ voice: true, bytes: speech("call the plumber tomorrow", "ogg") }));
  await wa.waitForTexts(WA_USER.wa_id, (t) => t.join("\n").includes("plumber"), 15_000);
  expect(userText(model.requests[0]!)).toBe("call the plumber tomorrow");
  const [call] = xai.calls;
  expect(call!.request.body).toEqual({});
  expect(call!.audio).toMatchObject({ filename: "voice-note.ogg", type: "audio/ogg" });
  expect(daemon.logs()).not.toContain(xai.key!);
}, 60_000);

test("over max_file_mb: refused by the size GET /{media-id} reports, before the download; an unauthorized sender triggers nothing", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, wa, daemon, post } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key!, maxFileMb: 5 }));
  await post(wa.webhook.audio({ voice: true, bytes: speech("a whole podcast", "ogg"), size: 12 * MB }));
  const texts = await wa.waitForTexts(WA_USER.wa_id, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("12 MB");
  expect(texts[0]).toContain("5 MB limit for transcription");
  expect(wa.calls("media.get")).toHaveLength(1);
  expect(wa.calls("media.download")).toEqual([]);

  await post(wa.webhook.audio({ voice: true, bytes: speech("let me in", "ogg") }, { from: "15550009999" }));
  await waitFor(() => daemon.logs().includes("unauthorized sender dropped"), { what: "the stranger's message to be dropped" });
  expect(wa.calls("media.get")).toHaveLength(1);
  expect(wa.visibleTexts("15550009999")).toEqual([]);
  expect(openai.requests).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("no transcription key configured: the reply points at `fermix setup`, the media is never looked up", async () => {
  const { model, wa, post } = await setup("");
  await post(wa.webhook.audio({ voice: true, bytes: speech("hello?", "ogg") }));
  const texts = await wa.waitForTexts(WA_USER.wa_id, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("fermix setup");
  expect(wa.calls("media.get")).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("the backend fails: the sender is asked to try again and no turn runs", async () => {
  const openai = sttFake(startOpenAiSttFake());
  openai.reply(stt.status(500, "transcoder crashed", "0"), stt.status(500, "transcoder crashed", "0"));
  const { model, wa, daemon, post } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  await post(wa.webhook.audio({ voice: true, bytes: speech("anyone there", "ogg") }));
  const texts = await wa.waitForTexts(WA_USER.wa_id, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("try again");
  expect(openai.calls).toHaveLength(2);
  expect(openai.calls[0]!.audio).toMatchObject({ filename: "voice-note.ogg", type: "audio/ogg" });
  expect(model.requests).toEqual([]);
  expect(daemon.logs()).toContain("transcoder crashed");
}, 60_000);
