/**
 * Slack in setup (see ChannelSetup in src/channels/setup.ts): its keys, and
 * the wizard's questions — the bot token and signing secret, the owner's
 * member id, and where the Events API must send its webhooks.
 */
import { askInTurn, type ChannelSetup } from "../setup.ts";
import { slackOpenClaw } from "./openclaw.ts";

export const slackSetup: ChannelSetup = {
  label: "Slack",
  openclaw: slackOpenClaw,
  hint: "Events API; needs a public HTTPS URL for its webhook",
  fields: [
    { key: "enabled", kind: "boolean", help: "serve Slack (Events API webhooks)" },
    { key: "bot_token", kind: "string", help: "the xoxb- bot token; stored as a secret", label: "Bot token" },
    { key: "signing_secret", kind: "string", help: "the app's signing secret; stored as a secret", label: "Signing secret" },
    { key: "owner_user_id", kind: "string", help: "your Slack member id (U…)", flag: "owner", label: "Owner id" },
    { key: "allowed_user_ids", kind: "list", help: "other member ids that may talk to it, comma-separated", label: "Others allowed" },
    { key: "api_url", kind: "string", help: "the Web API root (default https://slack.com/api/)", label: "Web API root", advanced: true },
  ],
  ask: askInTurn([
    { secret: "bot_token", label: "Bot token (xoxb-…)" },
    { secret: "signing_secret", label: "Signing secret" },
    { owner: "For Slack it is your member id (U…), under your profile's ⋮ menu." },
    { note: (kit) => `${kit.webhookHint()} Subscribe to message.im and app_mention.`, title: "Slack Events API" },
  ]),
};
