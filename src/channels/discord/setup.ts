/**
 * Discord in setup (see ChannelSetup in src/channels/setup.ts): its keys,
 * and the wizard's questions — the bot token, the bot's own id, and the
 * owner's user id.
 */
import { askInTurn, type ChannelSetup } from "../setup.ts";
import { discordOpenClaw } from "./openclaw.ts";

export const discordSetup: ChannelSetup = {
  label: "Discord",
  openclaw: discordOpenClaw,
  hint: "a bot from the Developer Portal",
  fields: [
    { key: "enabled", kind: "boolean", help: "serve Discord" },
    { key: "bot_token", kind: "string", help: "the bot token; stored as a secret", label: "Bot token" },
    { key: "bot_user_id", kind: "string", help: "the bot's own user id", label: "Bot user id" },
    { key: "owner_user_id", kind: "string", help: "your Discord user id", flag: "owner", label: "Owner id" },
    { key: "allowed_user_ids", kind: "list", help: "other user ids that may talk to it, comma-separated", label: "Others allowed" },
    { key: "api_base", kind: "string", help: "the REST API root (default https://discord.com/api/v10)", label: "REST API root", advanced: true },
  ],
  ask: askInTurn([
    { secret: "bot_token", label: "Bot token" },
    { text: "bot_user_id", label: "The bot's user id (optional)", optional: true },
    { owner: "For Discord it is your user id (Developer Mode → Copy User ID)." },
  ]),
};
