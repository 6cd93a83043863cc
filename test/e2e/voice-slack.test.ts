/**
 * Slack audio files with the compiled binary: a signed file_share event in,
 * the file downloaded from url_private with the bot token, transcribed by a
 * speech-to-text fake, and the model's answer back in the DM. The message
 * text is the caption.
 */
import { expect, test } from "bun:test";
import { reply, userText } from "../fakes/model-server.ts";
import { type RecordedRequest, waitFor } from "../fakes/recorder.ts";
import { SLACK_ALICE, SLACK_DM, type SlackFake } from "../fakes/slack.ts";
import { speech, startDeepgramFake, startOpenAiSttFake, startXaiSttFake, stt } from "../fakes/transcription.ts";
import { CHANNELS_OFF, providerToml, slackToml, transcriptionToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { postSlackWebhook } from "../helpers/sign.ts";

const SIGNING_SECRET = "e2e-slack-signing-secret-0123456789";
const start = e2eResources();
const MB = 1024 * 1024;

async function setup(extra: string) {
  const model = await start.model();
  model.fallback((request) => reply.text(`Noted: ${userText(request)}`));
  const slack = start.slack();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: SIGNING_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
      extra,
  );
  const daemon = await start.daemon(home);
  const post = async (envelope: Record<string, unknown>) => {
    const body = JSON.stringify(envelope);
    const res = await postSlackWebhook(daemon.url, body, SIGNING_SECRET);
    expect(res.status).toBe(200);
  };
  return { model, slack, daemon, post };
}

function sttFake<T extends { stop(): Promise<void> }>(fake: T): T {
  start.defer(() => fake.stop());
  return fake;
}

/** The bot's downloads of private files (url_private). */
const downloads = (slack: SlackFake): RecordedRequest[] => slack.requests.filter((r) => r.api === "files-pri");

test("an audio file (xai) without and with text: the transcript, then the caption first and the transcript under the delimiter", async () => {
  const xai = sttFake(startXaiSttFake());
  const { model, slack, daemon, post } = await setup(transcriptionToml({ backend: "xai", baseUrl: xai.url, apiKey: xai.key! }));

  const clip = slack.addFile({ name: "Audio clip.m4a", mimetype: "audio/x-m4a", bytes: speech("ship the release on monday", "m4a") });
  await post(slack.events.fileShare([clip]));
  await slack.waitForTexts(SLACK_DM, (t) => t.join("\n").includes("release on monday"), undefined, 15_000);
  expect(userText(model.requests[0]!)).toBe("ship the release on monday");
  const [call] = xai.calls;
  expect(call!.request.body).toEqual({});
  expect(call!.audio).toMatchObject({ filename: "Audio clip.m4a", type: "audio/mp4", container: "m4a" });
  expect(downloads(slack)[0]!.headers.authorization).toBe(`Bearer ${slack.token}`);

  const second = slack.addFile({ name: "memo.mp3", mimetype: "audio/mpeg", bytes: speech("and tell the team", "mp3") });
  await post(slack.events.fileShare([second], "release plan"));
  await model.waitForRequests(2, 15_000);
  expect(userText(model.requests[1]!)).toBe("release plan\n\n[voice note transcript]\nand tell the team");
  expect(daemon.logs()).not.toContain(xai.key!);
}, 60_000);

test("an audio file (deepgram): its bytes sent raw with their type and a Token key, the transcript answered", async () => {
  const deepgram = sttFake(startDeepgramFake());
  const { model, slack, daemon, post } = await setup(transcriptionToml({ backend: "deepgram", baseUrl: deepgram.url, apiKey: deepgram.key! }));
  const memo = slack.addFile({ name: "memo.mp3", mimetype: "audio/mpeg", bytes: speech("book the meeting room for friday", "mp3") });
  await post(slack.events.fileShare([memo]));
  await slack.waitForTexts(SLACK_DM, (t) => t.join("\n").includes("meeting room"), undefined, 15_000);
  expect(userText(model.requests[0]!)).toBe("book the meeting room for friday");
  const [call] = deepgram.calls;
  expect(call!.request.headers.authorization).toBe(`Token ${deepgram.key}`);
  expect(call!.request.headers["content-type"]).toBe("audio/mpeg");
  expect(downloads(slack)).toHaveLength(1);
  expect(daemon.logs()).not.toContain(deepgram.key!);
}, 60_000);

test("over max_file_mb: refused by Slack's declared size, before any download; an unauthorized sender's audio fetches nothing", async () => {
  const openai = sttFake(startOpenAiSttFake());
  const { model, slack, daemon, post } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  const big = slack.addFile({ name: "meeting.mp3", mimetype: "audio/mpeg", bytes: speech("an hour of meeting", "mp3"), size: 30 * MB });
  await post(slack.events.fileShare([big]));
  const texts = await slack.waitForTexts(SLACK_DM, (t) => t.length > 0, undefined, 15_000);
  expect(texts[0]).toContain("30 MB");
  expect(texts[0]).toContain("20 MB limit for transcription");

  const stranger = "U0STRANGER1";
  const theirs = slack.addFile({ name: "hi.mp3", mimetype: "audio/mpeg", bytes: speech("let me in", "mp3"), user: stranger });
  await post(slack.events.fileShare([theirs], "", { user: stranger, channel: "D0STRANGER1" }));
  await waitFor(() => daemon.logs().includes("unauthorized sender dropped"), { what: "the stranger's message to be dropped" });

  expect(downloads(slack)).toEqual([]);
  expect(openai.requests).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("no transcription key configured: the reply points at `fermix setup`, the file is never downloaded", async () => {
  const { model, slack, post } = await setup("");
  const clip = slack.addFile({ name: "hello.ogg", mimetype: "audio/ogg", bytes: speech("hello?", "ogg") });
  await post(slack.events.fileShare([clip]));
  const texts = await slack.waitForTexts(SLACK_DM, (t) => t.length > 0, undefined, 15_000);
  expect(texts[0]).toContain("fermix setup");
  expect(downloads(slack)).toEqual([]);
  expect(model.requests).toEqual([]);
}, 60_000);

test("the backend fails: the sender is asked to try again and no turn runs", async () => {
  const openai = sttFake(startOpenAiSttFake());
  openai.reply(stt.status(502, "bad gateway upstream", "0"), stt.status(502, "bad gateway upstream", "0"));
  const { model, slack, daemon, post } = await setup(transcriptionToml({ baseUrl: openai.url, apiKey: openai.key! }));
  const clip = slack.addFile({ name: "note.ogg", mimetype: "audio/ogg", bytes: speech("testing", "ogg") });
  await post(slack.events.fileShare([clip]));
  const texts = await slack.waitForTexts(SLACK_DM, (t) => t.length > 0, undefined, 15_000);
  expect(texts[0]).toContain("try again");
  expect(openai.calls).toHaveLength(2);
  expect(model.requests).toEqual([]);
  expect(daemon.logs()).toContain("bad gateway upstream");
}, 60_000);
