/**
 * Slack, described for the rest of Fermix (see ChannelProfile in
 * src/channels/types.ts): Events API webhooks, mrkdwn up to 40,000
 * characters, edits, deletes and reactions by shortcode name, no typing
 * indicator for bots. Pure data: the adapter (index.ts, with the Web API
 * client) is imported only when the channel is served.
 */
import { MB } from "../../kernel/sizes.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";
import { slackDialect } from "./dialect.ts";
import { slackSetup } from "./setup.ts";
import { SLACK_MAX_SKEW_SECONDS } from "./verify.ts";
import { slackWebhook } from "./webhook.ts";

/**
 * Common built-in reactions: Slack's shortcode name and the emoji it shows.
 * The names are what the model is offered; the emoji let a caller that has
 * one in hand (👍) reach the same reaction.
 */
export const SLACK_REACTIONS: ReadonlyArray<readonly [name: string, emoji: string]> = [
  ["thumbsup", "👍"],
  ["thumbsdown", "👎"],
  ["eyes", "👀"],
  ["white_check_mark", "✅"],
  ["heavy_check_mark", "✔️"],
  ["heart", "❤️"],
  ["tada", "🎉"],
  ["raised_hands", "🙌"],
  ["clap", "👏"],
  ["pray", "🙏"],
  ["ok_hand", "👌"],
  ["fire", "🔥"],
  ["rocket", "🚀"],
  ["100", "💯"],
  ["joy", "😂"],
  ["smile", "😄"],
  ["slightly_smiling_face", "🙂"],
  ["wink", "😉"],
  ["thinking_face", "🤔"],
  ["wave", "👋"],
  ["muscle", "💪"],
  ["star", "⭐"],
  ["sparkles", "✨"],
  ["bulb", "💡"],
  ["memo", "📝"],
  ["warning", "⚠️"],
  ["x", "❌"],
  ["hourglass_flowing_sand", "⏳"],
  ["sweat_smile", "😅"],
  ["sob", "😭"],
  ["sunglasses", "😎"],
  ["handshake", "🤝"],
];

/** The reaction names offered to the model on Slack (shortcodes without colons). */
export const SLACK_REACTION_NAMES: readonly string[] = SLACK_REACTIONS.map(([name]) => name);

export const slackProfile: ChannelProfile = {
  name: "slack",
  displayName: "Slack",
  title: "Slack",
  mode: "webhook",
  text: { dialect: slackDialect, limit: 40_000, measure: utf16Length },
  capabilities: { edit: true, delete: true, react: SLACK_REACTION_NAMES, media: true, typing: false },
  streaming: "draft",
  sessionOnly: false,
  local: false,
  commands: true,
  // A DM channel's id starts with D.
  isDirect: ({ chatId }) => chatId.startsWith("D"),
  credentialKey: "bot_token",
  requiredKeys: ["bot_token", "signing_secret"],
  allowlistKey: "allowed_user_ids",
  ownerKey: "owner_user_id",
  // A signed request stays acceptable for Slack's signature window.
  acceptanceWindowMs: () => SLACK_MAX_SKEW_SECONDS * 1000,
  inboundMediaCap: 100 * MB,
  webhook: slackWebhook,
  setup: slackSetup,
};
