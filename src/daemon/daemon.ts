/**
 * The composition root: the one place that wires the daemon together from
 * config — the core, the channel adapters, the HTTP app with its webhook
 * routes, and the local sockets. Everything it builds is handed its
 * dependencies; nothing reaches for globals.
 */
import { rmSync } from "node:fs";
import type { UnixSocketListener } from "bun";
import type { ProviderDeps } from "../agent/providers/index.ts";
import { startControlServer } from "../channels/cli/server.ts";
import { adapterOf, profileOf } from "../channels/registry.ts";
import type { ChannelAdapter } from "../channels/types.ts";
import { channelReadiness } from "../config/channels.ts";
import { isLoopbackBind, resolveHttp } from "../config/http.ts";
import { currentMtime, type LoadedConfig, loadConfig } from "../config/index.ts";
import type { Env } from "../config/load.ts";
import { CHANNEL_NAMES, type ChannelName, type Config } from "../config/schema.ts";
import type { Presenter } from "../gateway/delivery.ts";
import { createApp, socketRoutes } from "../http/app.ts";
import { type HttpServer, serveHttp } from "../http/server.ts";
import { webhookRoutes } from "../http/webhooks/index.ts";
import type { ReloadResult } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { VERSION } from "../version.ts";
import { ChannelSupervisor } from "./channels.ts";
import { buildCore, type Core } from "./core.ts";
import { exposures } from "./exposure.ts";
import { buildHealthReport, type ChannelRuntimeState, type HealthReport } from "./health.ts";
import { UnknownSenderWatch } from "./pairing.ts";
import { buildRealtime } from "./realtime.ts";
import { reloadDaemon } from "./reload.ts";
import { buildWeb, type SetupLink, type Web } from "./web.ts";

export interface DaemonOptions {
  env: Env;
  log: Logger;
  /** How replies are rendered; default: each channel's profile. */
  presenter?: Presenter;
  providerDeps?: ProviderDeps;
}

export interface Daemon {
  url: URL;
  /** The config in force (replaced by reload()). */
  readonly loaded: LoadedConfig;
  core: Core;
  telemetry: Telemetry;
  report(): HealthReport;
  /**
   * Re-read config.toml and the secrets and apply them without a restart:
   * the agent on the new primary provider, channels whose config changed
   * restarted (started, stopped). What only a restart applies is reported.
   */
  reload(): Promise<ReloadResult>;
  /** A one-time link to the setup page (what `fermix run` prints while setup is required, and `fermix setup --web`). */
  setupLink(): SetupLink;
  /** Bound beyond loopback: the link with this start's dashboard token, which `fermix run` prints once. Undefined on loopback. */
  dashboardLink(): string | undefined;
  /** Close the server, the channels and the database; remove the sockets. Idempotent. */
  stop(): Promise<void>;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { env, log } = options;
  // Where start-up time goes, one debug line when the daemon is up (FERMIX_LOG_LEVEL=debug): the figures
  // behind docs/performance.md, reproducible on any machine without a profiling build.
  let phaseStart = performance.now();
  const phases: Record<string, number> = { runtime_and_imports_ms: phaseStart };
  const phase = (name: string) => {
    const now = performance.now();
    phases[`${name}_ms`] = now - phaseStart;
    phaseStart = now;
  };
  let loaded = await loadConfig(env);
  phase("config");
  log.redactor.add(...loaded.secretValues);
  for (const warning of loaded.warnings) log.warn(warning, { component: "config" });
  const http = resolveHttp(env, loaded.config.fermix_core.http);
  if (!loaded.fileExists) log.warn("no config.toml yet: run `fermix setup`", { path: loaded.paths.config });

  const pairing = new UnknownSenderWatch();
  const core = buildCore({
    loaded,
    log,
    ...(options.presenter ? { presenter: options.presenter } : {}),
    streaming: true,
    onUnknownSender: (message) => pairing.notify(message),
    ...(options.providerDeps ? { providerDeps: options.providerDeps } : {}),
  });
  if (!core.agents.configured) log.warn("no model provider configured: turns will be answered with a pointer to `fermix setup`");
  phase("core");

  const adapters = new Map<ChannelName, ChannelAdapter>();
  const missing = new Map<ChannelName, ChannelRuntimeState>();
  /** Past the first start: a refusal now comes from a reload. */
  let started = false;
  /** The adapter for a channel the config says to serve (undefined: not served, or not in this build). */
  const buildAdapter = async (name: ChannelName, config: Config): Promise<ChannelAdapter | undefined> => {
    missing.delete(name);
    core.channels.delete(name);
    const readiness = channelReadiness(config, name, profileOf(name));
    if (readiness.kind === "refused") log.warn(started ? "channel refused on reload" : "channel refused at start", { channel: name, reason: readiness.reason });
    if (readiness.kind === "unconfigured") log.warn("channel enabled but not configured", { channel: name, missing: readiness.missing.join(",") });
    if (readiness.kind !== "servable") return undefined;
    const load = adapterOf(name);
    if (!load) {
      missing.set(name, { status: "failed", process_alive: false, detail: "adapter not available in this build" });
      return undefined;
    }
    const adapter = (await load())(config);
    core.channels.set(name, {
      // Every call to a chat that goes through is seen by delivery: a part refused while others go is set aside.
      port: (target) => core.delivery.watch(name, target, adapter.replyPort(target)),
      fetchMedia: (media, signal, maxBytes) => adapter.fetchMedia(media, signal, maxBytes),
      inboundMediaCap: adapter.inboundMediaCap,
    });
    return adapter;
  };
  for (const name of CHANNEL_NAMES) {
    const adapter = await buildAdapter(name, loaded.config);
    if (adapter) adapters.set(name, adapter);
  }
  started = true;
  phase("adapters");

