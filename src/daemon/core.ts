/**
 * The core every entry point shares — the daemon, and `fermix ask`/`chat`
 * when no daemon runs: the database and its stores, the agent, the gateway
 * and the inbox dispatcher. The daemon adds HTTP, channels and sockets.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { TurnRequest } from "../agent/agent.ts";
import { ComputerDesk } from "../agent/computer/desk.ts";
import { computerTool } from "../agent/computer/tool.ts";
import { jobTools } from "../agent/jobs/tools.ts";
import { McpHub } from "../agent/mcp/hub.ts";
import { memorySection } from "../agent/memory/section.ts";
import { memoryTools } from "../agent/memory/tools.ts";
import type { ProviderDeps } from "../agent/providers/index.ts";
import type { SandboxBackend } from "../agent/sandbox/detect.ts";
import { DAY_MS, SkillLibrary } from "../agent/skills/library.ts";
import { skillsSection, skillTools } from "../agent/skills/tools.ts";
import { Persona } from "../agent/soul/persona.ts";
import { AgentSupervisor } from "../agent/supervisor.ts";
import type { Tool } from "../agent/tools/types.ts";
import { webTools } from "../agent/tools/web/index.ts";
import { createTranscription } from "../agent/transcription/index.ts";
import { UltraMode } from "../agent/ultra/engine.ts";
import { localUser } from "../channels/local-user.ts";
import { VoiceDesk, voiceConversation } from "../channels/realtime/desk.ts";
import { realtimeProfile } from "../channels/realtime/profile.ts";
import { voiceRecap } from "../channels/realtime/voice-prompt.ts";
import { profileOf } from "../channels/registry.ts";
import type { LoadedConfig } from "../config/index.ts";
import { LiveConfig } from "../config/live.ts";
import { realtimeSettings } from "../config/realtime.ts";
import { ownerTimeZone } from "../config/timezone.ts";
import { transcriptionSettings } from "../config/transcription.ts";
import { webSettings } from "../config/web.ts";
import { BackgroundWork } from "../gateway/background.ts";
import { startBackgroundTurn } from "../gateway/background-turn.ts";
import { Delivery, type Presenter } from "../gateway/delivery.ts";
import type { ToolScope } from "../gateway/deps.ts";
import { Dispatcher } from "../gateway/dispatch.ts";
import { type ChannelAccess, Gateway } from "../gateway/ingest.ts";
import { jobRunner } from "../gateway/jobs/run.ts";
import { Scheduler, targetConversation } from "../gateway/jobs/scheduler.ts";
import { targetResolver } from "../gateway/jobs/targets.ts";
import { presenterFor, streamFactory } from "../gateway/presenter.ts";
import { ConversationQueue, ShutdownInterrupt } from "../gateway/queue.ts";
import { StrangerTally } from "../gateway/strangers.ts";
import { TaskSupervisor } from "../gateway/supervisor.ts";
import { TurnEngine } from "../gateway/turn/engine.ts";
import { describeError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";
import { createSettler } from "../kernel/settle.ts";
import { Telemetry } from "../kernel/telemetry.ts";
import type { GatewayChannel, InboundMessage } from "../message/index.ts";
import { ConfirmationStore } from "../store/confirmations.ts";
import { ConversationStore } from "../store/conversations.ts";
import { checkpointEvery, openDatabase } from "../store/db.ts";
import { IdempotencyStore, inboundTtlMs } from "../store/idempotency.ts";
import { Inbox } from "../store/inbox.ts";
import { JobStore } from "../store/jobs.ts";
import { MemoryStore } from "../store/memory.ts";
import { Outbox } from "../store/outbox.ts";
import { sweep } from "../store/retention.ts";
import { SkillStore } from "../store/skills.ts";
import { SoulStore } from "../store/soul.ts";
import { ensureHome } from "./home.ts";
import { buildSandbox, type Sandbox } from "./sandbox.ts";

/** How much accepted work may be in flight before webhooks are answered 503. */
export const HANDOFF_CAPACITY = 512;
const SWEEP_EVERY_MS = 10 * 60_000;
/** How often the WAL is checkpointed (store/db.ts checkpointEvery): off the commit path, at most this often. */
const CHECKPOINT_EVERY_MS = 1000;

