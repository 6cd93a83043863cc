/**
 * What each channel needs before it can be served, judged from config alone:
 * its credentials, and someone it may answer. Health, doctor and the daemon's
 * start-up all ask here, so they never disagree.
 *
 * Config sits below the channels and never names one: what a channel
 * requires is declared in its profile (src/channels/<name>/profile.ts) and
 * handed in as a ChannelRequirements.
 */
import type { ChannelName, Config } from "./schema.ts";

/** How a channel receives: the health report shows it. */
export type ChannelMode = "polling" | "webhook" | "gateway" | "subprocess" | "socket";

/** What config needs to know of a channel to judge whether it can be served. */
export interface ChannelRequirements {
  /** Keys that must be set for the channel to work at all. */
  readonly requiredKeys: readonly string[];
  /**
   * The key of the other ids allowed to talk to it (`allowed_user_ids`,
   * `allowed_sender_ids`); absent where the OS authorizes who may (ACP's
   * socket, the command line).
   */
  readonly allowlistKey?: string;
  /** The key of the owner's id (`owner_user_id`); absent where the OS authorizes. */
  readonly ownerKey?: string;
  /**
   * How old a message the channel still accepts under `config`, in ms: the
   * time a signed capture stays replayable (WhatsApp's
   * `max_message_age_hours`, Slack's signature window); 0 where the channel
   * fetches from its platform and takes no replayed capture. The idempotency
   * keys of a channel live at least this long, so a replay inside the window
   * always finds its key.
   */
  acceptanceWindowMs(config: Config): number;
}

export type ChannelReadiness = { kind: "disabled" } | { kind: "unconfigured"; missing: string[] } | { kind: "refused"; reason: string } | { kind: "servable" };

/** Whether a channel can be served, and if not, why. */
export function channelReadiness(config: Config, name: ChannelName, channel: ChannelRequirements): ChannelReadiness {
  const section = config.fermix_channels[name] as Record<string, unknown> & { enabled: boolean };
  if (!section.enabled) return { kind: "disabled" };
  const missing = channel.requiredKeys.filter((key) => typeof section[key] !== "string" || section[key] === "");
  if (missing.length > 0) return { kind: "unconfigured", missing };
  if (channel.allowlistKey === undefined) return { kind: "servable" };
  const owner = channel.ownerKey === undefined ? undefined : (section[channel.ownerKey] as string | undefined);
  const allowed = (section[channel.allowlistKey] as string[] | undefined) ?? [];
  const commanders = (section.command_allowlist as string[] | undefined) ?? [];
  if (!owner && allowed.length === 0 && commanders.length === 0) {
    return { kind: "refused", reason: `no ${channel.ownerKey ?? "owner"} and no ${channel.allowlistKey}: nobody may talk to it` };
  }
  return { kind: "servable" };
}