  const channels = new ChannelSupervisor(
    adapters,
    (name) => ({
      // Read when the adapter starts: after a reload, the new config.
      config: loaded.config,
      paths: loaded.paths,
      db: core.db,
      log: log.child({ component: name }),
      telemetry: core.telemetry,
      submit: (items, commit) => core.dispatcher.submit(name, items, commit),
      ingest: (message, options) => core.gateway.ingest(message, options),
      stopConversation: (key) => void core.queue.stop(key),
      press: (press) => core.sandbox.press(press),
    }),
    log.child({ component: "channels" }),
  );
  const sockets: string[] = [];
  let server: HttpServer | undefined;
  /** Changes a reload saw that only a restart applies. */
  let restartRequired: string[] = [];
  let control: UnixSocketListener<unknown> | undefined;
  let web: Web | undefined;
  const realtime = buildRealtime(core, log);
  const closeAll = async () => {
    realtime.stop();
    web?.stop();
    await server?.stop();
    control?.stop(true);
    for (const socket of sockets) rmSync(socket, { force: true });
    await channels.stopAll();
    await core.close();
  };

  try {
    // Files only the owner should read, open to others: said once at start, and in health until fixed.
    for (const problem of exposures(loaded)) log.warn("file permissions expose fermix's data", { problem });
    const report = () =>
      buildHealthReport({
        version: VERSION,
        now: new Date(),
        loaded,
        channels: new Map([...missing, ...[...adapters.keys()].map((name) => [name, channels.state(name)!] as const)]),
        databaseReady: true,
        restartRequired: restartRequired.length > 0 || currentMtime(loaded.paths.config) !== loaded.fileMtimeMs,
        providers: core.agents.providerStates(),
        sendTrouble: (channel) => core.delivery.trouble(channel),
        memoryStore: core.memory.check(),
        problems: exposures(loaded),
        realtime: realtime.state(),
        mcpServers: core.mcp.status(),
      });

    // One reload at a time: SIGHUP and the control socket may ask together.
    let reloads: Promise<unknown> = Promise.resolve();
    const reload = (): Promise<ReloadResult> => {
      const next = reloads.then(() =>
        reloadDaemon({ env, log, http, current: () => loaded, adopt: (next) => (loaded = next), core, channels, adapters, buildAdapter, report }).then(
          async (result) => {
            if (result.ok) restartRequired = result.restart_required;
            // Realtime voice turned on or off: its socket follows.
            await realtime.apply();
            return { ...result, health: report() };
          },
        ),
      );
      reloads = next.catch(() => {});
      return next;
    };

    // Owner pairing (`fermix setup` over the control socket, and the setup page): the next unknown sender on a running channel.
    const awaitSender = (channel: string, signal: AbortSignal) => {
      if (!adapters.has(channel as ChannelName)) return Promise.reject(new Error(`${channel} is not running in the daemon`));
      return pairing.next(channel, signal);
    };
    web = buildWeb({ core, env, log, loaded: () => loaded, http, report, reload, awaitSender });
    const talk = { enabled: realtime.enabled, connect: realtime.talk };
    const app = createApp({
      talk,
      access: web.access,
      report,
      setupGate: web.gate,
      setup: web.setup,
      dashboard: web.dashboard,
      metrics: web.metrics,
      log: log.child({ component: "http" }),
      mounts: [
        webhookRoutes({
          config: () => loaded.config,
          submit: (channel, items) => core.dispatcher.submit(channel, items),
          log: log.child({ component: "webhook" }),
          repliedInThread: (channel, chatId, threadId) => core.outbox.hasRepliedInThread(channel, chatId, threadId),
          telemetry: core.telemetry,
        }),
      ],
    });
    server = serveHttp(app, { ...http, log, sockets: socketRoutes({ access: web.access, talk }) });
    phase("http");
    const listening = server.url;
    const setupLink = () => web!.setupLink(listening);
    control = (await startControlServer({
      path: loaded.paths.controlSocket,
      gateway: core.gateway,
      queue: core.queue,
      log: log.child({ component: "control" }),
      reload,
      setupLink,
      awaitSender,
    })) as UnixSocketListener<unknown>;
    sockets.push(loaded.paths.controlSocket);
    await realtime.apply();

    phase("control_socket");
    // In the background: a tool server that is slow or failing never holds the start up.
    core.mcp.start();
    await channels.startAll();
    phase("channels");
    await core.recover();
    core.scheduler.start();
    phase("recover");
    if (!isLoopbackBind(http.hostname)) {
      log.warn("HTTP server reachable beyond loopback: the status page, /events, /metrics and the health report need the dashboard token", {
        bind: http.hostname,
        how: "open the link fermix run prints on stdout, or send Authorization: Bearer <token> ([fermix_core.http] dashboard_token sets a fixed one)",
      });
    }
    log.info("fermix listening", { url: server.url.href, version: VERSION, home: loaded.paths.home });
    log.debug("start-up phases", {
      ...Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, Math.round(v * 10) / 10])),
      total_ms: Math.round(phaseStart * 10) / 10,
    });

    let stopping: Promise<void> | undefined;
    return {
      url: server.url,
      get loaded() {
        return loaded;
      },
      core,
      telemetry: core.telemetry,
      report,
      reload,
      setupLink,
      dashboardLink: () => web!.dashboardLink(listening),
      stop: () =>
        (stopping ??= closeAll().then(() => {
          log.info("fermix stopped");
        })),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
