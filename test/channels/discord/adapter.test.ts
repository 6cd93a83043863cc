/**
 * The Discord adapter against the loopback Discord fake: the adapter
 * contract, then what is Discord's own — messages in through the gateway and
 * the durable inbox, replies out over REST with their flags, mentions and
 * quotes, threads, attachments both ways, rate limits, health, durability.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatewayOpcodes, MessageFlags } from "discord-api-types/v10";
import { DiscordApiError } from "../../../src/channels/discord/api.ts";
import { DiscordAdapter, type DiscordAdapterOptions } from "../../../src/channels/discord/index.ts";
import { DISCORD_MEDIA_CAP } from "../../../src/channels/discord/outbound.ts";
import { discordProfile } from "../../../src/channels/discord/profile.ts";
import { learntBotIdKey } from "../../../src/channels/discord/session.ts";
import { MediaTooLarge } from "../../../src/channels/net.ts";
import { HandoffUnavailable, type OutboundText, type ReplyTarget } from "../../../src/message/index.ts";
import { deliverReply } from "../../../src/present/index.ts";
import { runAdapterContract } from "../../contract/adapter.contract.ts";
import {
  DISCORD_ALICE,
  DISCORD_BOB,
  DISCORD_BOT,
  DISCORD_CHANNEL,
  DISCORD_DM,
  DISCORD_GUILD,
  DISCORD_OTHER_BOT,
  DISCORD_THREAD,
  type DiscordFake,
  mention,
  startDiscordFake,
} from "../../fakes/discord.ts";
import { configFor, eventually, makeContext, recordingSleep, type TestContext, virtualClock } from "./harness.ts";

const INVALID_CONTENT = {
  message: "Invalid Form Body",
  code: 50035,
  errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } },
};

runAdapterContract("discord", async () => {
  const fake = startDiscordFake();
  const adapter = new DiscordAdapter(configFor(fake));
  const userMessage = fake.ids.next();
  fake.rest.addUserMessage(userMessage, DISCORD_CHANNEL, DISCORD_ALICE.id, "hello there");
  return {
    adapter,
    target: { chatId: DISCORD_CHANNEL, replyTo: userMessage },
    inboundMessageId: userMessage,
    boldHi: "**hi**",
    visible: async () => fake.visible(DISCORD_CHANNEL).map((m) => ({ text: m.content, notified: (m.flags & MessageFlags.SuppressNotifications) === 0 })),
    sentMedia: async () => fake.botMessages(DISCORD_CHANNEL).flatMap((m) => m.files.map((f) => ({ filename: f.filename, size: f.size }))),
    rejectFormattingNext: () => fake.rest.faults.add("messages.create", { status: 400, body: INVALID_CONTENT }),
    serverErrorNext: () => fake.rest.faults.add("messages.create", { status: 502, body: { message: "502: Bad Gateway", code: 0 } }),
    inboundMedia: async (bytes, mime) => {
      const attachment = fake.attachment("inbound.png", bytes, mime, DISCORD_CHANNEL);
      return { kind: "image", mime, declaredSize: attachment.size, filename: attachment.filename, ref: attachment.url };
    },
    reaction: "👍",
    hasReaction: async (id, emoji) => fake.message(id)?.reactions.includes(emoji) ?? false,
    documentCap: DISCORD_MEDIA_CAP,
    stop: async () => {
      await adapter.stop();
      await fake.stop();
    },
  };
});

const text = (t: string, notify = true, plain = false): OutboundText => ({ text: t, notify, linkPreview: false, plain });
/** After the adapter stopped for good: a reconnect that should not happen would open a connection well within this window. */
const NO_RECONNECT_MS = 150;

