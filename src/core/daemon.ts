/**
 * The composition root: the one place that wires the daemon together from
 * config. Everything it builds is handed its dependencies; nothing reaches
 * for globals.
 */
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { channelReadiness } from "../config/channels.ts";
import { currentMtime, type LoadedConfig, loadConfig } from "../config/index.ts";
import { resolveHttp } from "../config/http.ts";
import type { Env } from "../config/load.ts";
import { CHANNEL_NAMES, type ChannelName } from "../config/schema.ts";
import { createApp } from "../http/app.ts";
import { type HttpServer, serveHttp } from "../http/server.ts";
import { SetupGate } from "../http/setup.ts";
import { openDatabase } from "../store/db.ts";
import { VERSION } from "../version.ts";
import { buildHealthReport, type ChannelRuntimeState, type HealthReport } from "./health.ts";
import { ensureHome } from "./home.ts";
import type { Logger } from "./log.ts";
import { Telemetry } from "./telemetry.ts";

export interface DaemonOptions {
  env: Env;
  log: Logger;
}

export interface Daemon {
  url: URL;
  loaded: LoadedConfig;
  telemetry: Telemetry;
  report(): HealthReport;
  /** Close the server, the channels and the database; remove the sockets. Idempotent. */
  stop(): Promise<void>;
}

export async function startDaemon({ env, log }: DaemonOptions): Promise<Daemon> {
  const loaded = await loadConfig(env);
  log.redactor.add(...loaded.secretValues);
  for (const warning of loaded.warnings) log.warn(warning, { component: "config" });
  const http = resolveHttp(env);

  const { loosePermissions } = ensureHome(loaded.paths);
  if (loosePermissions) log.warn("home directory is readable by other users; run chmod 700", { home: loaded.paths.home });
  if (!loaded.fileExists) log.warn("no config.toml yet: run `fermix setup`", { path: loaded.paths.config });

  const db: Database = openDatabase(loaded.paths.database);
  const telemetry = new Telemetry();
  telemetry.onAny((event) => log.debug("telemetry", { event: event.name, ...event.metadata, ...event.measurements }));

  const channels = new Map<ChannelName, ChannelRuntimeState>();
  for (const name of CHANNEL_NAMES) {
    const readiness = channelReadiness(loaded.config, name);
    if (readiness.kind === "refused") log.warn("channel refused at start", { channel: name, reason: readiness.reason });
    if (readiness.kind === "unconfigured") log.warn("channel enabled but not configured", { channel: name, missing: readiness.missing.join(",") });
    if (readiness.kind === "servable") {
      channels.set(name, { status: "failed", process_alive: false, detail: "adapter not available in this build" });
    }
  }

  let databaseReady = true;
  const report = () =>
    buildHealthReport({
      version: VERSION,
      now: new Date(),
      loaded,
      channels,
      databaseReady,
      restartRequired: currentMtime(loaded.paths.config) !== loaded.fileMtimeMs,
    });

  const app = createApp({ report, setupGate: new SetupGate(), log: log.child({ component: "http" }) });
  let server: HttpServer;
  try {
    server = serveHttp(app, { ...http, log });
  } catch (error) {
    db.close();
    throw error;
  }
  log.info("fermix listening", { url: server.url.href, version: VERSION, home: loaded.paths.home });

  const sockets: string[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await server.stop();
      databaseReady = false;
      db.close();
      for (const socket of sockets) rmSync(socket, { force: true });
      log.info("fermix stopped");
    })());

  return { url: server.url, loaded, telemetry, report, stop };
}
