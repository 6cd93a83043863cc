/**
 * Voice notes on Signal with the compiled binary: the daemon runs the fake
 * signal-cli, a `receive` notification announces an audio attachment that
 * signal-cli has stored, the daemon reads it from the attachment store,
 * a speech-to-text fake transcribes it, and the model answers the
 * transcript through signal-cli. The file is local, so "before download"
 * means before the file is read: a refusal by the declared size comes even
 * when the file is not there at all.
 */
import { expect, test } from "bun:test";
import { reply, userText } from "../fakes/model-server.ts";
import { waitFor } from "../fakes/recorder.ts";
import { SIGNAL_ALICE, SIGNAL_BOB, SIGNAL_GROUP, type SignalAttachment, type SignalFake } from "../fakes/signal.ts";
import { boxesTile, speech, startDeepgramFake, startOpenAiSttFake, startXaiSttFake, stt } from "../fakes/transcription.ts";
import { ACP_OFF, providerToml, signalToml, TELEGRAM_OFF, transcriptionToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();
const MB = 1024 * 1024;

/** The model (echoing what it was told), the fake signal-cli with Alice as owner, and a home whose config ends with `extra`. */
async function setup(extra: string, env: Record<string, string> = {}) {
  const model = await start.model();
  model.fallback((request) => reply.text(`Noted: ${userText(request)}`));
  const signal = start.signal();
  const home = start.home(env);
  home.writeConfig(
    providerToml(model.url) +
      signalToml({ account: signal.account, cliPath: signal.cliPath, attachmentsDir: signal.attachmentsDir, ownerUserId: SIGNAL_ALICE.number }) +
      TELEGRAM_OFF +
      ACP_OFF +
      extra,
  );
  const daemon = await start.daemon(home);
  await signal.waitForStarts(1);
  await waitFor(() => daemon.logs().includes("signal-cli ready"), { timeoutMs: 10_000, what: "signal-cli to be ready" });
  return { model, signal, daemon };
}

function sttFake<T extends { stop(): Promise<void> }>(fake: T): T {
  start.defer(() => fake.stop());
  return fake;
}

/** A voice note as Signal's apps send one: AAC, no file name. */
const voiceNote = (signal: SignalFake, words: string) => signal.addAttachment(speech(words, "aac"), "audio/aac", null);

/** An attachment the envelope announces but signal-cli's store does not hold: reading it would fail, so a refusal first proves it was never read. */
const unread = (size: number): SignalAttachment => ({ contentType: "audio/aac", filename: null, id: `Att_never_${size}.aac`, size });

const textsTo = (signal: SignalFake, chatId: string) => signal.visible(chatId).map((m) => m.text);

test("a voice note without and with a caption (xai) become what the model reads, and the answer goes back through signal-cli", async () => {
  const xai = sttFake(startXaiSttFake());
  const { model, signal, daemon } = await setup(transcriptionToml({ backend: "xai", baseUrl: xai.url, apiKey: xai.key! }));

  await signal.receive(signal.envelope.text("", { attachments: [voiceNote(signal, "remind me to water the plants")] }));
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("water the plants"), 15_000);
  expect(userText(model.requests[0]!)).toBe("remind me to water the plants");
  const [first] = xai.calls;
  expect(first!.request.body).toEqual({});
  expect(first!.audio).toMatchObject({ type: "audio/aac", container: "aac" });
  expect(first!.audio!.filename).toEndWith(".aac");

  const memo = signal.addAttachment(speech("and feed the cat", "m4a"), "audio/mp4", "memo.m4a");
  await signal.receive(signal.envelope.text("before Sunday", { attachments: [memo] }));
  await model.waitForRequests(2, 15_000);
  expect(userText(model.requests[1]!)).toBe("before Sunday\n\n[voice note transcript]\nand feed the cat");
  expect(xai.calls[1]!.audio).toMatchObject({ filename: "memo.m4a", type: "audio/mp4", container: "m4a" });
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("feed the cat"), 15_000);
  expect(textsTo(signal, SIGNAL_ALICE.uuid).join("\n")).toContain("Noted: before Sunday");
  expect(daemon.logs()).not.toContain(xai.key!);
}, 60_000);

