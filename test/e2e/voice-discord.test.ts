/**
 * Voice notes on Discord with the compiled binary: a voice message (or an
 * audio file) arrives over the gateway, is downloaded from the fake's CDN,
 * transcribed by a speech-to-text fake, and the model answers the
 * transcript. Refusals are replies the sender sees, with no turn and — since
 * Discord declares every attachment's size — no download at all.
 */
import { expect, test } from "bun:test";
import {
  DISCORD_ALICE,
  DISCORD_BOB,
  DISCORD_BOB_DM,
  DISCORD_BOT,
  DISCORD_CHANNEL,
  DISCORD_DM,
  DISCORD_GUILD,
  type DiscordFake,
  mention,
} from "../fakes/discord.ts";
import { reply, userText } from "../fakes/model-server.ts";
import { type RecordedRequest, waitFor } from "../fakes/recorder.ts";
import { speech, startDeepgramFake, startOpenAiSttFake, startXaiSttFake, stt } from "../fakes/transcription.ts";
import { CHANNELS_OFF, discordToml, providerToml, transcriptionToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();
const MB = 1024 * 1024;

/** The model (echoing what it was told), the Discord fake owned by Alice, and a home whose config ends with `extra`. */
async function setup(extra: string, env: Record<string, string> = {}) {
  const model = await start.model();
  model.fallback((request) => reply.text(`Noted: ${userText(request)}`));
  const discord = start.discord();
  const home = start.home(env);
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase }) +
      extra,
  );
  const daemon = await start.daemon(home);
  await discord.gateway.waitForLive(10_000);
  return { model, discord, daemon };
}

function sttFake<T extends { stop(): Promise<void> }>(fake: T): T {
  start.defer(() => fake.stop());
  return fake;
}

/** The daemon's downloads from the fake's CDN. */
const downloads = (discord: DiscordFake): RecordedRequest[] => discord.calls("attachment");

test("a voice message, an audio file with a caption, and one in a server channel become what the model reads", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, discord, daemon } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));

  discord.voiceMessage(speech("remind me to water the plants", "ogg"));
  await discord.waitForTexts(DISCORD_DM, (t) => t.some((x) => x.includes("water the plants")), 15_000);
  expect(userText(model.requests[0]!)).toBe("remind me to water the plants");
  const [first] = openai.calls;
  expect(first!.request.headers.authorization).toBe(`Bearer ${openai.key}`);
  expect(first!.audio).toMatchObject({ filename: "voice-message.ogg", type: "audio/ogg", container: "ogg" });
  // Fetched from the CDN's signed URL, without the bot token.
  expect(downloads(discord)[0]!.headers.authorization).toBeUndefined();

  const memo = discord.attachment("memo.mp3", speech("and feed the cat", "mp3"), "audio/mpeg");
  discord.userMessage("before Sunday", { attachments: [memo] });
  await model.waitForRequests(2, 15_000);
  expect(userText(model.requests[1]!)).toBe("before Sunday\n\n[voice note transcript]\nand feed the cat");
  expect(openai.calls[1]!.audio).toMatchObject({ filename: "memo.mp3", type: "audio/mpeg", container: "mp3" });

  const clip = discord.attachment("standup.m4a", speech("the build is green", "m4a"), "audio/mp4", DISCORD_CHANNEL);
  discord.userMessage(`${mention()} summarise this`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT], attachments: [clip] });
  await model.waitForRequests(3, 15_000);
  // In a server channel the owner's words come with who said them.
  expect(userText(model.requests[2]!)).toBe(`[Alice (id ${DISCORD_ALICE.id}), the owner]\nsummarise this\n\n[voice note transcript]\nthe build is green`);
  await discord.waitForTexts(DISCORD_CHANNEL, (t) => t.some((x) => x.includes("the build is green")), 15_000);
  expect(daemon.logs()).not.toContain(openai.key!);
  expect(daemon.logs()).not.toContain(discord.token);
}, 60_000);

test("over max_file_mb: refused by the size Discord declares, before any download; a stranger's voice message fetches and sends nothing", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, discord, daemon } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));

  discord.voiceMessage(speech("a very long story", "ogg"), { size: 25 * MB });
  const texts = await discord.waitForTexts(DISCORD_DM, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("25 MB");
  expect(texts[0]).toContain("20 MB limit for transcription");

  discord.voiceMessage(speech("let me in", "ogg"), { author: DISCORD_BOB, channelId: DISCORD_BOB_DM });
  // Dropped is the end of it: nothing is fetched, transcribed or sent after the drop.
  await waitFor(() => daemon.logs().includes("unauthorized sender dropped"), { timeoutMs: 10_000, what: "Bob's message to be dropped" });
  expect(discord.visible(DISCORD_BOB_DM)).toEqual([]);

  expect(downloads(discord)).toEqual([]);
  expect(openai.requests).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("no transcription key configured: the reply points at `fermix setup`, nothing is downloaded", async () => {
  const { model, discord } = await setup("");
  discord.voiceMessage(speech("hello?", "ogg"));
  const texts = await discord.waitForTexts(DISCORD_DM, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("fermix setup");
  expect(downloads(discord)).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("the backend fails (xai, after its one retry): the sender is asked to try again and no turn runs", async () => {
  const xai = sttFake(startXaiSttFake());
  xai.reply(stt.status(500, "transcoder crashed", "0"), stt.status(503, "transcoder still down", "0"));
  const { model, discord, daemon } = await setup(transcriptionToml({ backend: "xai", baseUrl: xai.url, apiKey: xai.key! }));
  discord.voiceMessage(speech("is this thing on", "ogg"));
  const texts = await discord.waitForTexts(DISCORD_DM, (t) => t.length > 0, 15_000);
  expect(texts[0]).toContain("try again");
  expect(texts[0]).not.toContain("transcoder");
  expect(xai.calls.map((c) => c.status)).toEqual([500, 503]);
  expect(xai.calls[0]!.request.body).toEqual({});
  expect(model.requests).toEqual([]);
  expect(daemon.logs()).toContain("transcoder still down");
  expect(daemon.logs()).not.toContain(xai.key!);
}, 60_000);

test("backend = deepgram from DEEPGRAM_API_KEY: the voice message's bytes with a Token key; telemetry names the channel and backend", async () => {
  const deepgram = sttFake(startDeepgramFake());
  const { model, discord, daemon } = await setup(transcriptionToml({ backend: "deepgram", baseUrl: deepgram.url }), {
    DEEPGRAM_API_KEY: deepgram.key!,
    FERMIX_LOG_LEVEL: "debug",
  });
  discord.voiceMessage(speech("deepgram hears discord", "ogg"));
  await model.waitForRequests(1, 15_000);
  expect(userText(model.requests[0]!)).toBe("deepgram hears discord");
  const [call] = deepgram.calls;
  expect(call!.request.headers.authorization).toBe(`Token ${deepgram.key}`);
  expect(call!.request.headers["content-type"]).toBe("audio/ogg");
  expect(daemon.logs()).toMatch(/event=transcription\.message channel=discord backend=deepgram status=ok/);
}, 60_000);
