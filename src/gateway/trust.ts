/**
 * Ingress and trust: who may talk to a channel, and who is its operator
 * (docs/security.md "Who is trusted"). Pure functions of the channel's config
 * and of its profile's keys (the owner's, the allowlist's) and locality.
 */
import type { ChannelName, Config } from "../config/schema.ts";
import type { ChannelFacts } from "./channel-facts.ts";

/** What trust reads of a channel's profile. */
export type TrustFacts = Pick<ChannelFacts, "name" | "local" | "allowlistKey" | "ownerKey">;

export type Role = "operator" | "user";

/**
 * Where a sender stands on a channel: its configured owner, an operator
 * (`command_allowlist`, or the one entry of a single-entry allowlist when no
 * owner is set), or an allowed sender. The role table (src/gateway/roles.ts,
 * docs/security.md) decides from it which tools a turn is offered.
 */
export type Standing = "owner" | "operator" | "allowed";

export interface TrustRules {
  owner?: string;
  allowed: readonly string[];
  commanders: readonly string[];
}

/** The rules of a chat channel, from its table in the config in force. */
export function trustRules(config: Config, channel: TrustFacts): TrustRules {
  const section = config.fermix_channels[channel.name as ChannelName] as unknown as Record<string, unknown>;
  const rules: TrustRules = {
    allowed: channel.allowlistKey === undefined ? [] : ((section[channel.allowlistKey] as string[] | undefined) ?? []),
    commanders: (section.command_allowlist as string[] | undefined) ?? [],
  };
  const owner = channel.ownerKey === undefined ? undefined : section[channel.ownerKey];
  if (typeof owner === "string") rules.owner = owner;
  return rules;
}

/** The operator ids: the owner, the command allowlist, or — only with neither — a single-entry ingress allowlist. */
export function operators(rules: TrustRules): string[] {
  const explicit = [...(rules.owner ? [rules.owner] : []), ...rules.commanders];
  if (explicit.length > 0) return explicit;
  return rules.allowed.length === 1 ? [rules.allowed[0]!] : [];
}

/**
 * Where the sender stands, or null when the sender may not talk to this
 * channel at all. `aliases` are other ids the platform vouches for as the
 * same sender; a match on any of them counts as a match on the sender.
 */
export function standingOf(rules: TrustRules, senderId: string, aliases: readonly string[] = []): Standing | null {
  const ids = [senderId, ...aliases];
  if (rules.owner !== undefined && ids.includes(rules.owner)) return "owner";
  if (ids.some((id) => operators(rules).includes(id))) return "operator";
  if (ids.some((id) => rules.allowed.includes(id))) return "allowed";
  return null;
}

/**
 * The sender's role, or null when the sender may not talk to this channel at
 * all. `aliases` are other ids the platform vouches for as the same sender
 * (InboundMessage.senderAliases: Signal's phone number beside its UUID); a
 * match on any of them counts as a match on the sender.
 */
export function authorize(rules: TrustRules, senderId: string, aliases: readonly string[] = []): Role | null {
  const ids = [senderId, ...aliases];
  const ops = operators(rules);
  if (ids.some((id) => ops.includes(id))) return "operator";
  if (ids.some((id) => rules.allowed.includes(id))) return "user";
  return null;
}

/** The role for any channel: a local surface (the command line, ACP) is authorized by the OS (the operator). */
export function roleFor(config: Config, channel: TrustFacts, senderId: string, aliases: readonly string[] = []): Role | null {
  if (channel.local) return "operator";
  return authorize(trustRules(config, channel), senderId, aliases);
}

/** Where the sender stands on any channel: on a local surface (the command line, ACP) it is the machine's own user, the owner. */
export function standingFor(config: Config, channel: TrustFacts, senderId: string, aliases: readonly string[] = []): Standing | null {
  if (channel.local) return "owner";
  return standingOf(trustRules(config, channel), senderId, aliases);
}

/** The role a standing gives: the owner and operators are operators (commands, the owner's memory). */
export const roleOf = (standing: Standing): Role => (standing === "allowed" ? "user" : "operator");
