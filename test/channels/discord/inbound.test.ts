/** Discord MESSAGE_CREATE → InboundMessage on data, the channel directory, and the pure gateway rules. */
import { describe, expect, test } from "bun:test";
import { ChannelType, MessageFlags, MessageType } from "discord-api-types/v10";
import { ChannelDirectory } from "../../../src/channels/discord/directory.ts";
import { parseMessageCreate, withoutMention } from "../../../src/channels/discord/inbound.ts";
import {
  closeAction,
  FERMIX_INTENTS,
  firstBeatDelay,
  helloInterval,
  invalidSessionDelay,
  parseFrame,
  reconnectDelay,
  socketUrl,
} from "../../../src/channels/discord/protocol.ts";
import { botIdOfToken } from "../../../src/channels/discord/session.ts";
import {
  DISCORD_ALICE,
  DISCORD_BOT,
  DISCORD_CHANNEL,
  DISCORD_DM,
  DISCORD_GUILD,
  DISCORD_THREAD,
  fakeBotToken,
  guildCreate,
  messageCreate,
} from "../../fakes/discord.ts";

const AT = 1_750_000_000_000;
const options = { botUserId: DISCORD_BOT.id, receivedAt: AT };

describe("parseMessageCreate", () => {
  test("a DM with text: every field of the common message", () => {
    const result = parseMessageCreate(messageCreate("1500000000000000010", "hello"), options);
    expect(result).toEqual({
      kind: "message",
      key: "1500000000000000010",
      channelId: DISCORD_DM,
      message: {
        channel: "discord",
        chatId: DISCORD_DM,
        senderId: DISCORD_ALICE.id,
        senderName: "Alice",
        messageId: "1500000000000000010",
        text: "hello",
        media: [],
        receivedAt: AT,
        direct: true,
      },
    });
    const guild = parseMessageCreate(
      messageCreate("1500000000000000011", `<@${DISCORD_BOT.id}> hi`, { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] }),
      options,
    );
    expect((guild as { message: { direct?: boolean } }).message.direct).toBe(false);
  });

  test("guild messages: a mention or a reply to the bot is addressed to it, anything else is not", () => {
    const guild = { guildId: DISCORD_GUILD };
    expect(parseMessageCreate(messageCreate("1", "hello all", guild), options)).toMatchObject({ kind: "ignored" });
    const mentioned = parseMessageCreate(messageCreate("2", `<@${DISCORD_BOT.id}> hi there`, { ...guild, mentions: [DISCORD_BOT] }), options);
    expect(mentioned).toMatchObject({ kind: "message", guildId: DISCORD_GUILD, message: { text: "hi there", chatId: DISCORD_CHANNEL } });
    const reply = parseMessageCreate(messageCreate("3", "and then?", { ...guild, replyTo: { id: "9", author: DISCORD_BOT } }), options);
    expect(reply).toMatchObject({ kind: "message", message: { text: "and then?" } });
    const replyToOther = parseMessageCreate(messageCreate("4", "and then?", { ...guild, replyTo: { id: "9", author: DISCORD_ALICE } }), options);
    expect(replyToOther).toMatchObject({ kind: "ignored" });
    // Without the bot's id nothing in a guild can be addressed to it; DMs still work.
    expect(parseMessageCreate(messageCreate("5", `<@${DISCORD_BOT.id}> hi`, guild), { receivedAt: AT })).toMatchObject({ kind: "ignored" });
    expect(parseMessageCreate(messageCreate("6", "dm"), { receivedAt: AT })).toMatchObject({ kind: "message" });
  });

  test("bots, the bot itself, webhooks and system messages are ignored", () => {
    expect(parseMessageCreate(messageCreate("1", "hi", { author: { ...DISCORD_ALICE, bot: true } }), options)).toMatchObject({
      kind: "ignored",
      why: "written by a bot",
    });
    expect(parseMessageCreate(messageCreate("2", "hi", { author: { ...DISCORD_BOT, bot: false } }), options)).toMatchObject({
      kind: "ignored",
      why: "the bot's own message",
    });
    expect(parseMessageCreate(messageCreate("3", "hi", { webhookId: "77" }), options)).toMatchObject({ kind: "ignored" });
    expect(parseMessageCreate(messageCreate("4", "", { type: MessageType.ChannelPinnedMessage }), options)).toMatchObject({ kind: "ignored" });
    expect(parseMessageCreate(messageCreate("5", "", { type: MessageType.UserJoin }), options)).toMatchObject({ kind: "ignored" });
  });

  test("a thread message belongs to the thread's conversation when the thread is known", () => {
    const d = messageCreate("1", `<@${DISCORD_BOT.id}> in a thread`, { guildId: DISCORD_GUILD, channelId: DISCORD_THREAD, mentions: [DISCORD_BOT] });
    const known = parseMessageCreate(d, { ...options, threadParent: (c) => (c === DISCORD_THREAD ? DISCORD_CHANNEL : undefined) });
    expect(known).toMatchObject({ kind: "message", channelId: DISCORD_THREAD, message: { chatId: DISCORD_CHANNEL, threadId: DISCORD_THREAD } });
    const unknown = parseMessageCreate(d, options);
    expect(unknown).toMatchObject({ kind: "message", message: { chatId: DISCORD_THREAD } });
    expect((unknown as { message: { threadId?: string } }).message.threadId).toBeUndefined();
  });

  test("attachments: media kind by content type (voice messages flagged), declared size, filename, CDN URL as ref", () => {
    const attachment = (id: string, filename: string, size: number, content_type?: string) => ({
      id,
      filename,
      size,
      url: `https://cdn.discordapp.com/attachments/${DISCORD_DM}/${id}/${filename}?ex=1`,
      proxy_url: "https://media.discordapp.net/x",
      ...(content_type ? { content_type } : {}),
    });
    const d = messageCreate("1", "look", {
      attachments: [
        attachment("11", "a.png", 100, "image/png"),
        attachment("12", "b.mp3", 200, "audio/mpeg"),
        attachment("13", "c.mp4", 300, "video/mp4"),
        attachment("14", "d.pdf", 400, "application/pdf"),
        attachment("15", "e.bin", 500),
      ],
    });
    const result = parseMessageCreate(d, options) as Extract<ReturnType<typeof parseMessageCreate>, { kind: "message" }>;
    expect(result.message.media.map((m) => [m.kind, m.mime, m.declaredSize, m.filename])).toEqual([
      ["image", "image/png", 100, "a.png"],
      ["audio", "audio/mpeg", 200, "b.mp3"],
      ["video", "video/mp4", 300, "c.mp4"],
      ["document", "application/pdf", 400, "d.pdf"],
      ["document", undefined, 500, "e.bin"],
    ]);
    expect(result.message.media[0]!.ref).toContain("cdn.discordapp.com/attachments/");
    const voice = parseMessageCreate(
      messageCreate("2", "", { attachments: [attachment("21", "voice-message.ogg", 9, "audio/ogg")], flags: MessageFlags.IsVoiceMessage }),
      options,
    );
    expect((voice as { message: { media: Array<{ kind: string }> } }).message.media[0]!.kind).toBe("voice");
    // A voice message whose attachment came without a content type is still one (Discord records them as OGG Opus).
    const untyped = parseMessageCreate(
      messageCreate("3", "", { attachments: [attachment("31", "voice-message.ogg", 9)], flags: MessageFlags.IsVoiceMessage }),
      options,
    );
    expect((untyped as { message: { media: Array<{ kind: string; mime?: string }> } }).message.media[0]).toMatchObject({ kind: "voice", mime: "audio/ogg" });
  });

  test("what is not a MESSAGE_CREATE is invalid, not a throw", () => {
    for (const d of [null, 1, "x", [], {}, { id: "1" }, { ...messageCreate("1", "x"), author: null }, { ...messageCreate("1", "x"), id: "not-a-snowflake" }]) {
      expect(parseMessageCreate(d, options)).toEqual({ kind: "invalid" });
    }
  });

  test("withoutMention takes out both mention spellings and tidies spaces", () => {
    expect(withoutMention(`<@${DISCORD_BOT.id}> hi  <@!${DISCORD_BOT.id}> there`, DISCORD_BOT.id)).toBe("hi there");
    expect(withoutMention(`ask <@${DISCORD_ALICE.id}>`, DISCORD_BOT.id)).toBe(`ask <@${DISCORD_ALICE.id}>`);
  });
});

