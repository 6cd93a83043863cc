/**
 * Slack's Events API webhook, as the HTTP server mounts it (see
 * WebhookHandler in src/channels/webhook.ts): POST /webhook/slack, signed
 * with the app's signing secret (verify.ts), its body an event envelope
 * (inbound.ts). A disabled channel keeps its route, but without its secret
 * every request is not_configured.
 */
import type { Config } from "../../config/schema.ts";
import type { WebhookBody, WebhookHandler } from "../webhook.ts";
import { parseSlackBody } from "./inbound.ts";
import { verifySlackRequest } from "./verify.ts";

const signingSecret = (config: Config) => (config.fermix_channels.slack.enabled ? config.fermix_channels.slack.signing_secret : undefined);

export const slackWebhook: WebhookHandler = {
  path: "/webhook/slack",
  configured: (config) => Boolean(signingSecret(config)),
  verify: (rawBody, headers, context) =>
    verifySlackRequest({
      rawBody,
      timestampHeader: headers.get("x-slack-request-timestamp") ?? undefined,
      signatureHeader: headers.get("x-slack-signature") ?? undefined,
      signingSecret: signingSecret(context.config),
      nowSeconds: context.nowSeconds,
    }),
  parse(rawBody, context): WebhookBody {
    // A reply in a channel thread is for the bot only where it has replied before.
    const parsed = parseSlackBody(rawBody, { botInThread: context.repliedInThread });
    switch (parsed.kind) {
      case "invalid":
        return { kind: "invalid" };
      case "url_verification":
        return { kind: "challenge", text: parsed.challenge };
      case "ignored":
        return { kind: "messages", items: [] };
      case "message":
        return { kind: "messages", items: [{ key: parsed.idempotencyKey, message: parsed.message }] };
    }
  },
};
