/**
 * Slack from OpenClaw (see OpenClawChannel in src/channels/openclaw.ts). Fermix
 * takes Slack's events by webhook (the Events API, signed with the app's
 * signing secret); OpenClaw's HTTP mode is the same, its Socket Mode
 * (`appToken`) is not: without a `signingSecret` the bot token is imported
 * and the channel stays off until the owner gives one and registers the
 * request URL. Allowlist entries are member ids; cron targets are
 * `channel:<id>` or a bare conversation id, as
 * https://docs.openclaw.ai/gateway/configuration-reference describes them.
 */
import type { OpenClawChannel, OpenClawChannelImport } from "../openclaw.ts";
import { slackWebhook } from "./webhook.ts";

const CONVERSATION = /^[CDG][A-Z0-9]+$/;

export const slackOpenClaw: OpenClawChannel = {
  translate(section, source) {
    const result: OpenClawChannelImport = { values: {}, skipped: [], manual: [] };
    const token = source.secret(section.botToken) ?? source.env("SLACK_BOT_TOKEN");
    const signing = source.secret(section.signingSecret);
    if (token) result.values.bot_token = token;
    if (signing) result.values.signing_secret = signing;
    if (section.appToken !== undefined) {
      result.skipped.push({ what: "Slack app token (Socket Mode)", why: "Fermix takes Slack's events by webhook (Events API), not over Socket Mode" });
    }
    if (!token || !signing) {
      const missing = [token ? undefined : "bot token", signing ? undefined : "signing secret"].filter(Boolean).join(" and ");
      result.off = `OpenClaw had no ${missing} (Fermix needs both)`;
      result.manual.push(
        `Give the Slack ${missing}: fermix setup --yes --reconfigure${token ? "" : " --slack-bot-token <xoxb-…>"}${signing ? "" : " --slack-signing-secret <secret>"} --slack-enabled true`,
      );
    }
    result.manual.push(
      `In the Slack app's Event Subscriptions, set the request URL to https://<your public host>${slackWebhook.path} (a TLS proxy forwarding to Fermix) and subscribe to message.im and app_mention`,
    );
    return result;
  },
  senderId(entry) {
    const id = entry.trim().replace(/^(?:slack:|user:)/i, "");
    return /^[UW][A-Z0-9]+$/.test(id) ? id : undefined;
  },
  chat(to) {
    const target = to.trim().replace(/^slack:/i, "");
    const id = target.replace(/^channel:/i, "");
    if (CONVERSATION.test(id)) return { chatId: id };
    if (/^user:/i.test(target)) return `"${to}" is a direct message, whose conversation id (D…) OpenClaw's config does not hold`;
    return `"${to}" is not a Slack conversation id`;
  },
  directChatIsSender: false,
};
