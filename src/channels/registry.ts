/**
 * The channel adapters this build has, by name: the daemon starts the
 * enabled, configured ones from here. A channel is a folder implementing
 * ChannelAdapter plus one line in this table. Each adapter is imported only
 * when its channel is enabled, so a disabled channel costs no memory (the
 * Slack client alone brings an HTTP stack; ACP brings its SDK and zod).
 */
import type { ChannelName, Config } from "../config/schema.ts";
import type { ChannelAdapter } from "./types.ts";

export type AdapterFactory = (config: Config) => ChannelAdapter;

export const ADAPTERS: Partial<Record<ChannelName, () => Promise<AdapterFactory>>> = {
  acp: () => import("./acp/index.ts").then((m) => m.acpAdapter),
  telegram: () => import("./telegram/index.ts").then((m) => m.telegramAdapter),
  slack: () => import("./slack/index.ts").then((m) => m.slackAdapter),
  whatsapp: () => import("./whatsapp/index.ts").then((m) => m.whatsAppAdapter),
  signal: () => import("./signal/index.ts").then((m) => m.signalAdapter),
  discord: () => import("./discord/index.ts").then((m) => m.discordAdapter),
};
