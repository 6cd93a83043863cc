/**
 * Every channel this build has, one line each: its profile (what the rest of
 * Fermix knows of it, cheap to import) beside its adapter, which is imported
 * only when the channel is served, so a disabled channel costs no memory
 * (the Slack client alone brings an HTTP stack; ACP brings its SDK and zod).
 * The command line has a profile and no adapter: the control socket, or the
 * command itself, serves it; so has realtime voice (its companion socket and
 * the /talk page serve it, src/channels/realtime/).
 *
 * Adding a channel is its folder (src/channels/<name>/: the adapter, its
 * profile.ts, and its setup) and one line here, with its table in the config
 * schema (src/config/schema.ts).
 */
import type { ChannelName, Config, GatewayChannel } from "../config/schema.ts";
import { acpProfile } from "./acp/profile.ts";
import { cliProfile } from "./cli/profile.ts";
import { discordProfile } from "./discord/profile.ts";
import { realtimeProfile } from "./realtime/profile.ts";
import { signalProfile } from "./signal/profile.ts";
import { slackProfile } from "./slack/profile.ts";
import { telegramProfile } from "./telegram/profile.ts";
import type { ChannelAdapter, ChannelProfile } from "./types.ts";
import { whatsAppProfile } from "./whatsapp/profile.ts";

export type AdapterFactory = (config: Config) => ChannelAdapter;

interface Registered {
  profile: ChannelProfile;
  /** The adapter, loaded when the channel is served; absent for the command line and realtime voice. */
  adapter?: () => Promise<AdapterFactory>;
}

export const CHANNELS: { readonly [C in GatewayChannel]: Registered } = {
  telegram: { profile: telegramProfile, adapter: () => import("./telegram/index.ts").then((m) => m.telegramAdapter) },
  whatsapp: { profile: whatsAppProfile, adapter: () => import("./whatsapp/index.ts").then((m) => m.whatsAppAdapter) },
  slack: { profile: slackProfile, adapter: () => import("./slack/index.ts").then((m) => m.slackAdapter) },
  discord: { profile: discordProfile, adapter: () => import("./discord/index.ts").then((m) => m.discordAdapter) },
  signal: { profile: signalProfile, adapter: () => import("./signal/index.ts").then((m) => m.signalAdapter) },
  acp: { profile: acpProfile, adapter: () => import("./acp/index.ts").then((m) => m.acpAdapter) },
  cli: { profile: cliProfile },
  realtime: { profile: realtimeProfile },
};

/** A channel's profile: the lookup the composition root hands to the floors below. */
export function profileOf(channel: GatewayChannel): ChannelProfile {
  return CHANNELS[channel].profile;
}

/** The adapter loader of a configured channel; undefined when this build has none. */
export function adapterOf(channel: ChannelName): (() => Promise<AdapterFactory>) | undefined {
  return CHANNELS[channel].adapter;
}
