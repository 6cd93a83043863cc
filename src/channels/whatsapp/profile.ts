/**
 * WhatsApp (Cloud API), described for the rest of Fermix (see
 * ChannelProfile in src/channels/types.ts): webhooks, WhatsApp's markers up
 * to 4,096 characters, any emoji as a reaction, no edits or deletes, and
 * one-to-one chats only. Pure data: the adapter (index.ts) is imported only
 * when the channel is served.
 */
import { MB } from "../../kernel/sizes.ts";
import { utf16Length } from "../../present/measure.ts";
import type { ChannelProfile } from "../types.ts";
import { whatsAppDialect } from "./dialect.ts";
import { whatsAppSetup } from "./setup.ts";
import { whatsAppWebhook } from "./webhook.ts";

export const whatsAppProfile: ChannelProfile = {
  name: "whatsapp",
  displayName: "WhatsApp",
  title: "WhatsApp",
  mode: "webhook",
  text: { dialect: whatsAppDialect, limit: 4096, measure: utf16Length },
  capabilities: { edit: false, delete: false, react: "any", media: true, typing: false },
  streaming: "block",
  sessionOnly: false,
  local: false,
  commands: true,
  // The Cloud API has no group chats: every conversation is one sender's.
  isDirect: () => true,
  credentialKey: "access_token",
  requiredKeys: ["access_token", "phone_number_id", "verify_token", "app_secret"],
  allowlistKey: "allowed_sender_ids",
  ownerKey: "owner_user_id",
  // A signed capture is replayable as long as a message that old is accepted.
  acceptanceWindowMs: (config) => config.fermix_channels.whatsapp.max_message_age_hours * 3_600_000,
  inboundMediaCap: 25 * MB,
  webhook: whatsAppWebhook,
  setup: whatsAppSetup,
};
