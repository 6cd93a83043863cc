/**
 * Discord, described for the rest of Fermix (see ChannelProfile in
 * src/channels/types.ts): the Gateway WebSocket, Markdown up to 2,000
 * characters, edits, deletes, any emoji as a reaction, and buttons. Pure
 * data: the adapter (index.ts) is imported only when the channel is served.
 */
import { MB } from "../../kernel/sizes.ts";
import { markdown } from "../../present/dialects/markdown.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";
import { discordSetup } from "./setup.ts";

export const discordProfile: ChannelProfile = {
  name: "discord",
  displayName: "Discord",
  title: "Discord",
  mode: "gateway",
  text: { dialect: markdown, limit: 2000, measure: utf16Length },
  capabilities: { edit: true, delete: true, react: "any", media: true, typing: true, buttons: true },
  streaming: "draft",
  sessionOnly: false,
  local: false,
  commands: true,
  // A DM channel's id is not its user's: without a message in hand (whose guild_id says), no chat reads as direct.
  isDirect: () => false,
  credentialKey: "bot_token",
  requiredKeys: ["bot_token"],
  allowlistKey: "allowed_user_ids",
  ownerKey: "owner_user_id",
  // Messages arrive over the Gateway: no replayable capture.
  acceptanceWindowMs: () => 0,
  inboundMediaCap: 25 * MB,
  setup: discordSetup,
};
