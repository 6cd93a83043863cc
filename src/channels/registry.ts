/**
 * The channel adapters this build has, by name: the daemon starts the
 * enabled, configured ones from here. A channel is a folder implementing
 * ChannelAdapter plus one line in this table.
 */
import type { ChannelName, Config } from "../config/schema.ts";
import { acpAdapter } from "./acp/index.ts";
import { telegramAdapter } from "./telegram/index.ts";
import { slackAdapter } from "./slack/index.ts";
import type { ChannelAdapter } from "./types.ts";
import { whatsAppAdapter } from "./whatsapp/index.ts";

export type AdapterFactory = (config: Config) => ChannelAdapter;

export const ADAPTERS: Partial<Record<ChannelName, AdapterFactory>> = {
  acp: acpAdapter,
  telegram: telegramAdapter,
  slack: slackAdapter,
  whatsapp: whatsAppAdapter,
};