test("the default openai backend: a voice note goes remuxed into M4A and is answered; a cut-off one gets a try-again reply", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, signal, daemon } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));

  await signal.receive(signal.envelope.text("", { attachments: [voiceNote(signal, "book the dentist for Tuesday")] }));
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("dentist"), 15_000);
  expect(userText(model.requests[0]!)).toBe("book the dentist for Tuesday");
  const [call] = openai.calls;
  expect(call!.status).toBe(200);
  expect(call!.request.body.model).toBe("gpt-4o-mini-transcribe");
  expect(call!.audio).toMatchObject({ type: "audio/mp4", container: "m4a" });
  expect(call!.audio!.filename).toEndWith(".m4a");
  expect(boxesTile(call!.audio!.bytes)).toBe(true);
  expect(textsTo(signal, SIGNAL_ALICE.uuid)).toEqual(["Noted: book the dentist for Tuesday"]);

  const whole = speech("this one was cut off", "aac");
  const cut = signal.addAttachment(whole.subarray(0, whole.byteLength - 5), "audio/aac", null);
  await signal.receive(signal.envelope.text("", { attachments: [cut] }));
  await waitFor(() => (textsTo(signal, SIGNAL_ALICE.uuid).length === 2 ? true : undefined), { timeoutMs: 15_000, what: "the reply to the cut-off note" });
  expect(textsTo(signal, SIGNAL_ALICE.uuid)[1]).toContain("try again");
  expect(openai.calls).toHaveLength(1);
  expect(model.requests).toHaveLength(1);
  expect(daemon.logs()).toContain("raw AAC could not be remuxed to M4A");
}, 60_000);

test("over max_file_mb: refused by the declared size before the file is read; a stranger's voice note is neither read nor transcribed", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, signal, daemon } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));

  await signal.receive(signal.envelope.text("", { attachments: [unread(25 * MB)] }));
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").length > 0, 15_000);
  const [refusal] = textsTo(signal, SIGNAL_ALICE.uuid);
  expect(refusal).toContain("25 MB");
  expect(refusal).toContain("20 MB limit for transcription");

  await signal.receive(signal.envelope.text("", { from: SIGNAL_BOB, attachments: [unread(1000)] }));
  // Dropped is the end of it: nothing is read, transcribed or sent after the drop.
  await waitFor(() => daemon.logs().includes("unauthorized sender dropped"), { timeoutMs: 10_000, what: "Bob's message to be dropped" });
  expect(textsTo(signal, SIGNAL_BOB.uuid)).toEqual([]);
  expect(daemon.logs()).not.toContain("voice note download failed");
  expect(openai.requests).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("no transcription key configured: the reply points at `fermix setup`, the file is never read", async () => {
  const { model, signal, daemon } = await setup("");
  await signal.receive(signal.envelope.text("", { attachments: [unread(2000)] }));
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").length > 0, 15_000);
  expect(textsTo(signal, SIGNAL_ALICE.uuid)[0]).toContain("fermix setup");
  expect(daemon.logs()).not.toContain("voice note download failed");
  expect(model.requests).toEqual([]);
}, 60_000);

test("the backend fails (after its one retry): the sender is asked to try again, no turn runs, the reason is logged without the key", async () => {
  const openai = sttFake(startOpenAiSttFake());
  openai.reply(stt.status(500, "transcoder crashed", "0"), stt.status(503, "transcoder still down", "0"));
  const { model, signal, daemon } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  const memo = signal.addAttachment(speech("is this thing on", "m4a"), "audio/mp4", "memo.m4a");
  await signal.receive(signal.envelope.text("", { attachments: [memo] }));
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").length > 0, 15_000);
  const [answer] = textsTo(signal, SIGNAL_ALICE.uuid);
  expect(answer).toContain("try again");
  expect(answer).not.toContain("transcoder");
  expect(openai.calls.map((c) => c.status)).toEqual([500, 503]);
  expect(model.requests).toEqual([]);
  expect(daemon.logs()).toContain("transcoder still down");
  expect(daemon.logs()).not.toContain(openai.key!);
}, 60_000);

test("backend = deepgram, in a group: the AAC voice note as raw bytes with a Token key; telemetry names the channel and backend", async () => {
  const deepgram = sttFake(startDeepgramFake());
  const { model, signal, daemon } = await setup(transcriptionToml({ backend: "deepgram", baseUrl: deepgram.url }), {
    DEEPGRAM_API_KEY: deepgram.key!,
    FERMIX_LOG_LEVEL: "debug",
  });
  await signal.receive(signal.envelope.text("", { groupId: SIGNAL_GROUP, attachments: [voiceNote(signal, "deepgram hears signal")] }));
  await model.waitForRequests(1, 15_000);
  // In a group the owner's words come with who said them.
  expect(userText(model.requests[0]!)).toBe(`[Alice (id ${SIGNAL_ALICE.uuid}), the owner]\ndeepgram hears signal`);
  const [call] = deepgram.calls;
  expect(call!.request.headers.authorization).toBe(`Token ${deepgram.key}`);
  expect(call!.request.headers["content-type"]).toBe("audio/aac");
  await signal.waitForCall("send", (c) => String(c.request.params?.message ?? "").includes("deepgram hears signal"), 15_000);
  // The fake model echoes what it read, header included.
  expect(textsTo(signal, `group:${SIGNAL_GROUP}`)).toEqual([`Noted: [Alice (id ${SIGNAL_ALICE.uuid}), the owner]\ndeepgram hears signal`]);
  expect(daemon.logs()).toMatch(/event=transcription\.message channel=signal backend=deepgram status=ok/);
}, 60_000);
