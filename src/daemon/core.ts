/**
 * The core every entry point shares — the daemon, and `fermix ask`/`chat`
 * when no daemon runs: the database and its stores, the agent, the gateway
 * and the inbox dispatcher. The daemon adds HTTP, channels and sockets.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { ProviderDeps } from "../agent/providers/index.ts";
import { AgentSupervisor } from "../agent/supervisor.ts";
import { createTranscription } from "../agent/transcription/index.ts";
import { transcriptionSettings } from "../config/transcription.ts";
import type { LoadedConfig } from "../config/index.ts";
import { BackgroundWork } from "../gateway/background.ts";
import { Delivery, type Presenter } from "../gateway/delivery.ts";
import { Dispatcher } from "../gateway/dispatch.ts";
import { type ChannelAccess, Gateway } from "../gateway/ingest.ts";
import { streamFactory } from "../gateway/presenter.ts";
import type { GatewayChannel } from "../message/index.ts";
import { ConversationQueue, ShutdownInterrupt } from "../gateway/queue.ts";
import { TaskSupervisor } from "../gateway/supervisor.ts";
import { ConversationStore } from "../store/conversations.ts";
import { openDatabase } from "../store/db.ts";
import { IdempotencyStore } from "../store/idempotency.ts";
import { Inbox } from "../store/inbox.ts";
import { Outbox } from "../store/outbox.ts";
import { ensureHome } from "./home.ts";
import { buildSandbox, type Sandbox } from "./sandbox.ts";
import type { SandboxBackend } from "../agent/sandbox/detect.ts";
import { createSettler } from "../kernel/settle.ts";
import type { Logger } from "../kernel/log.ts";
import { Telemetry } from "../kernel/telemetry.ts";

/** How much accepted work may be in flight before webhooks are answered 503. */
export const HANDOFF_CAPACITY = 512;
const SWEEP_EVERY_MS = 10 * 60_000;

export interface CoreOptions {
  loaded: LoadedConfig;
  log: Logger;
  presenter: Presenter;
  /** Stream replies on real channel turns (the daemon); off, each reply is delivered whole. */
  streaming?: boolean;
  providerDeps?: ProviderDeps;
  handoffCapacity?: number;
  /** The environment the sandbox reads ($HOME, $PATH, variables its rules pass through); default process.env. */
  env?: Record<string, string | undefined>;
  /** The OS sandbox for run_command; undefined: detected; null: none (tests). */
  sandboxBackend?: SandboxBackend | null;
}

export interface Core {
  loaded: LoadedConfig;
  db: Database;
  log: Logger;
  telemetry: Telemetry;
  idempotency: IdempotencyStore;
  inbox: Inbox;
  outbox: Outbox;
  conversations: ConversationStore;
  delivery: Delivery;
  agents: AgentSupervisor;
  gateway: Gateway;
  dispatcher: Dispatcher;
  supervisor: TaskSupervisor;
  queue: ConversationQueue;
  background: BackgroundWork;
  /** The channels reachable for replies and media, registered as they start. */
  channels: Map<GatewayChannel, ChannelAccess>;
  /** The workspace sandbox: its state, codes and tools; `sandbox.press` answers button presses. */
  sandbox: Sandbox;
  /** Replay the inbox and resume the outbox: what a crash left behind. */
  recover(): Promise<void>;
  /** Stop background work, wait briefly for turns in flight, close the database. */
  close(graceMs?: number): Promise<void>;
}

