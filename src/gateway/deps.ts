/**
 * What the gateway is built from: the services `ingest` and the work it
 * starts (`/background` turns) are handed by the composition root. Its own
 * module so that those pieces share the shape without importing each other.
 */
import type { Database } from "bun:sqlite";
import type { MainAgent } from "../agent/agent.ts";
import type { Compactor } from "../agent/compaction.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { FetchedMedia, GatewayChannel, InboundMedia, InboundMessage, ReplyPort, ReplyTarget } from "../message/index.ts";
import type { ProviderEvent } from "../message/stream.ts";
import type { ConversationStore } from "../store/conversations.ts";
import type { IdempotencyStore } from "../store/idempotency.ts";
import type { Inbox } from "../store/inbox.ts";
import type { BackgroundWork } from "./background.ts";
import type { Delivery } from "./delivery.ts";
import type { ConversationQueue } from "./queue.ts";

/** The live MainAgent, or null while it restarts. */
export interface AgentHandle {
  /** False when no model provider is configured at all. */
  readonly configured: boolean;
  current(): MainAgent | null;
  restart(reason: string): void;
}

/** A streaming engine for one turn (see src/present/stream.ts). */
export interface TurnStream {
  push(event: ProviderEvent): void;
  finish(markdown: string): Promise<void>;
  stop(): Promise<void>;
}

export interface StreamRequest {
  channel: GatewayChannel;
  port: ReplyPort;
  conversation: string;
}

/** How a channel's adapter is reached from the gateway. */
export interface ChannelAccess {
  port(target: ReplyTarget): ReplyPort;
  fetchMedia(media: InboundMedia, signal?: AbortSignal): Promise<FetchedMedia>;
  inboundMediaCap: number;
}

export interface GatewayDeps {
  /** Called as each message arrives (the daemon's memory settler). */
  onActivity?: () => void;
  /** Called with each message dropped because its sender is not authorized (setup's owner pairing listens). */
  onUnknownSender?: (message: InboundMessage) => void;
  config: Config;
  db: Database;
  channel: (name: GatewayChannel) => ChannelAccess | undefined;
  agent: AgentHandle;
  compactor: Compactor | null;
  conversations: ConversationStore;
  inbox: Inbox;
  delivery: Delivery;
  idempotency: IdempotencyStore;
  background: BackgroundWork;
  queue: ConversationQueue;
  /** A streaming engine for a real channel turn, or null when the channel does not stream. */
  stream?: (request: StreamRequest) => TurnStream | null;
  vision: boolean;
  model: string;
  workspace: string;
  transcribe?: (audio: FetchedMedia) => Promise<string>;
  telemetry: Telemetry;
  log: Logger;
}