describe("discord adapter", () => {
  let fake: DiscordFake;
  let adapter: DiscordAdapter;
  let ctx: TestContext;
  let scratch: string;

  /** A started adapter (unless `start` is false) on a fresh database, connected to a fresh fake. */
  async function setup(options: DiscordAdapterOptions = {}, config: Record<string, string> = {}, start = true) {
    fake = startDiscordFake();
    scratch = mkdtempSync(join(tmpdir(), "fermix-discord-out-"));
    const cfg = configFor(fake, config);
    adapter = new DiscordAdapter(cfg, { random: () => 0.5, ...options });
    ctx = makeContext(cfg);
    if (start) {
      await adapter.start(ctx.context);
      await fake.gateway.waitForLive();
      await eventually(() => adapter.state().status === "ready", 2000, "ready");
    }
  }
  afterEach(async () => {
    await adapter?.stop();
    await fake?.stop();
    ctx?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const submittedTexts = () => ctx.submitted.map((s) => s.message.text);

  describe("inbound", () => {
    test("a DM reaches the gateway: the user's snowflake as sender, the DM channel as chat, the message id as key", async () => {
      await setup();
      const id = fake.userMessage("hello fermix");
      await eventually(() => ctx.ingested.length === 1, 2000, "ingested");
      expect(ctx.submitted[0]!.key).toBe(id);
      expect(ctx.ingested[0]).toMatchObject({
        channel: "discord",
        chatId: DISCORD_DM,
        senderId: DISCORD_ALICE.id,
        senderName: "Alice",
        messageId: id,
        text: "hello fermix",
        media: [],
      });
      expect(ctx.ingested[0]!.threadId).toBeUndefined();
    });

    test("in a guild channel only a mention or a reply to the bot gets through; bots and the bot itself never do", async () => {
      await setup();
      fake.userMessage("hello everyone", { guildId: DISCORD_GUILD });
      fake.userMessage(`${mention()} what's the weather?`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] });
      const botMessage = fake.ids.next();
      fake.userMessage("and tomorrow?", { guildId: DISCORD_GUILD, replyTo: { id: botMessage, author: DISCORD_BOT, content: "Sunny." } });
      fake.userMessage("replying to Bob", { guildId: DISCORD_GUILD, replyTo: { id: fake.ids.next(), author: DISCORD_BOB } });
      fake.userMessage(`${mention()} beep`, { guildId: DISCORD_GUILD, author: DISCORD_OTHER_BOT, mentions: [DISCORD_BOT] });
      fake.userMessage("echo", { author: DISCORD_BOT });
      fake.userMessage("the last one", {});
      await eventually(() => submittedTexts().includes("the last one"), 2000, "the last DM");
      expect(submittedTexts()).toEqual(["what's the weather?", "and tomorrow?", "the last one"]);
      expect(ctx.submitted[0]!.message.chatId).toBe(DISCORD_CHANNEL);
    });

    test("without bot_user_id configured, the id from READY decides what mentions the bot, and is remembered for doctor", async () => {
      await setup();
      expect(adapter.botUserId()).toBe(DISCORD_BOT.id);
      const row = ctx.db.query("SELECT value FROM settings WHERE key = ?1").get(learntBotIdKey(fake.token)) as { value: string } | null;
      expect(row?.value).toBe(DISCORD_BOT.id);
      fake.userMessage(`hey <@!${DISCORD_BOT.id}>  status?`, { guildId: DISCORD_GUILD });
      await eventually(() => ctx.submitted.length === 1, 2000, "submitted");
      expect(ctx.submitted[0]!.message.text).toBe("hey status?");
    });

    test("a thread is a conversation of its own under its channel, and replies go into the thread", async () => {
      await setup();
      fake.userMessage(`${mention()} in the thread`, { guildId: DISCORD_GUILD, channelId: DISCORD_THREAD, mentions: [DISCORD_BOT] });
      await eventually(() => ctx.ingested.length === 1, 2000, "ingested");
      const message = ctx.ingested[0]!;
      expect(message).toMatchObject({ chatId: DISCORD_CHANNEL, threadId: DISCORD_THREAD, text: "in the thread" });
      await adapter.replyPort({ chatId: message.chatId, threadId: message.threadId!, replyTo: message.messageId }).sendText(text("thread answer"));
      expect(fake.visibleTexts(DISCORD_THREAD)).toEqual(["thread answer"]);
      expect(fake.visibleTexts(DISCORD_CHANNEL)).toEqual([]);
      expect(fake.botMessages(DISCORD_THREAD)[0]!.messageReference).toMatchObject({ message_id: message.messageId, channel_id: DISCORD_THREAD });
    });

    test("an attachment comes in as media with its declared size, downloaded from the CDN without the token; over the cap it is refused unread", async () => {
      await setup();
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4, 5, 6, 7, 8]);
      const image = fake.attachment("photo.png", png, "image/png");
      const voice = fake.attachment("voice-message.ogg", "OggS....", "audio/ogg");
      fake.userMessage("what is this?", { attachments: [image] });
      fake.userMessage("", { attachments: [voice], flags: MessageFlags.IsVoiceMessage });
      await eventually(() => ctx.ingested.length === 2, 2000, "ingested");
      const [withImage, withVoice] = ctx.ingested;
      expect(withImage!.media).toEqual([{ kind: "image", mime: "image/png", declaredSize: 12, filename: "photo.png", ref: image.url }]);
      expect(withVoice!.media[0]).toMatchObject({ kind: "voice", mime: "audio/ogg" });

      const fetched = await adapter.fetchMedia(withImage!.media[0]!);
      expect([...fetched.bytes]).toEqual([...png]);
      expect(fetched).toMatchObject({ mime: "image/png", filename: "photo.png" });
      const download = fake.calls("attachment")[0]!;
      expect(download.headers.authorization).toBeUndefined();

      const before = fake.calls("attachment").length;
      const huge = { ...withImage!.media[0]!, declaredSize: adapter.inboundMediaCap + 1 };
      await expect(adapter.fetchMedia(huge)).rejects.toBeInstanceOf(MediaTooLarge);
      expect(fake.calls("attachment")).toHaveLength(before);
    });
  });

  describe("replies", () => {
    test("DM: embeds suppressed, user mentions only, no quote; only the first message of a reply notifies", async () => {
      await setup();
      const id = fake.userMessage("hi");
      await eventually(() => ctx.ingested.length === 1, 2000, "ingested");
      const port = adapter.replyPort({ chatId: DISCORD_DM, replyTo: id });
      await port.sendText(text("first part"));
      await port.sendText(text("second part", false));
      const [first, second] = fake.calls("messages.create").map((r) => r.body);
      expect(first).toEqual({ content: "first part", flags: MessageFlags.SuppressEmbeds, allowed_mentions: { parse: ["users"], replied_user: false } });
      expect(second).toEqual({
        content: "second part",
        flags: MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications,
        allowed_mentions: { parse: ["users"], replied_user: false },
      });
      expect(fake.calls("messages.create")[0]!.headers.authorization).toBe(`Bot ${fake.token}`);
    });

    test("guild channel: the first message quotes the one it answers (and may ping its author), the rest do not; @everyone never pings", async () => {
      await setup();
      const id = fake.userMessage(`${mention()} hi`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] });
      await eventually(() => ctx.ingested.length === 1, 2000, "ingested");
      const port = adapter.replyPort({ chatId: DISCORD_CHANNEL, replyTo: id });
      await port.sendText(text("hello @everyone and @here"));
      await port.sendText(text("more", false));
      const [first, second] = fake.calls("messages.create").map((r) => r.body);
      expect(first).toEqual({
        content: "hello @everyone and @here",
        flags: MessageFlags.SuppressEmbeds,
        allowed_mentions: { parse: ["users"], replied_user: true },
        message_reference: { message_id: id, channel_id: DISCORD_CHANNEL, fail_if_not_exists: false },
      });
      expect((first!.allowed_mentions as { parse: string[] }).parse).not.toContain("everyone");
      expect((first!.allowed_mentions as { parse: string[] }).parse).not.toContain("roles");
      expect(second!.message_reference).toBeUndefined();
      expect(second!.flags).toBe(MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications);
    });

    test("a 2,500-character reply goes out as two messages within 2,000 characters; only the first notifies", async () => {
      await setup({}, {}, false);
      const paragraph = (n: number) => `Paragraph ${n}: ${"lorem ipsum dolor sit amet ".repeat(45).trim()}.`;
      const markdown = [1, 2].map(paragraph).join("\n\n");
      expect(markdown.length).toBeGreaterThan(2400);
      expect(markdown.length).toBeLessThan(2600);
      const target: ReplyTarget = { chatId: DISCORD_DM };
      await deliverReply(adapter.replyPort(target), discordProfile.text, markdown);
      const sent = fake.visible(DISCORD_DM);
      expect(sent).toHaveLength(2);
      expect(sent.every((m) => m.content.length <= 2000)).toBe(true);
      expect(sent.map((m) => m.content).join("\n\n")).toBe(markdown);
      expect(sent.map((m) => m.flags)).toEqual([MessageFlags.SuppressEmbeds, MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications]);
    });

    test("plain text (the formatting fallback) has its Markdown escaped; a content refusal is FormattingRejected", async () => {
      await setup({}, {}, false);
      const port = adapter.replyPort({ chatId: DISCORD_DM });
      await port.sendText(text("**not bold** _x_ `y`\n# not a heading", true, true));
      expect(fake.calls("messages.create")[0]!.body.content).toBe("\\*\\*not bold\\*\\* \\_x\\_ \\`y\\`\n\\# not a heading");
    });

    test("edits, deletes, typing and reactions (any one emoji; anything else refused before a request)", async () => {
      await setup();
      const id = fake.userMessage("react to me");
      await eventually(() => ctx.ingested.length === 1, 2000, "ingested");
      const port = adapter.replyPort({ chatId: DISCORD_DM, replyTo: id });
      const sent = await port.sendText(text("draft"));
      await port.editText(sent, text("final"));
      expect(fake.calls("messages.edit")[0]!.body).toEqual({ content: "final", flags: MessageFlags.SuppressEmbeds, allowed_mentions: { parse: ["users"] } });
      expect(fake.visibleTexts(DISCORD_DM)).toEqual(["final"]);
      await port.deleteMessage(sent);
      await port.deleteMessage(sent); // already gone: still fine
      expect(fake.visibleTexts(DISCORD_DM)).toEqual([]);
      await port.typing();
      expect(fake.calls("typing")[0]!.path).toBe(`/api/v10/channels/${DISCORD_DM}/typing`);
      await port.react(id, "🦜");
      await port.react(id, "🏳️‍🌈");
      expect(fake.message(id)!.reactions).toEqual(["🦜", "🏳️‍🌈"]);
      await expect(port.react(id, "ok")).rejects.toThrow("one emoji");
      await expect(port.react(id, "👍👍")).rejects.toThrow("one emoji");
      expect(fake.calls("reactions.add")).toHaveLength(2);
      expect(adapter.capabilities).toEqual({ edit: true, delete: true, react: "any", media: true, typing: true, buttons: true });
    });

    test('a file goes out as a multipart upload: payload_json with the attachment (its id the string "0", naming files[0]), files[0] with the bytes', async () => {
      await setup({}, {}, false);
      const path = join(scratch, "chart.png");
      const bytes = new Uint8Array(4096).map((_, i) => i % 251);
      writeFileSync(path, bytes);
      const sent = await adapter
        .replyPort({ chatId: DISCORD_DM })
        .sendMedia({ kind: "image", path, filename: "chart.png", mime: "image/png", caption: "the chart", notify: true });
      const call = fake.calls("messages.create")[0]!;
      expect(call.encoding).toBe("multipart");
      expect(JSON.parse(String(call.body.payload_json))).toEqual({
        flags: MessageFlags.SuppressEmbeds,
        allowed_mentions: { parse: ["users"], replied_user: false },
        attachments: [{ id: "0", filename: "chart.png" }],
        content: "the chart",
      });
      expect(call.files.map((f) => [f.field, f.filename, f.type, f.size])).toEqual([["files[0]", "chart.png", "image/png", 4096]]);
      expect([...call.files[0]!.bytes]).toEqual([...bytes]);
      expect(fake.message(sent.id)).toMatchObject({ content: "the chart", attachments: [{ filename: "chart.png", size: 4096 }] });
    });
  });

  describe("rate limits", () => {
    test("a 429 is waited out for its retry_after, then the message goes through", async () => {
      const clock = virtualClock();
      await setup(clock, {}, false);
      fake.rest.rateLimitNext("messages.create", 1.5);
      const sent = await adapter.replyPort({ chatId: DISCORD_DM }).sendText(text("after the pause"));
      expect(sent.id).toBeTruthy();
      expect(fake.calls("messages.create").map((r) => r.status)).toEqual([429, 200]);
      expect(clock.waits).toEqual([1500]);
      expect(fake.visibleTexts(DISCORD_DM)).toEqual(["after the pause"]);
    });

    test("a global 429 holds every route, not only the one refused", async () => {
      const clock = virtualClock();
      await setup(clock, {}, false);
      const port = adapter.replyPort({ chatId: DISCORD_DM });
      fake.rest.rateLimitNext("typing", 2, true);
      // Typing never waits for a limit: it gives up at once…
      await expect(port.typing()).rejects.toMatchObject({ kind: "rate_limited" });
      expect(clock.waits).toEqual([]);
      // …but the global pause it met holds a message on another route until it is over.
      await port.sendText(text("after the global pause"));
      expect(clock.waits).toEqual([2000]);
      expect(fake.calls("messages.create").map((r) => r.status)).toEqual([200]);
    });

    test("a bucket the headers say is empty is waited out before the next call on that route only", async () => {
      const clock = virtualClock();
      await setup(clock, {}, false);
      fake.rest.setBucket("messages.create", 0, 3);
      const port = adapter.replyPort({ chatId: DISCORD_DM });
      await port.sendText(text("empties the bucket"));
      await port.typing();
      expect(clock.waits).toEqual([]);
      await port.sendText(text("waits for the refill"));
      expect(clock.waits).toEqual([3000]);
      expect(fake.calls("messages.create").map((r) => r.status)).toEqual([200, 200]);
    });

    test("never a tight loop: repeated 429s give up after a few waits; a retry_after of 0 still waits", async () => {
      const clock = virtualClock();
      await setup(clock, {}, false);
      for (let i = 0; i < 6; i++) fake.rest.rateLimitNext("messages.create", 0);
      const error = await adapter
        .replyPort({ chatId: DISCORD_DM })
        .sendText(text("x"))
        .catch((e) => e);
      expect(error).toBeInstanceOf(DiscordApiError);
      expect((error as DiscordApiError).kind).toBe("rate_limited");
      expect(fake.calls("messages.create")).toHaveLength(4);
      expect(clock.waits).toEqual([250, 250, 250]);
    });

    test("a retry_after past the cap fails at once instead of holding the reply", async () => {
      const clock = virtualClock();
      await setup({ ...clock, maxRateLimitWaitMs: 10_000 }, {}, false);
      fake.rest.rateLimitNext("messages.create", 3600);
      const error = await adapter
        .replyPort({ chatId: DISCORD_DM })
        .sendText(text("x"))
        .catch((e) => e);
      expect((error as DiscordApiError).kind).toBe("rate_limited");
      expect((error as DiscordApiError).retryAfterMs).toBe(3_600_000);
      expect(clock.waits).toEqual([]);
    });

    test.each([
      [401, "unauthorized", { message: "401: Unauthorized", code: 0 }],
      [403, "forbidden", { message: "Missing Permissions", code: 50013 }],
    ] as const)("%d is never retried", async (status, kind, body) => {
      const clock = virtualClock();
      await setup(clock, {}, false);
      fake.rest.faults.add("messages.create", { status, body });
      const error = await adapter
        .replyPort({ chatId: DISCORD_DM })
        .sendText(text("x"))
        .catch((e) => e);
      expect(error).toBeInstanceOf(DiscordApiError);
      expect((error as DiscordApiError).kind).toBe(kind);
      expect((error as Error).message).toContain(String(status));
      expect(fake.calls("messages.create")).toHaveLength(1);
      expect(clock.waits).toEqual([]);
    });
  });

  describe("health and durability", () => {
    test("state: starting before the gateway is up, ready with the socket alive, failed with the reason after 4014", async () => {
      // Every wait of the gateway client held to 5 ms: a reconnect after the failure would come at once.
      await setup({ sleep: recordingSleep().sleep }, {}, false);
      expect(adapter.state()).toMatchObject({ status: "starting", process_alive: false });
      fake.gateway.messageContentAllowed = false;
      await adapter.start(ctx.context);
      await eventually(() => adapter.state().status === "failed", 3000, "failed");
      expect(adapter.state()).toEqual({
        status: "failed",
        process_alive: false,
        detail: expect.stringContaining("enable the Message Content intent for this bot in the Developer Portal"),
      });
      await Bun.sleep(NO_RECONNECT_MS);
      expect(fake.gateway.connections).toHaveLength(1);
    });

    test("a message the inbox cannot take (at capacity) is replayed by a resume and handed over once", async () => {
      await setup();
      ctx.failSubmits(new HandoffUnavailable(), 1);
      fake.userMessage("keep me");
      await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
      await eventually(() => ctx.ingested.length === 1, 3000, "ingested after the replay");
      // A later message comes in after any repeat of the first would have: only the two are there.
      fake.userMessage("and then this");
      await eventually(() => ctx.ingested.length >= 2, 3000, "the later message");
      expect(ctx.ingested.map((m) => m.text)).toEqual(["keep me", "and then this"]);
    });

    test("a restart resumes the stored session: a message sent while Fermix was down still arrives", async () => {
      await setup();
      await adapter.stop();
      const dir = (ctx as TestContext & { dir: string }).dir;
      fake.userMessage("sent during the restart");
      const again = new DiscordAdapter(configFor(fake), { random: () => 0.5 });
      const ctx2 = makeContext(configFor(fake), { dir });
      try {
        await again.start(ctx2.context);
        const resume = await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
        expect(resume.conn.path).toBe("/resume");
        await eventually(() => ctx2.ingested.length === 1, 3000, "the message after the restart");
        expect(ctx2.ingested[0]!.text).toBe("sent during the restart");
      } finally {
        await again.stop();
        ctx2.close();
      }
    });

    test("no token in any error message or log line", async () => {
      await setup();
      const port = adapter.replyPort({ chatId: DISCORD_DM });
      const errors: unknown[] = [];
      fake.rest.faults.add("messages.create", { status: 403, body: { message: `Missing Permissions for ${fake.token}`, code: 50013 } });
      errors.push(await port.sendText(text("x")).catch((e) => e));
      fake.rest.faults.add("messages.create", { status: 500, body: { message: "oops" } });
      errors.push(await port.sendText(text("y")).catch((e) => e));
      fake.rest.rateLimitNext("messages.create", 0.01);
      await port.sendText(text("z"));
      fake.gateway.drop();
      await fake.gateway.waitForFrame(GatewayOpcodes.Resume, () => true, 3000);
      expect(errors.every((e) => e instanceof DiscordApiError)).toBe(true);
      for (const e of errors) expect((e as Error).message).not.toContain(fake.token);
      expect(ctx.lines.length).toBeGreaterThan(0);
      for (const line of ctx.lines) expect(line).not.toContain(fake.token);
    });
  });
});
