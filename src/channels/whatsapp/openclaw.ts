/**
 * WhatsApp from OpenClaw (see OpenClawChannel in src/channels/openclaw.ts).
 * OpenClaw's WhatsApp is a linked device (Baileys, its session under
 * `credentials/whatsapp/`); Fermix speaks the WhatsApp Cloud API, whose
 * credentials come from a Meta app. A linked-device session cannot become
 * those, so only who may talk (numbers, digits only as the Cloud API writes
 * them) carries over, and the channel stays off until the owner sets up
 * the Cloud API and registers the webhook.
 */
import type { OpenClawChannel } from "../openclaw.ts";
import { whatsAppWebhook } from "./webhook.ts";

/** `+15551234567`, `whatsapp:+1 555…` → `15551234567`. */
function digits(entry: string): string | undefined {
  const raw = entry.trim().replace(/^whatsapp:/i, "");
  if (!/^\+?[\d\s().-]+$/.test(raw)) return undefined;
  const id = raw.replace(/\D/g, "");
  return id.length >= 6 && id.length <= 15 ? id : undefined;
}

export const whatsAppOpenClaw: OpenClawChannel = {
  translate() {
    return {
      values: {},
      off: "OpenClaw's WhatsApp is a linked device (Baileys); its session cannot become WhatsApp Cloud API credentials",
      skipped: [{ what: "WhatsApp linked-device session (credentials/whatsapp/)", why: "Fermix uses the WhatsApp Cloud API, not a linked device" }],
      manual: [
        "Create a WhatsApp Cloud API app at Meta, then: fermix setup --yes --reconfigure --whatsapp-access-token <token> --whatsapp-phone-number-id <id> --whatsapp-verify-token <a token you choose> --whatsapp-app-secret <secret> --whatsapp-enabled true",
        `Register the WhatsApp webhook at Meta: https://<your public host>${whatsAppWebhook.path} (a TLS proxy forwarding to Fermix), with the verify token you chose`,
      ],
    };
  },
  senderId: digits,
  chat(to) {
    const id = digits(to);
    return id ? { chatId: id } : `"${to}" is not a WhatsApp number (groups do not carry over)`;
  },
  directChatIsSender: true,
};
