import { expect, test } from "bun:test";
import * as Discord from "discord-api-types/v10";
import * as wire from "../../../src/channels/discord/wire.ts";

// The adapter's own copies of Discord's numbers must be the library's, member by member.
const ENUMS = [
  "GatewayOpcodes",
  "GatewayCloseCodes",
  "GatewayIntentBits",
  "ChannelType",
  "MessageType",
  "MessageFlags",
  "ComponentType",
  "ButtonStyle",
  "InteractionType",
  "InteractionResponseType",
  "AllowedMentionsTypes",
  "RESTJSONErrorCodes",
] as const;

test.each(ENUMS)("%s: every member the adapter names has the library's value", (name) => {
  const ours = wire[name] as Record<string, unknown>;
  const theirs = Discord[name] as unknown as Record<string, unknown>;
  expect(Object.keys(ours).length).toBeGreaterThan(0);
  for (const [member, value] of Object.entries(ours)) expect([member, value]).toEqual([member, theirs[member]]);
});

test("the gateway version and each REST path are the library's", () => {
  expect(wire.GatewayVersion).toBe(Discord.GatewayVersion);
  const [channel, message, interaction] = ["111", "222", "333"];
  const emoji = encodeURIComponent("👍");
  expect(wire.Routes.gatewayBot()).toBe(Discord.Routes.gatewayBot());
  expect(wire.Routes.channelMessages(channel)).toBe(Discord.Routes.channelMessages(channel));
  expect(wire.Routes.channelMessage(channel, message)).toBe(Discord.Routes.channelMessage(channel, message));
  expect(wire.Routes.channelMessageOwnReaction(channel, message, emoji)).toBe(Discord.Routes.channelMessageOwnReaction(channel, message, emoji));
  expect(wire.Routes.channelTyping(channel)).toBe(Discord.Routes.channelTyping(channel));
  expect(wire.Routes.interactionCallback(interaction, "tok")).toBe(Discord.Routes.interactionCallback(interaction, "tok"));
});
