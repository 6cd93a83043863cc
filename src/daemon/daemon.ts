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
import { ADAPTERS } from "../channels/registry.ts";
import type { ChannelAdapter } from "../channels/types.ts";
import { channelReadiness } from "../config/channels.ts";
import { resolveHttp } from "../config/http.ts";
import { currentMtime, type LoadedConfig, loadConfig } from "../config/index.ts";
import type { Env } from "../config/load.ts";
import { CHANNEL_NAMES, type ChannelName } from "../config/schema.ts";
import type { Presenter } from "../gateway/delivery.ts";
import { createApp } from "../http/app.ts";
import { type HttpServer, serveHttp } from "../http/server.ts";
import { SetupGate } from "../http/setup.ts";
import { webhookRoutes } from "../http/webhooks/index.ts";
import { VERSION } from "../version.ts";
import { ChannelSupervisor } from "./channels.ts";
import { buildCore, type Core } from "./core.ts";
import { buildHealthReport, type ChannelRuntimeState, type HealthReport } from "./health.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";

export interface DaemonOptions {
  env: Env;
  log: Logger;
  presenter: Presenter;
  providerDeps?: ProviderDeps;
}

export interface Daemon {
  url: URL;
  loaded: LoadedConfig;
  core: Core;
  telemetry: Telemetry;
  report(): HealthReport;
  /** Close the server, the channels and the database; remove the sockets. Idempotent. */
  stop(): Promise<void>;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { env, log } = options;
  const loaded = await loadConfig(env);
  log.redactor.add(...loaded.secretValues);
  for (const warning of loaded.warnings) log.warn(warning, { component: "config" });
  const http = resolveHttp(env);
  if (!loaded.fileExists) log.warn("no config.toml yet: run `fermix setup`", { path: loaded.paths.config });

  const core = buildCore({
    loaded,
    log,
    presenter: options.presenter,
    streaming: true,
    ...(options.providerDeps ? { providerDeps: options.providerDeps } : {}),
  });
  if (!core.agents.configured) log.warn("no model provider configured: turns will be answered with a pointer to `fermix setup`");

  const adapters = new Map<ChannelName, ChannelAdapter>();
  const missing = new Map<ChannelName, ChannelRuntimeState>();
  for (const name of CHANNEL_NAMES) {
    const readiness = channelReadiness(loaded.config, name);
    if (readiness.kind === "refused") log.warn("channel refused at start", { channel: name, reason: readiness.reason });
    if (readiness.kind === "unconfigured") log.warn("channel enabled but not configured", { channel: name, missing: readiness.missing.join(",") });
    if (readiness.kind !== "servable") continue;
    const load = ADAPTERS[name];
    if (!load) {
      missing.set(name, { status: "failed", process_alive: false, detail: "adapter not available in this build" });
      continue;
    }
    const adapter = (await load())(loaded.config);
    adapters.set(name, adapter);
    core.channels.set(name, {
      port: (target) => adapter.replyPort(target),
      fetchMedia: (media, signal, maxBytes) => adapter.fetchMedia(media, signal, maxBytes),
      inboundMediaCap: adapter.inboundMediaCap,
    });
  }

  const channels = new ChannelSupervisor(
    adapters,
    (name) => ({
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
  let control: UnixSocketListener<unknown> | undefined;
  const closeAll = async () => {
    await server?.stop();
    control?.stop(true);
    for (const socket of sockets) rmSync(socket, { force: true });
    await channels.stopAll();
    await core.close();
  };

  try {
    const report = () =>
      buildHealthReport({
        version: VERSION,
        now: new Date(),
        loaded,
        channels: new Map([...missing, ...[...adapters.keys()].map((name) => [name, channels.state(name)!] as const)]),
        databaseReady: true,
        restartRequired: currentMtime(loaded.paths.config) !== loaded.fileMtimeMs,
        ...(core.agents.primary ? { providers: new Map([[core.agents.primary.name, core.agents.providerState()]]) } : {}),
        sendTrouble: (channel) => core.delivery.trouble(channel),
      });

    const app = createApp({
      report,
      setupGate: new SetupGate(),
      log: log.child({ component: "http" }),
      mounts: [
        webhookRoutes({
          config: loaded.config,
          submit: (channel, items) => core.dispatcher.submit(channel, items),
          log: log.child({ component: "webhook" }),
          slackBotInThread: (channel, threadTs) => core.outbox.hasRepliedInThread("slack", channel, threadTs),
        }),
      ],
    });
    server = serveHttp(app, { ...http, log });
    control = (await startControlServer({
      path: loaded.paths.controlSocket,
      gateway: core.gateway,
      queue: core.queue,
      log: log.child({ component: "control" }),
    })) as UnixSocketListener<unknown>;
    sockets.push(loaded.paths.controlSocket);

    await channels.startAll();
    await core.recover();
    log.info("fermix listening", { url: server.url.href, version: VERSION, home: loaded.paths.home });

    let stopping: Promise<void> | undefined;
    return {
      url: server.url,
      loaded,
      core,
      telemetry: core.telemetry,
      report,
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
