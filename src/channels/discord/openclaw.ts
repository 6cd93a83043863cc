/**
 * Discord from OpenClaw (see OpenClawChannel in src/channels/openclaw.ts):
 * the bot token from `token` or `DISCORD_BOT_TOKEN`. Allowlist entries are
 * user ids, bare or as `user:<id>` or a mention; cron targets are
 * `channel:<id>` (a direct message, `user:<id>`, needs the DM channel's own
 * id, which the config does not hold), as
 * https://docs.openclaw.ai/gateway/configuration-reference describes them.
 */
import type { OpenClawChannel, OpenClawChannelImport } from "../openclaw.ts";

export const discordOpenClaw: OpenClawChannel = {
  translate(section, source) {
    const result: OpenClawChannelImport = { values: {}, skipped: [], manual: [] };
    const token = source.secret(section.token) ?? source.env("DISCORD_BOT_TOKEN");
    if (token) result.values.bot_token = token;
    else {
      result.off = "no bot token was found (token or DISCORD_BOT_TOKEN)";
      result.manual.push("Give the Discord bot token: fermix setup --yes --reconfigure --discord-bot-token <token> --discord-enabled true");
    }
    if (section.guilds !== undefined) {
      result.skipped.push({
        what: "Discord guild and channel rules (guilds)",
        why: "Fermix answers allowed users wherever it is mentioned; it has no per-guild rules",
      });
    }
    return result;
  },
  senderId(entry) {
    const id = entry
      .trim()
      .replace(/^(?:discord:|user:)/i, "")
      .replace(/^<@!?(\d+)>$/, "$1");
    return /^\d+$/.test(id) ? id : undefined;
  },
  chat(to) {
    const target = to.trim().replace(/^discord:/i, "");
    const channel = /^channel:(\d+)$/i.exec(target);
    if (channel) return { chatId: channel[1]! };
    if (/^user:/i.test(target)) return `"${to}" is a direct message, whose channel id OpenClaw's config does not hold`;
    return `"${to}" is not a Discord channel (channel:<id>)`;
  },
  directChatIsSender: false,
};
