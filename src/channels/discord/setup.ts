/**
 * Discord in setup (see ChannelSetup in src/channels/setup.ts): its keys,
 * and the wizard's questions — the bot token, the bot's own id, and the
 * owner's user id.
 */
import type { ChannelSetup } from "../setup.ts";

export const discordSetup: ChannelSetup = {
  label: "Discord",
  hint: "a bot from the Developer Portal",
  fields: [
    { key: "enabled", kind: "boolean", help: "serve Discord" },
    { key: "bot_token", kind: "string", help: "the bot token; stored as a secret", label: "Bot token" },
    { key: "bot_user_id", kind: "string", help: "the bot's own user id", label: "Bot user id" },
    { key: "owner_user_id", kind: "string", help: "your Discord user id", flag: "owner", label: "Owner id" },
    { key: "allowed_user_ids", kind: "list", help: "other user ids that may talk to it, comma-separated", label: "Others allowed" },
    { key: "api_base", kind: "string", help: "the REST API root (default https://discord.com/api/v10)", label: "REST API root", advanced: true },
  ],
  async ask(kit) {
    const values: Record<string, unknown> = {};
    const put = (key: string, value: unknown) => {
      if (value !== undefined) values[key] = value;
    };
    put("bot_token", await kit.credential("bot_token", "Bot token"));
    put("bot_user_id", await kit.text("bot_user_id", "The bot's user id (optional)", true));
    put("owner_user_id", await kit.owner("For Discord it is your user id (Developer Mode → Copy User ID)."));
    return values;
  },
};
