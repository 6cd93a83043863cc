/**
 * WhatsApp in setup (see ChannelSetup in src/channels/setup.ts): its keys,
 * and the wizard's questions — the Cloud API credentials, the owner's
 * number, and where Meta must send the webhooks.
 */
import { askInTurn, type ChannelSetup } from "../setup.ts";
import { whatsAppOpenClaw } from "./openclaw.ts";

export const whatsAppSetup: ChannelSetup = {
  label: "WhatsApp",
  openclaw: whatsAppOpenClaw,
  hint: "Cloud API; needs a public HTTPS URL for its webhook",
  fields: [
    { key: "enabled", kind: "boolean", help: "serve WhatsApp (Cloud API webhooks)" },
    { key: "access_token", kind: "string", help: "the Cloud API access token; stored as a secret", label: "Access token" },
    { key: "phone_number_id", kind: "string", help: "the sending phone number's id", label: "Phone number id" },
    { key: "verify_token", kind: "string", help: "the webhook verify token you choose; stored as a secret", label: "Verify token" },
    { key: "app_secret", kind: "string", help: "the Meta app secret (webhook signatures); stored as a secret", label: "App secret" },
    { key: "owner_user_id", kind: "string", help: "your WhatsApp number, digits only", flag: "owner", label: "Owner id" },
    { key: "allowed_sender_ids", kind: "list", help: "other numbers that may talk to it, comma-separated", label: "Others allowed" },
    { key: "graph_api_base", kind: "string", help: "the Graph API root (default https://graph.facebook.com/v21.0)", label: "Graph API root", advanced: true },
  ],
  ask: askInTurn([
    { secret: "access_token", label: "Cloud API access token" },
    { text: "phone_number_id", label: "Phone number id" },
    { secret: "verify_token", label: "Webhook verify token (any string you choose; the same goes in Meta's app settings)" },
    { secret: "app_secret", label: "App secret (signs the webhooks)" },
    { owner: "For WhatsApp it is your number, digits only (e.g. 15550001111)." },
    { note: (kit) => kit.webhookHint(), title: "WhatsApp webhook" },
  ]),
};