export function buildCore(options: CoreOptions): Core {
  const { loaded, log } = options;
  const { config, paths } = loaded;
  ensureHome(paths);
  const db = openDatabase(paths.database);
  const telemetry = new Telemetry();
  if (log.enabled("debug")) telemetry.onAny((event) => log.debug("telemetry", { event: event.name, ...event.metadata, ...event.measurements }));

  const idempotency = new IdempotencyStore(db);
  idempotency.sweep();
  const sweeper = setInterval(() => idempotency.sweep(), SWEEP_EVERY_MS);
  sweeper.unref();
  const inbox = new Inbox(db, idempotency);
  const outbox = new Outbox(db);
  const conversations = new ConversationStore(db);
  const channels = new Map<GatewayChannel, ChannelAccess>();
  const delivery = new Delivery({
    outbox,
    presenter: options.presenter,
    rawPort: (channel, target) => channels.get(channel)?.port(target),
    spoolDir: join(paths.home, "spool"),
    telemetry,
    log: log.child({ component: "delivery" }),
    horizonMs: config.fermix_core.delivery.retry_horizon_minutes * 60_000,
    maxParts: config.fermix_core.max_reply_parts,
  });
  const providerLog = log.child({ component: "provider" });
  const agents = new AgentSupervisor({
    config,
    soulPath: paths.soul,
    conversations,
    log: log.child({ component: "agent" }),
    providerDeps: {
      ...options.providerDeps,
      // Every retry of a model request is logged and counted: an operator sees an outage as it happens.
      onRetry: (retry) => {
        providerLog.warn("model request failed; retrying", {
          provider: retry.provider,
          attempt: retry.attempt,
          retry_in_ms: retry.delayMs,
          ...(retry.status !== undefined ? { status: retry.status } : {}),
          ...(retry.retryAfterMs !== undefined ? { retry_after_ms: retry.retryAfterMs } : {}),
          reason: retry.reason,
        });
        telemetry.emit("provider.retry", {
          measurements: { attempt: retry.attempt, delay_ms: retry.delayMs },
          metadata: { provider: retry.provider, reason: retry.status !== undefined ? `http_${retry.status}` : "network" },
        });
        options.providerDeps?.onRetry?.(retry);
      },
    },
  });
  const queue = new ConversationQueue();
  const background = new BackgroundWork();
  const sandbox = buildSandbox({
    loaded,
    db,
    log,
    telemetry,
    env: options.env ?? process.env,
    ...(options.sandboxBackend !== undefined ? { backend: options.sandboxBackend } : {}),
  });
  const gateway = new Gateway({
    onActivity: createSettler(),
    config,
    db,
    channel: (name) => channels.get(name),
    agent: agents,
    compactor: agents.compactor,
    conversations,
    inbox,
    delivery,
    idempotency,
    background,
    queue,
    extraTools: (scope) => sandbox.tools(scope),
    sandbox: sandbox.control,
    ...(options.streaming ? { stream: streamFactory({ channels: config.fermix_channels, telemetry, log }) } : {}),
    vision: agents.primary?.config.vision ?? true,
    model: agents.primary?.config.model ?? "none",
    workspace: paths.workspace,
    waitingNoticeMs: config.fermix_core.delivery.waiting_notice_ms,
    transcription: createTranscription(transcriptionSettings(config)),
    telemetry,
    log: log.child({ component: "gateway" }),
  });
  const supervisor = new TaskSupervisor(options.handoffCapacity ?? HANDOFF_CAPACITY, log.child({ component: "supervisor" }));
  const dispatcher = new Dispatcher({
    db,
    inbox,
    supervisor,
    gateway,
    albumDebounceMs: {
      whatsapp: config.fermix_channels.whatsapp.album_debounce_ms,
      telegram: config.fermix_channels.telegram.album_debounce_ms,
    },
    telemetry,
    log: log.child({ component: "dispatch" }),
  });

  let closed = false;
  return {
    loaded,
    db,
    log,
    telemetry,
    idempotency,
    inbox,
    outbox,
    conversations,
    delivery,
    agents,
    gateway,
    dispatcher,
    supervisor,
    queue,
    background,
    channels,
    sandbox,
    async recover() {
      delivery.resume();
      dispatcher.replay();
    },
    async close(graceMs = 2000) {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      delivery.close();
      background.stop();
      await Promise.race([dispatcher.flush(), Bun.sleep(graceMs)]);
      // Let turns finish for a moment; then abandon them. Their inbox entries stay and replay at next start.
      await Promise.race([supervisor.whenIdle(), Bun.sleep(graceMs)]);
      queue.stopAll(new ShutdownInterrupt());
      await Promise.race([supervisor.whenIdle(), Bun.sleep(500)]);
      db.close();
    },
  };
}
