import { expect, test } from "bun:test";
import * as Discord from "discord-api-types/v10";
import * as wire from "../../../src/channels/discord/wire.ts";

// The adapter's own copies of Discord's numbers must be the library's, member by member.
const ENUMS: Array<[string, object, object]> = [
  ["GatewayOpcodes", wire.GatewayOpcodes, Discord.GatewayOpcodes],
  ["GatewayCloseCodes", wire.GatewayCloseCodes, Discord.GatewayCloseCodes],
  ["GatewayIntentBits", wire.GatewayIntentBits, Discord.GatewayIntentBits],
  ["ChannelType", wire.ChannelType, Discord.ChannelType],
  ["MessageType", wire.MessageType, Discord.MessageType],
  ["MessageFlags", wire.MessageFlags, Discord.MessageFlags],
  ["ComponentType", wire.ComponentType, Discord.ComponentType],
  ["ButtonStyle", wire.ButtonStyle, Discord.ButtonStyle],
  ["InteractionType", wire.InteractionType, Discord.InteractionType],
  ["InteractionResponseType", wire.InteractionResponseType, Discord.InteractionResponseType],
  ["AllowedMentionsTypes", wire.AllowedMentionsTypes, Discord.AllowedMentionsTypes],
  ["RESTJSONErrorCodes", wire.RESTJSONErrorCodes, Discord.RESTJSONErrorCodes],
];

test.each(ENUMS)("%s: every member the adapter names has the library's value", (_name, ours, theirs) => {
  const library = theirs as Record<string, unknown>;
  expect(Object.keys(ours).length).toBeGreaterThan(0);
  for (const [member, value] of Object.entries(ours)) expect([member, value]).toEqual([member, library[member]]);
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
