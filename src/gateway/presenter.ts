/**
 * The presentation layer as the gateway uses it: one render function for
 * recorded replies, and the streaming engine for real channel turns. Each
 * channel's dialect and limit come from its profile, through the lookup the
 * composition root hands in.
 */

import type { ChannelName, ChannelsConfig } from "../config/schema.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { createStreamer, plainChunks, renderReply, resolveStreamingMode, turnStreamingMode } from "../present/index.ts";
import type { ChannelLookup } from "./channel-facts.ts";
import type { Presenter } from "./delivery.ts";
import type { StreamRequest, TurnStream } from "./deps.ts";

/** The presenter for the channels `facts` describes. */
export function presenterFor(facts: ChannelLookup): Presenter {
  return {
    render: (markdown, channel) => renderReply(markdown, facts(channel).text),
    plain: (text, channel) => plainChunks(text, facts(channel).text),
  };
}

export interface StreamFactoryDeps {
  /** The channels' config in force: each turn reads its `streaming` key when it starts. */
  channels: () => ChannelsConfig;
  /** Each channel's profile: its dialect, and whether the streaming engine drives it at all. */
  facts: ChannelLookup;
  telemetry: Telemetry;
  log: Logger;
  /** max_reply_parts in force: past it a streamed reply stops and the whole answer follows as a file. */
  maxParts?: () => number;
}

/**
 * The streaming engine for one turn, or null when it does not stream: the
 * channel's `streaming` key, else what its port can do (edit → draft, else
 * block); an explicit draft on a channel that cannot edit does not stream.
 */
export function streamFactory(deps: StreamFactoryDeps): (request: StreamRequest) => TurnStream | null {
  let sessions = 0;
  return ({ channel, port, conversation, signal, fallback, sendFile }) => {
    const facts = deps.facts(channel);
    // Where the client shows the turn itself (an editor, the terminal), nothing streams; every other channel has its table.
    if (facts.streaming === null) return null;
    const configured = (deps.channels()[channel as ChannelName] as { streaming?: "off" | "draft" | "block" }).streaming;
    const mode = turnStreamingMode(resolveStreamingMode(configured, port.capabilities).mode, "channel", true);
    if (mode === "off") return null;
    const log = deps.log.child({ component: "stream", channel });
    const streamer = createStreamer({
      mode,
      port,
      channel: channel as ChannelName,
      platform: facts.text,
      sessionId: `${conversation}#${++sessions}`,
      telemetry: deps.telemetry,
      logger: log,
      fallback,
      sendAttachment: sendFile,
      ...(deps.maxParts !== undefined ? { maxParts: deps.maxParts() } : {}),
    });
    // A /stop ends the stream the moment it arrives, not when the agent notices: no timer or queued
    // send of the stopped reply goes out after it (the live card and the 💭 status are deleted).
    const onAbort = () => void streamer.stop().catch((error) => log.error("stopping the stream failed", { error: String(error) }));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    return {
      // Each event's port work is queued inside the streamer; a failure is logged there, never thrown into the turn.
      push: (event) => void streamer.push(event).catch((error) => log.error("streaming failed", { error: String(error) })),
      finish: (markdown) => streamer.finish(markdown),
      stop: () => streamer.stop(),
      cut: () => streamer.cut(),
    };
  };
}
