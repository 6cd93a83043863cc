/** The Slack adapter against the loopback Slack fake: the adapter contract, then what is Slack's own. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MediaTooLarge } from "../../../src/channels/net.ts";
import { SLACK_RETRY_POLICY, SlackApi, SlackApiError } from "../../../src/channels/slack/api.ts";
import { type SlackAdapterOptions, slackAdapter } from "../../../src/channels/slack/index.ts";
import { SLACK_MEDIA_CAP, slackReactionName } from "../../../src/channels/slack/outbound.ts";
import type { AdapterContext, ChannelAdapter } from "../../../src/channels/types.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { FormattingRejected, type OutboundText } from "../../../src/message/index.ts";
import { runAdapterContract } from "../../contract/adapter.contract.ts";
import { SLACK_ALICE, SLACK_CHANNEL, SLACK_DM, type SlackFake, startSlackFake } from "../../fakes/slack.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

const configFor = (fake: SlackFake) =>
  loadedFrom(`
[fermix_channels.slack]
enabled = true
bot_token = "${fake.token}"
signing_secret = "slack-signing-secret-for-tests"
owner_user_id = "${SLACK_ALICE}"
api_url = "${fake.apiUrl}"
`).config;

/** A user's channel message on the fake; replies go in its thread, as the inbound parser decides. */
function userMessage(fake: SlackFake, channel = SLACK_CHANNEL): string {
  const envelope = fake.events.channelMessage("hello there", { channel }) as { event: { ts: string } };
  return envelope.event.ts;
}

runAdapterContract("slack", async () => {
  const fake = startSlackFake();
  const adapter = slackAdapter(configFor(fake));
  const parent = userMessage(fake);
  return {
    adapter,
    target: { chatId: SLACK_CHANNEL, threadId: parent, replyTo: parent },
    inboundMessageId: parent,
    boldHi: "*hi*",
    visible: async () => fake.visibleTexts(SLACK_CHANNEL, parent).map((text) => ({ text, notified: true })),
    sentMedia: async () => [...fake.files.uploads.values()].filter((u) => u.completed).map((u) => ({ filename: u.filename, size: u.bytes?.byteLength ?? 0 })),
    rejectFormattingNext: () => fake.failNext("chat.postMessage", "msg_too_long"),
    // Twice: the Web API client retries one blip itself (SLACK_RETRY_POLICY); what outlasts it is the outbox's to retry.
    serverErrorNext: () => fake.serverErrorNext("chat.postMessage", 503, 2),
    inboundMedia: async (bytes, mime) => {
      const file = fake.addFile({ name: "inbound.png", bytes, mimetype: mime });
      return { kind: "image", mime, declaredSize: file.size, filename: file.name, ref: file.url_private_download };
    },
    reaction: "eyes",
    hasReaction: async (id, name) => fake.messages(SLACK_CHANNEL).some((m) => m.ts === id && m.reactions.includes(name)),
    documentCap: SLACK_MEDIA_CAP,
    // Slack has no per-message "silent" switch for bots.
    notifyControl: false,
    stop: async () => {
      await adapter.stop();
      await fake.stop();
    },
  };
});

const text = (t: string, plain = false): OutboundText => ({ text: t, notify: true, linkPreview: false, plain });