export interface CoreOptions {
  loaded: LoadedConfig;
  log: Logger;
  /** How replies are rendered; default: each channel's dialect and limit from its profile. */
  presenter?: Presenter;
  /** Stream replies on real channel turns (the daemon); off, each reply is delivered whole. */
  streaming?: boolean;
  providerDeps?: ProviderDeps;
  handoffCapacity?: number;
  /** Each message dropped for an unauthorized sender (setup's owner pairing). */
  onUnknownSender?: (message: InboundMessage) => void;
  /** The environment the sandbox reads ($HOME, $PATH, variables its rules pass through); default process.env. */
  env?: Record<string, string | undefined>;
  /** The OS sandbox for run_command; undefined: detected; null: none (tests). */
  sandboxBackend?: SandboxBackend | null;
}

export interface Core {
  /** The config in force: replaced by reconfigure(). */
  readonly loaded: LoadedConfig;
  /** The one live source of the config in force, for consumers that outlive a reload. */
  live: LiveConfig;
  db: Database;
  log: Logger;
  telemetry: Telemetry;
  idempotency: IdempotencyStore;
  inbox: Inbox;
  outbox: Outbox;
  conversations: ConversationStore;
  /** Long-term memory (facts kept across conversations). */
  memory: MemoryStore;
  jobs: JobStore;
  /** Runs scheduled jobs; started by the daemon only (`fermix ask` without a daemon stores jobs for it). */
  scheduler: Scheduler;
  delivery: Delivery;
  agents: AgentSupervisor;
  /** SOUL.md and its revisions: the persona every turn reads, changed through /soul. */
  persona: Persona;
  gateway: Gateway;
  dispatcher: Dispatcher;
  supervisor: TaskSupervisor;
  queue: ConversationQueue;
  background: BackgroundWork;
  /** The channels reachable for replies and media, registered as they start. */
  channels: Map<GatewayChannel, ChannelAccess>;
  /** Apply a reloaded config: the agent on the new primary provider, the gateway on the new trust and streaming rules. */
  reconfigure(next: LoadedConfig): void;
  /** The workspace sandbox: its state, codes and tools; `sandbox.press` answers button presses. */
  sandbox: Sandbox;
  /** The owner's desktop (computer use): its session, if one runs. */
  desk: ComputerDesk;
  /** Realtime voice's sessions and companions (the daemon serves them on its socket and the /talk page). */
  voice: VoiceDesk;
  /** The owner's MCP servers and their tools; started by the daemon (and by `fermix ask` without one), following reloads. */
  mcp: McpHub;
  /** Replay the inbox and resume the outbox: what a crash left behind. */
  recover(): Promise<void>;
  /** Stop background work, wait briefly for turns in flight, close the database. */
  close(graceMs?: number): Promise<void>;
}

