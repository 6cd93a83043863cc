/** Discord INTERACTION_CREATE → ButtonPress, and a press's answer → the interaction callback, on data; fuzzed. */
import { describe, expect, test } from "bun:test";
import { type APIMessage, InteractionResponseType, InteractionType, MessageFlags } from "discord-api-types/v10";
import { ChannelDirectory } from "../../../src/channels/discord/directory.ts";
import { type InteractionParseResult, parseInteraction, pressCallback } from "../../../src/channels/discord/interaction.ts";
import {
  DISCORD_ALICE,
  DISCORD_BOB,
  DISCORD_CHANNEL,
  DISCORD_DM,
  DISCORD_GUILD,
  DISCORD_THREAD,
  type FakeInteraction,
  guildCreate,
  interactionCreate,
} from "../../fakes/discord.ts";
import { mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";

const message = (id: string, channelId: string, content = "🔐 Access request") =>
  ({ id, channel_id: channelId, content, components: [] }) as unknown as APIMessage;

function press(o: { channelId: string; guildId?: string; user?: FakeInteraction["user"]; customId?: string }) {
  const i: FakeInteraction = {
    id: "1700000000000000001",
    token: "aW50ZXJhY3Rpb24token",
    messageId: "1500000000000000099",
    channelId: o.channelId,
    user: o.user ?? DISCORD_ALICE,
    customId: o.customId ?? "fx:ok:ABCD2345",
    createdAt: 0,
    ...(o.guildId ? { guildId: o.guildId } : {}),
  };
  return interactionCreate(i, message(i.messageId, i.channelId));
}

describe("parseInteraction", () => {
  test("a DM press: the presser is `user`, the chat the DM channel, direct", () => {
    expect(parseInteraction(press({ channelId: DISCORD_DM }))).toEqual({
      kind: "press",
      interaction: { id: "1700000000000000001", token: "aW50ZXJhY3Rpb24token" },
      press: { channel: "discord", chatId: DISCORD_DM, senderId: DISCORD_ALICE.id, messageId: "1500000000000000099", data: "fx:ok:ABCD2345", direct: true },
      channelId: DISCORD_DM,
      content: "🔐 Access request",
    });
  });

  test("a guild press: the presser is `member.user`, not direct", () => {
    const result = parseInteraction(press({ channelId: DISCORD_CHANNEL, guildId: DISCORD_GUILD, user: DISCORD_BOB, customId: "fx:no:ABCD2345" }));
    expect(result).toMatchObject({ kind: "press", press: { chatId: DISCORD_CHANNEL, senderId: DISCORD_BOB.id, data: "fx:no:ABCD2345", direct: false } });
    expect((result as { press: { threadId?: string } }).press.threadId).toBeUndefined();
  });

  test("a thread press belongs to the thread's conversation: known from the directory, or from the interaction's own channel", () => {
    const directory = new ChannelDirectory();
    directory.guildCreate(guildCreate());
    const d = press({ channelId: DISCORD_THREAD, guildId: DISCORD_GUILD });
    for (const options of [{ threadParent: (c: string) => directory.threadParent(c) }, {}]) {
      expect(parseInteraction(d, options)).toMatchObject({
        kind: "press",
        press: { chatId: DISCORD_CHANNEL, threadId: DISCORD_THREAD },
        channelId: DISCORD_THREAD,
      });
    }
  });

  test("anything but a button press is acknowledged and ignored; what is not an interaction is invalid", () => {
    const base = press({ channelId: DISCORD_DM }) as unknown as Record<string, unknown>;
    expect(parseInteraction({ ...base, type: InteractionType.ApplicationCommand })).toMatchObject({ kind: "ignored", interaction: { id: base.id } });
    expect(parseInteraction({ ...base, data: { custom_id: "menu", component_type: 3, values: ["a"] } })).toMatchObject({
      kind: "ignored",
      why: "component type 3",
    });
    expect(parseInteraction({ ...base, message: undefined })).toMatchObject({ kind: "ignored" });
    expect(parseInteraction({ ...base, user: undefined })).toMatchObject({ kind: "ignored", why: "a press without its presser" });
    for (const junk of [null, 42, "INTERACTION_CREATE", {}, { id: "x", type: 3, token: "t" }, { ...base, token: "" }]) {
      expect(parseInteraction(junk)).toEqual({ kind: "invalid" });
    }
  });
});

describe("pressCallback", () => {
  test("while the buttons serve: an ephemeral reply to the presser", () => {
    expect(pressCallback({ done: false, text: "That code is not yours to answer." }, "prompt")).toEqual({
      type: InteractionResponseType.ChannelMessageWithSource,
      data: { content: "That code is not yours to answer.", flags: MessageFlags.Ephemeral },
    });
  });

  test("once served: the message updated, buttons off, the outcome under the prompt — left alone when that would not fit", () => {
    expect(pressCallback({ done: true, text: "Approved." }, "prompt")).toEqual({
      type: InteractionResponseType.UpdateMessage,
      data: { components: [], content: "prompt\n\nApproved." },
    });
    expect(pressCallback({ done: true, text: "Approved." })).toEqual({ type: InteractionResponseType.UpdateMessage, data: { components: [] } });
    expect(pressCallback({ done: true, text: "Approved." }, "x".repeat(1995))).toEqual({
      type: InteractionResponseType.UpdateMessage,
      data: { components: [] },
    });
  });
});

test("10,000 random and mutated INTERACTION_CREATE payloads never throw, and a press always has its ids", () => {
  const r = rng(0x1a7e);
  const seeds = [
    press({ channelId: DISCORD_DM }),
    press({ channelId: DISCORD_CHANNEL, guildId: DISCORD_GUILD }),
    press({ channelId: DISCORD_THREAD, guildId: DISCORD_GUILD }),
  ];
  const kinds: Record<string, number> = {};
  for (let i = 0; i < 10_000; i++) {
    const input = i % 3 === 0 ? randomJson(r) : mutateJson(r, r.pick(seeds));
    let result: InteractionParseResult;
    try {
      result = parseInteraction(input, { threadParent: () => undefined });
    } catch (error) {
      throw new Error(`run ${i}: threw ${error}: ${JSON.stringify(input)}`);
    }
    kinds[result.kind] = (kinds[result.kind] ?? 0) + 1;
    if (result.kind !== "press") continue;
    for (const key of ["chatId", "senderId", "messageId", "data"] as const) {
      if (typeof result.press[key] !== "string" || result.press[key] === "") throw new Error(`run ${i}: press without ${key}: ${JSON.stringify(input)}`);
    }
    if (!result.interaction.token || !result.interaction.id) throw new Error(`run ${i}: a press without its interaction`);
  }
  expect(Object.keys(kinds).sort()).toEqual(["ignored", "invalid", "press"]);
});