describe("slack adapter", () => {
  let fake: SlackFake;
  let adapter: ChannelAdapter;
  let scratch: string;
  let waits: number[];
  let logged: string[];
  const fastRetry = { retries: 1, minTimeout: 0, maxTimeout: 0 };

  function setup(options: SlackAdapterOptions = {}) {
    fake = startSlackFake();
    scratch = mkdtempSync(join(tmpdir(), "fermix-slack-"));
    waits = [];
    logged = [];
    const log = new Logger({ write: (line) => void logged.push(line) }, "debug", new Redactor());
    adapter = slackAdapter(configFor(fake), { sleep: async (ms) => void waits.push(ms), retryConfig: fastRetry, log, ...options });
  }
  afterEach(async () => {
    await adapter?.stop();
    await fake?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("replies in the conversation's thread, mrkdwn on, unfurling off; a DM without a thread gets no thread_ts", async () => {
    setup();
    const parent = userMessage(fake);
    await adapter.replyPort({ chatId: SLACK_CHANNEL, threadId: parent }).sendText(text("*done*"));
    await adapter.replyPort({ chatId: SLACK_DM }).sendText(text("in the DM"));
    const [threaded, direct] = fake.calls("chat.postMessage");
    expect(threaded!.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(threaded!.body).toMatchObject({
      channel: SLACK_CHANNEL,
      text: "*done*",
      thread_ts: parent,
      mrkdwn: "true",
      unfurl_links: "false",
      unfurl_media: "false",
    });
    expect(fake.visibleTexts(SLACK_CHANNEL, parent)).toEqual(["*done*"]);
    expect(direct!.body.thread_ts).toBeUndefined();
    expect(direct!.body).toMatchObject({ channel: SLACK_DM, unfurl_links: "false", unfurl_media: "false" });
  });

  test("plain text (the formatting fallback) goes with mrkdwn off and Slack's control characters escaped", async () => {
    setup();
    await adapter.replyPort({ chatId: SLACK_DM }).sendText(text("a < b & *c*", true));
    expect(fake.calls("chat.postMessage")[0]!.body).toMatchObject({ text: "a &lt; b &amp; *c*", mrkdwn: "false" });
  });

  test("edits and deletes address the message by ts; a too-long edit is a FormattingRejected", async () => {
    setup();
    const port = adapter.replyPort({ chatId: SLACK_DM });
    const sent = await port.sendText(text("draft"));
    await port.editText(sent, text("final"));
    expect(fake.calls("chat.update")[0]!.body).toMatchObject({ channel: SLACK_DM, ts: sent.id, text: "final" });
    fake.failNext("chat.update", "msg_too_long");
    await expect(port.editText(sent, text("x".repeat(10)))).rejects.toBeInstanceOf(FormattingRejected);
    fake.failNext("chat.postMessage", "invalid_blocks");
    await expect(port.sendText(text("y"))).rejects.toBeInstanceOf(FormattingRejected);
    await port.deleteMessage(sent);
    expect(fake.visibleTexts(SLACK_DM)).toEqual([]);
  });

  test("other refusals are a typed SlackApiError naming Slack's code, not a formatting problem", async () => {
    setup();
    fake.failNext("chat.postMessage", "channel_not_found");
    const error = await adapter
      .replyPort({ chatId: "C404" })
      .sendText(text("hi"))
      .catch((e) => e);
    expect(error).toBeInstanceOf(SlackApiError);
    expect(error).not.toBeInstanceOf(FormattingRejected);
    expect((error as SlackApiError).code).toBe("channel_not_found");
    expect((error as Error).message).toContain("channel_not_found");
  });

  test("reactions use shortcode names only: offered as a list, emoji and :colons: normalized, anything else refused", async () => {
    setup();
    const names = adapter.capabilities.react as string[];
    expect(names.length).toBeGreaterThanOrEqual(25);
    for (const name of ["thumbsup", "eyes", "white_check_mark", "heart", "tada"]) expect(names).toContain(name);
    expect(names.every((n) => /^[a-z0-9_+-]+$/.test(n))).toBe(true);
    expect(slackReactionName(":eyes:")).toBe("eyes");
    expect(slackReactionName("👍")).toBe("thumbsup");
    expect(slackReactionName("❤")).toBe("heart");
    expect(slackReactionName("🦜🦜")).toBeUndefined();

    const parent = userMessage(fake);
    const port = adapter.replyPort({ chatId: SLACK_CHANNEL, threadId: parent, replyTo: parent });
    await port.react(parent, "👍");
    await port.react(parent, ":eyes:");
    await port.react(parent, "eyes"); // already_reacted counts as done
    expect(fake.calls("reactions.add").map((r) => r.body.name)).toEqual(["thumbsup", "eyes", "eyes"]);
    expect(fake.messages(SLACK_CHANNEL).find((m) => m.ts === parent)!.reactions).toEqual(["thumbsup", "eyes"]);
    await expect(port.react(parent, "not an emoji!")).rejects.toThrow("shortcode");
    expect(fake.calls("reactions.add")).toHaveLength(3);
  });

  test("a file goes through files.uploadV2 into the thread with its caption as initial_comment", async () => {
    setup();
    const parent = userMessage(fake);
    const path = join(scratch, "report.csv");
    writeFileSync(path, "a,b\n1,2\n");
    const sent = await adapter
      .replyPort({ chatId: SLACK_CHANNEL, threadId: parent })
      .sendMedia({ kind: "document", path, filename: "report.csv", mime: "text/csv", caption: "numbers <here>", notify: false });
    expect(sent.id).toMatch(/^F/);
    expect(fake.calls("files.getUploadURLExternal")[0]!.body).toMatchObject({ filename: "report.csv", length: "8" });
    const upload = fake.calls("upload")[0]!;
    expect(upload.files.map((f) => [f.field, f.size])).toEqual([["body", 8]]);
    expect(fake.calls("files.completeUploadExternal")[0]!.body).toMatchObject({
      channel_id: SLACK_CHANNEL,
      thread_ts: parent,
      initial_comment: "numbers &lt;here&gt;",
    });
    const shared = fake.messages(SLACK_CHANNEL, parent).find((m) => m.files);
    expect(shared?.text).toBe("numbers &lt;here&gt;");
    expect(shared?.files?.[0]?.name).toBe("report.csv");
  });

  test("a 429 is waited out for its Retry-After and the call goes through; a Retry-After past the cap fails fast", async () => {
    setup();
    const port = adapter.replyPort({ chatId: SLACK_DM });
    fake.rateLimitNext("chat.postMessage", 2);
    const sent = await port.sendText(text("after the pause"));
    expect(sent.id).toBeTruthy();
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits[0]).toBeGreaterThan(1_500);
    expect(waits[0]).toBeLessThanOrEqual(2_000);
    expect(fake.calls("chat.postMessage").map((r) => r.status)).toEqual([429, 200]);
    expect(logged.some((l) => l.includes("slack rate limited"))).toBe(true);

    waits.length = 0;
    fake.rateLimitNext("chat.postMessage", 3600);
    const error = await port.sendText(text("never")).catch((e) => e);
    expect(error).toBeInstanceOf(SlackApiError);
    expect((error as SlackApiError).code).toBe("ratelimited");
    expect(waits.every((ms) => ms < 60_000)).toBe(true);
  });

  test("the client's retry policy is configured, not disabled: a failed upload POST is retried", async () => {
    expect(SLACK_RETRY_POLICY.retries).toBeGreaterThan(0);
    setup();
    fake.failUploadNext(500, 1);
    const path = join(scratch, "a.txt");
    writeFileSync(path, "hello");
    await adapter.replyPort({ chatId: SLACK_DM }).sendMedia({ kind: "document", path, filename: "a.txt", mime: "text/plain", notify: false });
    expect(fake.calls("upload").map((r) => r.status)).toEqual([500, 200]);
    expect(fake.calls("files.completeUploadExternal")).toHaveLength(1);
  });

  test("fetchMedia downloads url_private with the bot token; other hosts never see it; the cap holds while streaming", async () => {
    setup();
    const file = fake.addFile({ name: "photo.jpg", bytes: "jpeg bytes", mimetype: "image/jpeg" });
    const fetched = await adapter.fetchMedia({ kind: "image", mime: "image/jpeg", filename: "photo.jpg", ref: file.url_private });
    expect(new TextDecoder().decode(fetched.bytes)).toBe("jpeg bytes");
    expect(fetched).toMatchObject({ mime: "image/jpeg", filename: "photo.jpg" });
    expect(fake.calls("files-pri")[0]!.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(adapter.inboundMediaCap).toBe(100 * 1024 * 1024);

    await expect(adapter.fetchMedia({ kind: "image", ref: "https://files.example.org/steal" })).rejects.toThrow("refusing to send the Slack bot token");
    const api = new SlackApi({ token: fake.token, apiUrl: fake.apiUrl });
    await expect(api.download(file.url_private, 4)).rejects.toBeInstanceOf(MediaTooLarge);
  });

  test("a download redirected to another host follows without the token", async () => {
    const seen: Array<string | null> = [];
    const cdn = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => {
        seen.push(req.headers.get("authorization"));
        return new Response("cdn bytes");
      },
    });
    const slackish = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => {
        seen.push(req.headers.get("authorization"));
        return Response.redirect(`http://localhost:${cdn.port}/f`, 302);
      },
    });
    try {
      const api = new SlackApi({ token: "xoxb-redirect-test-token", apiUrl: `http://127.0.0.1:${slackish.port}/api/` });
      const { bytes } = await api.download(`http://127.0.0.1:${slackish.port}/files-pri/T1-F1/a.txt`, 1024);
      expect(new TextDecoder().decode(bytes)).toBe("cdn bytes");
      expect(seen).toEqual(["Bearer xoxb-redirect-test-token", null]);
    } finally {
      await Promise.all([cdn.stop(true), slackish.stop(true)]);
    }
  });

  test("no token in any error message or log line", async () => {
    setup({ retryConfig: { retries: 0 } });
    const port = adapter.replyPort({ chatId: SLACK_DM });
    const errors: unknown[] = [];
    fake.failNext("chat.postMessage", "invalid_auth");
    errors.push(await port.sendText(text("x")).catch((e) => e));
    fake.failUploadNext(500, 1);
    const path = join(scratch, "b.txt");
    writeFileSync(path, "hello");
    errors.push(await port.sendMedia({ kind: "document", path, filename: "b.txt", mime: "text/plain", notify: false }).catch((e) => e));
    fake.rateLimitNext("chat.postMessage", 1);
    await port.sendText(text("y"));
    errors.push(await adapter.fetchMedia({ kind: "document", ref: `${fake.url}/files-pri/${fake.teamId}-F0NOSUCH00/none.txt` }).catch((e) => e));
    expect(errors.every((e) => e instanceof Error)).toBe(true);
    for (const e of errors) expect(String((e as Error).message)).not.toContain(fake.token);
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) expect(line).not.toContain(fake.token);
  });

  test("state: a webhook channel is ready and alive while running, and typing is not claimed", async () => {
    setup();
    expect(adapter.state().process_alive).toBe(false);
    const log = new Logger({ write: () => {} }, "info", new Redactor());
    await adapter.start({ log } as unknown as AdapterContext);
    expect(adapter.state()).toEqual({ status: "ready", process_alive: true });
    expect(adapter.capabilities).toMatchObject({ edit: true, delete: true, media: true, typing: false });
    await adapter.stop();
    expect(adapter.state().process_alive).toBe(false);
  });
});