export function buildCore(options: CoreOptions): Core {
  const { loaded, log } = options;
  const live = new LiveConfig(loaded);
  // What a reload cannot change (the home's paths); everything else is read from `live` when used.
  const { config, paths } = loaded;
  ensureHome(paths);
  const db = openDatabase(paths.database);
  const stopCheckpoints = checkpointEvery(db, CHECKPOINT_EVERY_MS);
  const telemetry = new Telemetry();
  if (log.enabled("debug")) telemetry.onAny((event) => log.debug("telemetry", { event: event.name, ...event.metadata, ...event.measurements }));

  // How long a channel's inbound keys live follows the config in force.
  const idempotency = new IdempotencyStore(db, { inboundTtlMs: (channel) => inboundTtlMs(live.config, profileOf(channel as GatewayChannel)) });
  const sweepLog = log.child({ component: "retention" });
  const runSweep = (withInbox: boolean) => {
    const retention = { outboxDays: live.config.fermix_core.retention.outbox_days, inboxDays: live.config.fermix_core.retention.inbox_days };
    try {
      const swept = sweep({ idempotency, outbox, inbox, codes, spoolDir: join(paths.home, "spool"), now: Date.now }, retention, { inbox: withInbox });
      if (swept.inbox > 0) sweepLog.warn("inbox entries that never completed were given up", { entries: swept.inbox, days: retention.inboxDays });
      if (swept.outbox + swept.spool > 0) sweepLog.debug("old replies swept", { outbox_parts: swept.outbox, spool_dirs: swept.spool });
    } catch (error) {
      sweepLog.error("sweeping old rows failed", { error: describeError(error) });
    }
  };
  const inbox = new Inbox(db, idempotency);
  const outbox = new Outbox(db);
  const codes = new ConfirmationStore(db);
  // At start the inbox is left alone: its entries are replayed first.
  runSweep(false);
  const sweeper = setInterval(() => runSweep(true), SWEEP_EVERY_MS);
  sweeper.unref();
  const conversations = new ConversationStore(db);
  const memory = new MemoryStore(db);
  const jobs = new JobStore(db);
  const channels = new Map<GatewayChannel, ChannelAccess>();
  const delivery = new Delivery({
    outbox,
    presenter: options.presenter ?? presenterFor(profileOf),
    channels: profileOf,
    rawPort: (channel, target) => channels.get(channel)?.port(target),
    spoolDir: join(paths.home, "spool"),
    telemetry,
    log: log.child({ component: "delivery" }),
    // Read from the config in force at each use: a reload changes them.
    horizonMs: () => live.config.fermix_core.delivery.retry_horizon_minutes * 60_000,
    holdMs: () => live.config.fermix_core.delivery.hold_seconds * 1000,
    maxParts: () => live.config.fermix_core.max_reply_parts,
  });
  const persona = new Persona({
    store: new SoulStore(db),
    path: paths.soul,
    conversations,
    model: () => agents.primaryModel(),
    ttlMs: config.fermix_core.soul.confirm_ttl_seconds * 1000,
    log: log.child({ component: "soul" }),
  });
  // SOUL.md exists (the shipped default on first run) and its history starts before the first turn.
  persona.sync();
  // Skills in <workspace>/skills/, curated with /skills; the park time follows config reloads.
  const skills = new SkillLibrary({
    store: new SkillStore(db),
    dir: join(paths.workspace, "skills"),
    workspace: paths.workspace,
    parkAfterMs: () => live.config.fermix_core.skills.park_after_days * DAY_MS,
    log: log.child({ component: "skills" }),
  });
  // The sections every turn's instructions get, one line per feature.
  const memoryPrompt = (request: TurnRequest) => {
    const settings = live.config.fermix_core.memory;
    return settings.enabled ? memorySection(memory, { items: settings.prompt_items, chars: settings.prompt_chars })(request) : [];
  };
  // The owner's latest voice conversation, for their text turns (realtime voice keeps its own history).
  // The account the daemon runs as cannot change while it runs: its conversation key is worked out once, not per turn.
  const ownerVoice = voiceConversation(localUser());
  const recap = voiceRecap({ conversation: () => ownerVoice, conversations, now: Date.now });
  const sectionFeatures = [memoryPrompt, skillsSection(skills), recap];
  const sections = (request: TurnRequest) => sectionFeatures.flatMap((section) => section(request));
  const providerLog = log.child({ component: "provider" });
  const agents = new AgentSupervisor({
    config,
    soul: () => persona.current(),
    conversations,
    sections,
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
    // A request handed from a failing provider to the next: the operator sees the outage, the dashboard which provider stood in.
    onFailover: (from, to, error) => {
      providerLog.warn("model provider failed before answering; the next one takes the request", {
        provider: from,
        next: to,
        fault: error.fault,
        ...(error.status !== undefined ? { status: error.status } : {}),
        reason: error.message,
      });
      telemetry.emit("provider.failover", { measurements: { count: 1 }, metadata: { from, to, class: error.fault } });
    },
  });
  const ultra = new UltraMode({
    model: () => agents.primaryModel(),
    conversations,
    soul: () => persona.current(),
    sections,
    settings: () => {
      const settings = live.config.fermix_core.ultra;
      return { maxParts: settings.max_parts, concurrency: settings.concurrency, maxTokens: settings.max_tokens };
    },
    log: log.child({ component: "ultra" }),
  });
  const queue = new ConversationQueue();
  const background = new BackgroundWork();
  const sandbox = buildSandbox({
    live,
    db,
    codes,
    log,
    telemetry,
    env: options.env ?? process.env,
    ...(options.sandboxBackend !== undefined ? { backend: options.sandboxBackend } : {}),
  });
  // The transcription backend follows the config in force; made again only when that config changes.
  let transcription: { config: LoadedConfig["config"]; engine: ReturnType<typeof createTranscription> } | undefined;
  const transcriptionNow = () => {
    if (transcription?.config !== live.config) transcription = { config: live.config, engine: createTranscription(transcriptionSettings(live.config)) };
    return transcription.engine;
  };
  const stream = options.streaming
    ? streamFactory({ channels: () => live.config.fermix_channels, facts: profileOf, telemetry, log, maxParts: () => live.config.fermix_core.max_reply_parts })
    : undefined;
  // The owner's desktop: nothing runs until the computer tool's first action; settings are read when a session starts.
  const computerSettings = () => live.config.fermix_core.computer;
  const desk = new ComputerDesk({
    settings: () => {
      const settings = computerSettings();
      return { display: settings.display, width: settings.width, height: settings.height, start: settings.start, idleMs: settings.idle_minutes * 60_000 };
    },
    dir: join(paths.home, "desktop"),
    env: options.env ?? process.env,
    launch: () => ({ ...sandbox.programs(), root: process.getuid?.() === 0 }),
    telemetry,
    log: log.child({ component: "computer" }),
  });
  const resolveTarget = targetResolver({ config: () => live.config, channels: profileOf, conversations, running: (channel) => channels.has(channel) });
  const webLog = log.child({ component: "web" });
  const mcp = new McpHub({ servers: () => live.config.fermix_core.mcp.servers, home: paths.home, log: log.child({ component: "mcp" }), telemetry });
  // Tools each feature offers a turn, one line per feature.
  const features: Array<(scope: ToolScope) => Tool[]> = [
    () => webTools({ settings: () => webSettings(live.config), log: webLog, telemetry }),
    () => mcp.tools(),
    (scope) => sandbox.tools(scope),
    () => skillTools(skills),
    () => (live.config.fermix_core.memory.enabled ? memoryTools(memory) : []),
    (scope) =>
      computerSettings().enabled
        ? [
            computerTool({
              desk,
              settings: () => {
                const settings = computerSettings();
                return { maxActions: settings.max_actions, display: settings.display, width: settings.width, height: settings.height };
              },
              approve: (ask, ctx) => sandbox.approve(ask, ctx),
              direct: scope.audience.direct,
              telemetry,
            }),
          ]
        : [],
    () =>
      jobTools({
        store: jobs,
        timezone: ownerTimeZone(live.config),
        now: Date.now,
        resolveTarget,
        changed: () => scheduler.wake(),
        schedulerRunning: () => scheduler.running,
      }),
  ];
  const extraTools = (scope: ToolScope) => features.flatMap((offer) => offer(scope));
  // The role table's rule for MCP tools reads each server's roles in force; a disabled server's tools go to nobody.
  const mcpRoles = (server: string) => {
    const configured = live.config.fermix_core.mcp.servers[server];
    return configured?.enabled ? configured.roles : undefined;
  };
  const upcomingJobs = (conversation: string) =>
    jobs.live().filter((job) => job.origin.conversation === conversation || targetConversation(job) === conversation);
  const engine = new TurnEngine({
    agent: agents,
    conversations,
    delivery,
    db,
    idempotency,
    workspace: paths.workspace,
    extraTools,
    mcpRoles,
    sharedToolsOn: (channel, chatId) => sandbox.control.store.sharedToolsOn(channel, chatId),
    profiles: profileOf,
    ...(stream ? { stream } : {}),
    waitingNoticeMs: () => live.config.fermix_core.delivery.waiting_notice_ms,
    compactor: () => agents.compactor,
    telemetry,
    log: log.child({ component: "gateway" }),
  });
  // A stranger's message is refused before it is recorded (the dispatcher's admit) or, replayed, by the gateway: counted here.
  const strangers = new StrangerTally(log.child({ component: "gateway" }));
  const gateway = new Gateway({
    strangers,
    // Trust, the provider's vision and model and the transcription backend: read from what is in force, message by message.
    config: () => live.config,
    channel: (name) => channels.get(name),
    profiles: profileOf,
    delivery,
    inbox,
    queue,
    media: () => ({ vision: agents.primary?.config.vision ?? true, model: agents.primary?.config.model ?? "none", transcription: transcriptionNow() }),
    engine,
    commands: {
      background,
      conversations,
      compactor: () => agents.compactor,
      startBackground: (request) => startBackgroundTurn({ engine, background, agent: agents }, request),
      persona,
      ultra,
      skills,
      sandbox: sandbox.control,
      upcomingJobs,
      desk,
      spoolDir: join(paths.home, "spool"),
      liveVoice: () => voice.status().live,
    },
    onActivity: createSettler(),
    ...(options.onUnknownSender ? { onUnknownSender: options.onUnknownSender } : {}),
    telemetry,
    log: log.child({ component: "gateway" }),
  });
  const scheduler = new Scheduler({
    jobs,
    background,
    run: jobRunner({ engine, channel: (name) => channels.get(name), profiles: profileOf, config: () => live.config, outbox, log }),
    telemetry,
    log: log.child({ component: "scheduler" }),
  });
  // Realtime voice's sessions and companions: the daemon adds the socket and the /talk page (src/daemon/realtime.ts).
  const voice = new VoiceDesk({
    settings: () => realtimeSettings(live.config),
    owner: localUser,
    conversations,
    soul: () => persona.current(),
    sections,
    extraTools,
    mcpRoles,
    workspace: paths.workspace,
    idempotency,
    // Judged like any press on the confirmation path: here the owner, on a local surface.
    press: (press) =>
      sandbox.press({ channel: realtimeProfile.name, chatId: press.chatId, senderId: press.senderId, messageId: "", data: press.data, direct: true }),
    log,
    telemetry,
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
    viaWebhook: (channel) => profileOf(channel).mode === "webhook",
    admit: (_channel, message) => gateway.authorize(message) !== null,
    telemetry,
    log: log.child({ component: "dispatch" }),
  });

  let closed = false;
  const core: Core = {
    get loaded() {
      return live.loaded;
    },
    live,
    db,
    log,
    telemetry,
    idempotency,
    inbox,
    outbox,
    conversations,
    memory,
    jobs,
    scheduler,
    delivery,
    agents,
    persona,
    gateway,
    dispatcher,
    supervisor,
    queue,
    background,
    channels,
    sandbox,
    desk,
    voice,
    mcp,
    reconfigure(next) {
      live.replace(next);
      agents.reconfigure(next.config);
      mcp.apply();
    },
    async recover() {
      delivery.resume();
      dispatcher.replay();
    },
    async close(graceMs = 2000) {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      voice.endAll("shutdown");
      strangers.close();
      // First the scheduler, so the runs the stop cuts short stay claimed (they run again at the next start).
      scheduler.stop();
      const retriers = delivery.close();
      background.stop();
      await Promise.race([dispatcher.flush(), Bun.sleep(graceMs)]);
      // Let turns finish for a moment; then abandon them. Their inbox entries stay and replay at next start.
      await Promise.race([supervisor.whenIdle(), Bun.sleep(graceMs)]);
      queue.stopAll(new ShutdownInterrupt());
      await Promise.race([Promise.all([supervisor.whenIdle(), retriers]), Bun.sleep(500)]);
      // No display or program of a desktop session outlives the daemon.
      await desk.close();
      // A stdio server's program is ended with its connection.
      await Promise.race([mcp.stop(), Bun.sleep(graceMs)]);
      stopCheckpoints();
      db.close();
    },
  };
  return core;
}
