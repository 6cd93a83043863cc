/**
 * Telegram from OpenClaw (see OpenClawChannel in src/channels/openclaw.ts):
 * the bot token from `botToken`, the file `tokenFile` names, or
 * `TELEGRAM_BOT_TOKEN` (OpenClaw's fallback for its default account); a
 * self-hosted Bot API server from `apiRoot`. Allowlist entries are numeric
 * user ids, written bare or as `tg:`/`telegram:`; cron targets are chat ids
 * with an optional forum topic (`-100123:topic:99`, or `-100123:99`), as
 * https://docs.openclaw.ai/automation/cron-jobs describes them.
 */
import { type OpenClawChannel, type OpenClawChannelImport, textAt } from "../openclaw.ts";

const PREFIX = /^(?:telegram|tg):/i;
const CHAT = /^-?\d+$/;
/** A Bot API token as @BotFather issues them; anything else read from a file is not sent on. */
const TOKEN = /^\d+:[A-Za-z0-9_-]{20,}$/;

export const telegramOpenClaw: OpenClawChannel = {
  translate(section, source) {
    const result: OpenClawChannelImport = { values: {}, skipped: [], manual: [] };
    const tokenFile = textAt(section, "tokenFile");
    const fromFile = tokenFile ? source.readFile(tokenFile)?.trim() || undefined : undefined;
    const token = source.secret(section.botToken) ?? fromFile ?? source.env("TELEGRAM_BOT_TOKEN");
    if (tokenFile && !fromFile) {
      result.skipped.push({ what: "Telegram tokenFile", why: "it cannot be read: it must be a regular file inside the OpenClaw home" });
    }
    if (token && !TOKEN.test(token)) {
      result.off = "what OpenClaw holds as the bot token is not one (@BotFather's are <digits>:<letters>)";
      result.manual.push("Give the Telegram bot token: fermix setup --yes --reconfigure --telegram-bot-token <token> --telegram-enabled true");
    } else if (token) result.values.bot_token = token;
    else {
      result.off = "no bot token was found (botToken, tokenFile or TELEGRAM_BOT_TOKEN)";
      result.manual.push("Give the Telegram bot token: fermix setup --yes --reconfigure --telegram-bot-token <token> --telegram-enabled true");
    }
    const apiRoot = textAt(section, "apiRoot");
    if (apiRoot) result.values.api_root = apiRoot.replace(/\/+$/, "");
    if (textAt(section, "webhookUrl")) {
      result.skipped.push({ what: "Telegram webhookUrl", why: "Fermix long-polls Telegram; it needs no public URL" });
    }
    return result;
  },
  senderId(entry) {
    const id = entry.trim().replace(PREFIX, "");
    return /^\d+$/.test(id) ? id : undefined;
  },
  chat(to) {
    const target = to
      .trim()
      .replace(PREFIX, "")
      .replace(/^group:/i, "");
    const [chatId, ...rest] = target.split(":");
    const thread = rest[0]?.toLowerCase() === "topic" ? rest[1] : rest[0];
    if (!chatId || !CHAT.test(chatId)) return `"${to}" is not a Telegram chat id`;
    if (thread !== undefined && !/^\d+$/.test(thread)) return `"${to}" has a topic Fermix cannot read`;
    return thread === undefined ? { chatId } : { chatId, threadId: thread };
  },
  directChatIsSender: true,
};
