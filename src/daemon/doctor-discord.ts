/**
 * `fermix doctor`'s Discord rows, offline like the rest of doctor: the bot
 * token's shape, the bot's own user id (configured, or learnt from Discord's
 * Ready at an earlier start and kept in the database), and the streaming
 * mode in effect. Only for an enabled Discord channel; whether the token is
 * set at all is the general channel row's job.
 */
import { existsSync } from "node:fs";
import { botIdOfToken, learntBotIdKey } from "../channels/discord/session.ts";
import type { Config } from "../config/schema.ts";
import { openDatabaseReadOnly } from "../store/db.ts";
import { SettingsStore } from "../store/settings.ts";

export interface DiscordDoctorRow {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

/** The rows for `[fermix_channels.discord]`; none when it is disabled. */
export function discordDoctorRows(config: Config, databasePath: string): DiscordDoctorRow[] {
  const section = config.fermix_channels.discord;
  if (!section.enabled) return [];
  const rows: DiscordDoctorRow[] = [];
  const token = section.bot_token;
  const tokenBot = token ? botIdOfToken(token) : undefined;
  if (token) {
    rows.push(
      tokenBot
        ? { check: "channel discord token", status: "ok", detail: `bot_token set (for bot ${tokenBot})` }
        : {
            check: "channel discord token",
            status: "warn",
            detail: "bot_token does not look like a Discord bot token (three parts separated by dots, from the Developer Portal's Bot page)",
          },
    );
  }

  const learnt = token ? learntBotId(databasePath, token) : undefined;
  if (section.bot_user_id) {
    const other = learnt ?? tokenBot;
    rows.push(
      other && other !== section.bot_user_id
        ? {
            check: "channel discord bot_user_id",
            status: "warn",
            detail: `bot_user_id ${section.bot_user_id} is not the bot this token belongs to (${other}): its own messages may be answered`,
          }
        : { check: "channel discord bot_user_id", status: "ok", detail: `bot_user_id ${section.bot_user_id}` },
    );
  } else if (learnt) {
    rows.push({ check: "channel discord bot_user_id", status: "ok", detail: `not set; learnt from Discord at start: ${learnt}` });
  } else {
    rows.push({
      check: "channel discord bot_user_id",
      status: "warn",
      detail: "not set and not learnt yet: Fermix learns it from Discord when the daemon connects (or set DISCORD_BOT_USER_ID)",
    });
  }

  const streaming = section.streaming;
  rows.push({
    check: "channel discord streaming",
    status: "ok",
    detail: streaming ? `streaming = "${streaming}"` : 'draft (the default: Discord can edit messages; set streaming = "block" or "off" to change it)',
  });
  return rows;
}

/** The bot user id an earlier start learnt from Ready, read from the database without changing it. */
function learntBotId(databasePath: string, token: string): string | undefined {
  if (!existsSync(databasePath)) return undefined;
  try {
    const db = openDatabaseReadOnly(databasePath);
    try {
      return new SettingsStore(db).get(learntBotIdKey(token));
    } finally {
      db.close();
    }
  } catch {
    // No settings table yet, or a database doctor reports elsewhere: nothing learnt.
    return undefined;
  }
}
