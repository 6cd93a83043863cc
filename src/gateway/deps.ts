/**
 * The shapes the gateway's pieces share without importing each other: who a
 * turn is for (as the features that offer tools see it), the live agent, a
 * turn's streaming sink, and how a channel is reached. What each piece needs
 * of the daemon is its own small interface beside it (`IntakeServices` in
 * ingest.ts, `TurnServices` in turn/engine.ts, `CommandServices` in
 * commands/index.ts, `JobRunnerDeps` in jobs/run.ts).
 */
import type { MainAgent } from "../agent/agent.ts";
import type { FetchedMedia, GatewayChannel, InboundMedia, ReplyPort, ReplyTarget } from "../message/index.ts";
import type { ProviderEvent } from "../message/stream.ts";
import type { TextFile } from "./delivery.ts";
import type { Audience } from "./roles.ts";

/** Who a turn is for, as features that offer tools see it. */
export interface ToolScope {
  channel: GatewayChannel;
  conversation: string;
  senderId: string;
  /** Whose memory and jobs the tools work in: the operator's, or the sender's own. */
  role: "operator" | "user";
  /** The row of the role table (src/gateway/roles.ts) and the kind of turn: what the turn may be offered. */
  audience: Audience;
}

/** The live MainAgent, or null while it restarts. */
export interface AgentHandle {
  /** False when no model provider is configured at all. */
  readonly configured: boolean;
  current(): MainAgent | null;
  restart(reason: string): void;
  /** The primary provider's name, for log lines about a turn no provider took. */
  readonly providerName?: string;
}

/** A streaming engine for one turn (see src/present/stream.ts). */
export interface TurnStream {
  push(event: ProviderEvent): void;
  finish(markdown: string): Promise<void>;
  stop(): Promise<void>;
  /** The model's stream broke: seal what the reader saw, marked as cut off. */
  cut(): Promise<void>;
}

export interface StreamRequest {
  channel: GatewayChannel;
  port: ReplyPort;
  conversation: string;
  /** The turn's signal: when it aborts (/stop), the stream stops at once — nothing more is sent. */
  signal: AbortSignal;
  /** Where the rest of the reply goes, whole and retried through outages, once a streamed send fails. */
  fallback: (markdown: string, files: TextFile[]) => Promise<void>;
  /** How a code block too big for a message is sent as a file: recorded and retried, its text inline if the file fails. */
  sendFile: (file: TextFile) => Promise<void>;
}

/** How a channel's adapter is reached from the gateway. */
export interface ChannelAccess {
  port(target: ReplyTarget): ReplyPort;
  /** Over `maxBytes` (or the channel's cap), rejects with MediaTooLarge. */
  fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia>;
  inboundMediaCap: number;
}