describe("ChannelDirectory", () => {
  test("learns threads from GUILD_CREATE and THREAD_* events, and DMs from messages", () => {
    const directory = new ChannelDirectory();
    directory.guildCreate(guildCreate());
    expect(directory.threadParent(DISCORD_THREAD)).toBe(DISCORD_CHANNEL);
    directory.thread({ id: "1700", type: ChannelType.PrivateThread, parent_id: DISCORD_CHANNEL });
    directory.thread({ id: "1701", type: ChannelType.GuildText, parent_id: "999" });
    expect(directory.threadParent("1700")).toBe(DISCORD_CHANNEL);
    expect(directory.threadParent("1701")).toBeUndefined();
    directory.threadListSync({ threads: [{ id: "1702", type: ChannelType.PublicThread, parent_id: "42" }] });
    expect(directory.threadParent("1702")).toBe("42");
    directory.threadDelete({ id: "1700" });
    expect(directory.threadParent("1700")).toBeUndefined();
    for (const junk of [null, 3, "x", { threads: "no" }]) directory.guildCreate(junk);
    expect(directory.isDirect(DISCORD_DM)).toBe(false);
    directory.markDirect(DISCORD_DM);
    expect(directory.isDirect(DISCORD_DM)).toBe(true);
  });
});

describe("gateway rules", () => {
  test("intents: Guilds, GuildMessages, DirectMessages, MessageContent", () => {
    expect(FERMIX_INTENTS).toBe(37377);
  });

  test("the close-code table", () => {
    for (const code of [4000, 4002, 4008, 1006, 1011, 4999]) expect(closeAction(code)).toEqual({ kind: "resume" });
    for (const code of [4001, 4003, 4005, 4007, 4009]) expect(closeAction(code)).toEqual({ kind: "identify" });
    for (const code of [4004, 4010, 4011, 4012, 4013, 4014]) expect(closeAction(code).kind).toBe("stop");
    expect((closeAction(4014) as { reason: string }).reason).toContain("enable the Message Content intent for this bot in the Developer Portal");
  });

  test("waits: jittered first beat, 1–5 s after op 9, backoff capped", () => {
    expect(firstBeatDelay(41_250, () => 0)).toBe(0);
    expect(firstBeatDelay(41_250, () => 0.5)).toBe(20_625);
    expect(firstBeatDelay(41_250, () => 1)).toBeLessThan(41_250);
    expect(invalidSessionDelay(() => 0)).toBe(1000);
    expect(invalidSessionDelay(() => 0.9999)).toBeLessThanOrEqual(5000);
    const backoff = { baseMs: 1000, maxMs: 60_000 };
    expect(reconnectDelay(0, backoff, () => 0)).toBe(0);
    expect(reconnectDelay(1, backoff, () => 0)).toBe(1000);
    expect(reconnectDelay(1, backoff, () => 0.9999)).toBeLessThanOrEqual(2000);
    expect(reconnectDelay(40, backoff, () => 0.9999)).toBeLessThanOrEqual(60_000);
    expect(reconnectDelay(40, backoff, () => 0)).toBe(30_000);
    expect(reconnectDelay(3, backoff, () => Number.NaN)).toBe(4000);
  });

  test("socket URL and frames", () => {
    expect(socketUrl("wss://gateway.discord.gg")).toBe("wss://gateway.discord.gg/?v=10&encoding=json");
    expect(socketUrl("wss://gateway-us-east1-b.discord.gg/")).toBe("wss://gateway-us-east1-b.discord.gg/?v=10&encoding=json");
    expect(parseFrame('{"op":0,"d":{},"s":3,"t":"MESSAGE_CREATE"}')).toEqual({ op: 0, d: {}, s: 3, t: "MESSAGE_CREATE" });
    expect(parseFrame('{"op":11}')).toEqual({ op: 11, d: undefined, s: null, t: null });
    for (const junk of ["", "nope", "[]", "null", '{"op":"1"}', '{"op":1.5}', new Uint8Array(2)]) expect(parseFrame(junk)).toBeNull();
    expect(helloInterval({ heartbeat_interval: 41_250 })).toBe(41_250);
    for (const bad of [null, {}, { heartbeat_interval: 0 }, { heartbeat_interval: -1 }, { heartbeat_interval: "1" }, { heartbeat_interval: 1e12 }]) {
      expect(helloInterval(bad)).toBeNull();
    }
  });

  test("a bot token spells the bot's id in its first segment", () => {
    expect(botIdOfToken(fakeBotToken())).toBe(DISCORD_BOT.id);
    expect(botIdOfToken("not-a-token")).toBeUndefined();
    expect(botIdOfToken("")).toBeUndefined();
  });
});
