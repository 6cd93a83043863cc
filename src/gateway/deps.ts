/**
 * What the gateway is built from: the services `ingest` and the work it
 * starts (`/background` turns) are handed by the composition root. Its own
 * module so that those pieces share the shape without importing each other.
 */
import type { Database } from "bun:sqlite";
import type { MainAgent } from "../agent/agent.ts";
import type { Compactor } from "../agent/compaction.ts";
import type { SkillLibrary } from "../agent/skills/library.ts";
import type { Persona } from "../agent/soul/persona.ts";
import type { UltraMode } from "../agent/ultra/engine.ts";
import type { Tool } from "../agent/tools/types.ts";
import type { TranscriptionEngine } from "../agent/transcription/index.ts";
import type { Config } from "../config/schema.ts";
import type { Fault } from "../kernel/fault-line.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { FetchedMedia, GatewayChannel, InboundMedia, InboundMessage, ReplyPort, ReplyTarget } from "../message/index.ts";
import type { ProviderEvent } from "../message/stream.ts";
import type { ConversationStore } from "../store/conversations.ts";
import type { IdempotencyStore } from "../store/idempotency.ts";
import type { Inbox } from "../store/inbox.ts";
import type { Job } from "../store/jobs.ts";
import type { BackgroundWork } from "./background.ts";
import type { ChannelLookup } from "./channel-facts.ts";
import type { Delivery, TextFile } from "./delivery.ts";
import type { ConversationQueue } from "./queue.ts";
import type { Audience } from "./roles.ts";
import type { SandboxControl } from "./sandbox-control.ts";

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
  /** A turn's provider outcome: a failure marks the provider degraded in health (its fault's class and status, never its words), a success ready again. */
  noteOutcome?(ok: boolean, fault?: Fault): void;
  /** The primary provider's name, for log lines. */
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

export interface GatewayDeps {
  /** Called as each message arrives (the daemon's memory settler). */
  onActivity?: () => void;
  /** Called with each message dropped because its sender is not authorized (setup's owner pairing listens). */
  onUnknownSender?: (message: InboundMessage) => void;
  config: Config;
  db: Database;
  channel: (name: GatewayChannel) => ChannelAccess | undefined;
  /** What each channel is (its profile): who is authorized on it, whether it has commands, how it shows a turn. */
  profiles: ChannelLookup;
  agent: AgentHandle;
  compactor: Compactor | null;
  conversations: ConversationStore;
  inbox: Inbox;
  delivery: Delivery;
  idempotency: IdempotencyStore;
  background: BackgroundWork;
  queue: ConversationQueue;
  /** SOUL.md and its revisions, for /soul. */
  persona?: Persona;
  /** Ultra mode, for /ultra; absent: /ultra is not available. */
  ultra?: UltraMode | null;
  /** The skills the assistant learns, for /skills. */
  skills?: SkillLibrary | null;
  /**
   * Tools the composition root offers besides react and send_attachment
   * (workspace, memory, jobs, skills…), for one turn: each feature decides
   * from the scope what it offers (e.g. only to the operator).
   */
  extraTools?: (scope: ToolScope) => Tool[];
  /** Scheduled jobs still to run that were made in, or deliver to, a conversation (/tasks, /stop). */
  upcomingJobs?: (conversation: string) => Job[];
  /** The workspace sandbox's state and confirmation codes (/sandbox, /confirm). */
  sandbox?: SandboxControl | null;
  /** A streaming engine for a real channel turn, or null when the channel does not stream. */
  stream?: (request: StreamRequest) => TurnStream | null;
  vision: boolean;
  model: string;
  workspace: string;
  /** Speech to text for voice notes and audio. */
  transcription: TranscriptionEngine;
  /** After this long without a word from the model, the reader sees an interim status (waiting_notice_ms); 0: never. */
  waitingNoticeMs?: number;
  telemetry: Telemetry;
  log: Logger;
}
