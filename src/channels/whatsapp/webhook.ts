/**
 * WhatsApp's Cloud API webhook, as the HTTP server mounts it (see
 * WebhookHandler in src/channels/webhook.ts): GET /webhook/whatsapp answers
 * Meta's subscription check with the verify token, POST carries messages
 * signed with the app secret (verify.ts, inbound.ts). A message older than
 * `max_message_age_hours` by its own timestamp is acknowledged and dropped.
 * A disabled channel keeps its routes, but without its secrets every request
 * is not_configured.
 */
import type { Config } from "../../config/schema.ts";
import type { WebhookBody, WebhookHandler } from "../webhook.ts";
import { parseWhatsAppBody } from "./inbound.ts";
import { verifyWhatsAppChallenge, verifyWhatsAppSignature } from "./verify.ts";

const section = (config: Config) => config.fermix_channels.whatsapp;
const appSecret = (config: Config) => (section(config).enabled ? section(config).app_secret : undefined);
const verifyToken = (config: Config) => (section(config).enabled ? section(config).verify_token : undefined);

export const whatsAppWebhook: WebhookHandler = {
  path: "/webhook/whatsapp",
  configured: (config) => Boolean(appSecret(config)),
  verify: (rawBody, headers, context) =>
    verifyWhatsAppSignature({ rawBody, signatureHeader: headers.get("x-hub-signature-256") ?? undefined, appSecret: appSecret(context.config) }),
  parse(rawBody, context): WebhookBody {
    const maxAgeHours = section(context.config).max_message_age_hours;
    const parsed = parseWhatsAppBody(rawBody, { receivedAt: context.nowSeconds * 1000, maxAgeMs: maxAgeHours * 3_600_000 });
    if (parsed.kind === "invalid") return { kind: "invalid" };
    if (parsed.stale) context.log.warn("whatsapp messages older than the freshness window dropped", { messages: parsed.stale, max_age_hours: maxAgeHours });
    return { kind: "messages", items: parsed.messages.map(({ message, idempotencyKey }) => ({ key: idempotencyKey, message })) };
  },
  challenge(query, config) {
    const result = verifyWhatsAppChallenge({
      mode: query.get("hub.mode") ?? undefined,
      token: query.get("hub.verify_token") ?? undefined,
      challenge: query.get("hub.challenge") ?? undefined,
      verifyToken: verifyToken(config),
    });
    return result.ok ? { ok: true, text: result.challenge } : result;
  },
};
