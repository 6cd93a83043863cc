/**
 * Telegram, described for the rest of Fermix (see ChannelProfile in
 * src/channels/types.ts): long polling, Telegram HTML counted after entity
 * parsing, edits, deletes, a fixed reaction set and buttons. Pure data: the
 * adapter (index.ts) is imported only when the channel is served.
 */
import type { ReactionTypeEmoji } from "grammy/types";
import { MB } from "../../kernel/sizes.ts";
import type { ChannelProfile } from "../types.ts";
import { telegramDialect, telegramLength } from "./dialect.ts";
import { telegramSetup } from "./setup.ts";

/** The emoji a bot may react with (Bot API ReactionTypeEmoji). ❤ is U+2764 without FE0F. */
export const TELEGRAM_REACTIONS: readonly ReactionTypeEmoji["emoji"][] = [
  "👍",
  "👎",
  "❤",
  "🔥",
  "🥰",
  "👏",
  "😁",
  "🤔",
  "🤯",
  "😱",
  "🤬",
  "😢",
  "🎉",
  "🤩",
  "🤮",
  "💩",
  "🙏",
  "👌",
  "🕊",
  "🤡",
  "🥱",
  "🥴",
  "😍",
  "🐳",
  "❤‍🔥",
  "🌚",
  "🌭",
  "💯",
  "🤣",
  "⚡",
  "🍌",
  "🏆",
  "💔",
  "🤨",
  "😐",
  "🍓",
  "🍾",
  "💋",
  "🖕",
  "😈",
  "😴",
  "😭",
  "🤓",
  "👻",
  "👨‍💻",
  "👀",
  "🎃",
  "🙈",
  "😇",
  "😨",
  "🤝",
  "✍",
  "🤗",
  "🫡",
  "🎅",
  "🎄",
  "☃",
  "💅",
  "🤪",
  "🗿",
  "🆒",
  "💘",
  "🙉",
  "🦄",
  "😘",
  "💊",
  "🙊",
  "😎",
  "👾",
  "🤷‍♂",
  "🤷",
  "🤷‍♀",
  "😡",
];

export const telegramProfile: ChannelProfile = {
  name: "telegram",
  displayName: "Telegram",
  title: "Telegram",
  mode: "polling",
  text: { dialect: telegramDialect, limit: 4096, measure: telegramLength },
  // Telegram edits, deletes, reacts from its fixed set, carries media, shows typing and has buttons.
  capabilities: { edit: true, delete: true, react: TELEGRAM_REACTIONS, media: true, typing: true, buttons: true },
  streaming: "draft",
  sessionOnly: false,
  local: false,
  commands: true,
  // A private chat's id is its user's id; a group's is negative.
  isDirect: ({ chatId, senderId }) => chatId === senderId,
  credentialKey: "bot_token",
  requiredKeys: ["bot_token"],
  allowlistKey: "allowed_user_ids",
  ownerKey: "owner_user_id",
  // Updates are fetched from the Bot API: no replayable capture.
  acceptanceWindowMs: () => 0,
  // Bots may download files up to 20 MB (getFile's limit).
  inboundMediaCap: 20 * MB,
  setup: telegramSetup,
};
