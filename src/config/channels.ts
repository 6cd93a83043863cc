/**
 * What each channel needs before it can be served, judged from config alone:
 * its credentials, and someone it may answer. Health, doctor and the daemon's
 * start-up all ask here, so they never disagree.
 */
import type { ChannelName, ChatChannelName, Config } from "./schema.ts";

export type ChannelMode = "polling" | "webhook" | "gateway" | "subprocess" | "socket";

export const CHANNEL_MODE: Readonly<Record<ChannelName, ChannelMode>> = {
  telegram: "polling",
  whatsapp: "webhook",
  slack: "webhook",
  discord: "gateway",
  signal: "subprocess",
  acp: "socket",
};

/**
 * Whether each channel can edit its own messages, known without starting it:
 * what decides draft streaming, and what doctor checks an explicit
 * `streaming = "draft"` against. Each adapter's port declares the same.
 */
export const CAN_EDIT: Readonly<Record<ChannelName, boolean>> = {
  telegram: true,
  whatsapp: false,
  slack: true,
  discord: true,
  signal: false,
  acp: false,
};

/** Keys that must be set for each channel to work at all. */
export const REQUIRED_KEYS: Readonly<Record<ChannelName, readonly string[]>> = {
  telegram: ["bot_token"],
  whatsapp: ["access_token", "phone_number_id", "verify_token", "app_secret"],
  slack: ["bot_token", "signing_secret"],
  discord: ["bot_token"],
  signal: ["account"],
  acp: [],
};

export type ChannelReadiness =
  | { kind: "disabled" }
  | { kind: "unconfigured"; missing: string[] }
  | { kind: "refused"; reason: string }
  | { kind: "servable" };

/** The ingress allowlist key of a chat channel. */
export function allowlistKey(name: ChatChannelName): "allowed_user_ids" | "allowed_sender_ids" {
  return name === "whatsapp" || name === "signal" ? "allowed_sender_ids" : "allowed_user_ids";
}

/** Whether a channel can be served, and if not, why. */
export function channelReadiness(config: Config, name: ChannelName): ChannelReadiness {
  const section = config.fermix_channels[name] as Record<string, unknown> & { enabled: boolean };
  if (!section.enabled) return { kind: "disabled" };
  const missing = REQUIRED_KEYS[name].filter((key) => typeof section[key] !== "string" || section[key] === "");
  if (missing.length > 0) return { kind: "unconfigured", missing };
  if (name === "acp") return { kind: "servable" };
  const allowKey = allowlistKey(name);
  const owner = section.owner_user_id as string | undefined;
  const allowed = (section[allowKey] as string[] | undefined) ?? [];
  const commanders = (section.command_allowlist as string[] | undefined) ?? [];
  if (!owner && allowed.length === 0 && commanders.length === 0) {
    return { kind: "refused", reason: `no owner_user_id and no ${allowKey}: nobody may talk to it` };
  }
  return { kind: "servable" };
}

/** Slack's own tolerance for a request's timestamp: more than five minutes from now, either way, is a replay (src/channels/slack/verify.ts). */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

/**
 * How old a message a channel still accepts, by the config in force (ms):
 * WhatsApp's `max_message_age_hours` (a signed capture is replayable that
 * long), Slack's signature window. Channels that fetch from their platform
 * (Telegram, Discord, Signal, ACP, the CLI) take no replayed capture: 0.
 * The idempotency keys of a channel live at least this long, so a replay
 * inside the window always finds its key.
 */
export function acceptanceWindowMs(config: Config, channel: string): number {
  switch (channel) {
    case "whatsapp":
      return config.fermix_channels.whatsapp.max_message_age_hours * 3_600_000;
    case "slack":
      return SLACK_SIGNATURE_WINDOW_SECONDS * 1000;
    default:
      return 0;
  }
}
