/**
 * Where a scheduled job delivers its result. By default the conversation it
 * was made in; surfaces that cannot receive a later message (the command
 * line, ACP) use `[fermix_core.jobs] default_target`. The owner may name
 * another chat as `<channel>:<chat id>`: a channel that is running here, and
 * a chat the owner uses — their own id on that channel, the default target,
 * or a chat Fermix already talks in. Nobody else may send a job elsewhere.
 */
import type { ToolContext } from "../../agent/tools/types.ts";
import { ToolError } from "../../agent/tools/types.ts";
import { CHANNEL_NAMES, type ChannelName, type Config } from "../../config/schema.ts";
import type { GatewayChannel } from "../../message/index.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import type { JobTarget } from "../../store/jobs.ts";
import type { ChannelLookup } from "../channel-facts.ts";

export interface TargetDeps {
  /** Each channel's profile: a channel that exists only while a client is connected can receive nothing later. */
  channels: ChannelLookup;
  /** The config in force (a reload changes the default target and the owners). */
  config: () => Config;
  conversations: Pick<ConversationStore, "hasChat">;
  /** Whether a channel is running (its adapter registered): a target on a channel that is not would never be delivered. */
  running: (channel: GatewayChannel) => boolean;
}

/** Read "<channel>:<chat id>" where the channel can receive a later message; throws ToolError naming what is accepted. */
export function parseTarget(spec: string, channels: ChannelLookup): { channel: ChannelName; chatId: string } {
  const chatChannels = CHANNEL_NAMES.filter((c) => !channels(c).sessionOnly);
  const at = spec.indexOf(":");
  const channel = spec.slice(0, at).trim().toLowerCase();
  const chatId = spec.slice(at + 1).trim();
  if (at <= 0 || chatId === "" || !(chatChannels as readonly string[]).includes(channel)) {
    throw new ToolError(`target "${spec}" is not "<channel>:<chat id>" with a channel among ${chatChannels.join(", ")}`);
  }
  return { channel: channel as ChannelName, chatId };
}

/** The resolver the schedule tool calls: where a job made in this turn delivers. */
export function targetResolver(deps: TargetDeps): (spec: string | undefined, ctx: ToolContext) => JobTarget {
  const running = (target: { channel: ChannelName; chatId: string }, what: string): JobTarget => {
    if (!deps.running(target.channel)) throw new ToolError(`${what} is on ${target.channel}, which is not running here`);
    return target;
  };
  return (spec, ctx) => {
    const config = deps.config();
    const defaultTarget = config.fermix_core.jobs.default_target;
    if (spec === undefined) {
      if (!deps.channels(ctx.channel).sessionOnly) {
        const target: JobTarget = { channel: ctx.channel, chatId: ctx.target.chatId };
        if (ctx.target.threadId !== undefined) target.threadId = ctx.target.threadId;
        return target;
      }
      if (!defaultTarget) {
        throw new ToolError(
          'this conversation cannot receive a message later: give target as "<channel>:<chat id>", or ask the owner to set [fermix_core.jobs] default_target',
        );
      }
      return running(parseTarget(defaultTarget, deps.channels), "[fermix_core.jobs] default_target");
    }
    if (ctx.role !== "operator") throw new ToolError("only the owner may send a job's result to another chat; leave target out");
    const target = parseTarget(spec, deps.channels);
    const owner = (config.fermix_channels[target.channel] as { owner_user_id?: string }).owner_user_id;
    const known =
      target.chatId === owner || (defaultTarget !== undefined && spec.trim() === defaultTarget) || deps.conversations.hasChat(target.channel, target.chatId);
    if (!known) throw new ToolError(`Fermix does not talk in ${target.channel} chat ${target.chatId}; a job can only go to a chat the owner uses`);
    return running(target, `target ${spec}`);
  };
}
