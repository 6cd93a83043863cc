/**
 * What the daemon hands its web face: the metrics (one subscription to the
 * telemetry bus, read by `/metrics` and the dashboard alike), the
 * dashboard's view of the running daemon, the setup page's service (read
 * what is on disk, apply it through the daemon's reload), the gate that
 * issues one-time setup links, and who may ask at all: the Host names
 * answered and, when the server listens beyond loopback, the dashboard
 * tokens (one made at each start, plus `[fermix_core.http] dashboard_token`
 * when set). The HTTP layer gets these as data and functions; it never sees
 * the core.
 */

import type { DeskStatus } from "../agent/computer/desk.ts";
import { profileOf } from "../channels/registry.ts";
import { type HttpSettings, isLoopbackBind } from "../config/http.ts";
import type { LoadedConfig } from "../config/index.ts";
import type { Env } from "../config/load.ts";
import { CHANNEL_NAMES } from "../config/schema.ts";
import type { AccessPolicy } from "../http/access.ts";
import type { DashboardSource, DashboardView, DesktopView } from "../http/dashboard/index.ts";
import { randomToken, SetupGate, type SetupService } from "../http/setup/index.ts";
import { describeError } from "../kernel/errors.ts";
import type { HealthReport, ReloadResult } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import { type GaugeReadings, Metrics } from "../kernel/metrics.ts";
import type { DaemonPairing } from "../setup/pairing.ts";
import { readCurrentSetup } from "../setup/write.ts";
import { VERSION } from "../version.ts";
import type { Core } from "./core.ts";

/** How often channel status is sampled for "connected since" and "last error" while nobody looks. */
const OBSERVE_EVERY_MS = 1000;

export interface WebDeps {
  core: Core;
  env: Env;
  log: Logger;
  loaded: () => LoadedConfig;
  /** Where the server listens (fixed until a restart): beyond loopback, pages need the dashboard token. */
  http: HttpSettings;
  report: () => HealthReport;
  reload: () => Promise<ReloadResult>;
  /** The next message on a running channel from a sender it does not know (the control socket's `await_sender`). */
  awaitSender?: (channel: string, signal: AbortSignal) => Promise<{ senderId: string; senderName?: string }>;
}

/** A one-time link to the setup page, and how long it stays valid. */
export interface SetupLink {
  url: string;
  expiresInSeconds: number;
}

export interface Web {
  metrics: Metrics;
  dashboard: DashboardSource;
  setup: SetupService;
  gate: SetupGate;
  access: AccessPolicy;
  /** A fresh setup link on the server at `base` (the address the daemon listens on). */
  setupLink(base: URL): SetupLink;
  /** The link that opens the status page with this start's token (it sets a cookie); undefined on loopback, where none is asked. */
  dashboardLink(base: URL): string | undefined;
  stop(): void;
}

/** The channel's failure line of the report, without its "channel <name>: " prefix. */
function channelDetail(report: HealthReport, name: string): string | undefined {
  const line = report.failures.find((f) => f.startsWith(`channel ${name}: `));
  return line?.slice(`channel ${name}: `.length);
}

/** The desktop card's view: on or off, and the session if one runs. */
function desktopView(settings: { enabled: boolean; display: "virtual" | "host" }, status: DeskStatus | null): DesktopView {
  return {
    enabled: settings.enabled,
    display: settings.display,
    session: status
      ? { state: status.state, display: status.display, startedAt: status.startedAt, actions: status.actions, lastUsedAt: status.lastUsedAt }
      : null,
  };
}

/** Where a browser on this machine reaches a server bound to `base` (a wildcard bind is reached on loopback). */
export function browsable(base: URL): URL {
  const url = new URL(base.href);
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  if (url.hostname === "[::]") url.hostname = "[::1]";
  return url;
}

/**
 * Pairing for the setup page, served by the daemon itself: when this daemon
 * serves a channel that pairs its owner (its profile's setup) with `token`,
 * the next unknown sender its adapter sees (a second poller on the token
 * would conflict); otherwise "unavailable".
 */
async function pairThroughThisDaemon(deps: WebDeps, token: string, timeoutMs: number, signal?: AbortSignal): Promise<DaemonPairing> {
  const config = deps.loaded().config;
  const channel = CHANNEL_NAMES.find((name) => {
    const pairing = profileOf(name).setup?.pairing;
    const section = config.fermix_channels[name] as Record<string, unknown> & { enabled: boolean };
    return pairing !== undefined && section.enabled && section[pairing.tokenKey] === token;
  });
  if (!deps.awaitSender || !channel) return { kind: "unavailable", why: "this daemon does not poll that token" };
  const timedOut = AbortSignal.timeout(timeoutMs);
  try {
    const sender = await deps.awaitSender(channel, signal ? AbortSignal.any([timedOut, signal]) : timedOut);
    return { kind: "sender", id: sender.senderId, ...(sender.senderName ? { name: sender.senderName } : {}) };
  } catch (error) {
    if (signal?.aborted) throw error;
    if (timedOut.aborted) return { kind: "timeout" };
    return { kind: "unavailable", why: describeError(error) };
  }
}

export function buildWeb(deps: WebDeps): Web {
  const { core } = deps;
  const metrics = new Metrics({ version: VERSION });
  const unsubscribe = metrics.subscribe(core.telemetry);

  const observe = (report: HealthReport) => {
    for (const channel of report.channels) {
      // Degraded only because replies are failing to send: still connected to its platform.
      const connected = channel.status === "ready" || (channel.status === "degraded" && core.delivery.trouble(channel.name) !== undefined);
      metrics.activity.observeChannel(channel.name, channel.status, channelDetail(report, channel.name), connected);
    }
  };
  const readings = (report: HealthReport): GaugeReadings => {
    const queue = core.queue.counts();
    return {
      runningTurns: queue.running,
      waitingMessages: queue.waiting,
      backgroundTasks: core.background.active,
      outboxPending: core.outbox.unsentCount(),
      jobsPending: core.scheduler.status().pending,
      channels: report.channels.map((c) => ({ name: c.name, status: c.status })),
    };
  };
  metrics.readFrom(() => {
    const report = deps.report();
    observe(report);
    return readings(report);
  });
  const observer = setInterval(() => {
    try {
      observe(deps.report());
    } catch (error) {
      deps.log.warn("dashboard could not read health", { error: describeError(error) });
    }
  }, OBSERVE_EVERY_MS);
  observer.unref();

  const dashboard: DashboardSource = {
    async view(): Promise<DashboardView> {
      const health = deps.report();
      observe(health);
      const now = readings(health);
      const primary = core.agents.primary;
      const memory = process.memoryUsage();
      return {
        now: Date.now(),
        health,
        activity: metrics.activity.snapshot(),
        totals: await metrics.totals(),
        provider: primary ? { name: primary.name, model: primary.config.model, api: primary.config.api ?? "responses" } : null,
        fallback: deps.loaded().config.fermix_core.fallback,
        queues: {
          runningTurns: now.runningTurns,
          waitingMessages: now.waitingMessages,
          backgroundTasks: now.backgroundTasks,
          outboxPending: now.outboxPending,
        },
        jobs: core.scheduler.status(),
        desktop: desktopView(deps.loaded().config.fermix_core.computer, core.desk.status()),
        toolServers: core.mcp.status(),
        process: { version: VERSION, startedAt: metrics.started, rssBytes: memory.rss, heapBytes: memory.heapUsed },
      };
    },
    onChange: (listener) => core.telemetry.onAny(() => listener()),
  };

  const gate = new SetupGate({ tokenTtlMs: () => deps.loaded().config.fermix_core.http.token_ttl_seconds * 1000 });
  const setup: SetupService = {
    current: () => readCurrentSetup(deps.env),
    reload: deps.reload,
    log: deps.log.child({ component: "setup" }),
    env: deps.env,
    pairTimeoutMs: () => deps.loaded().config.fermix_core.http.pair_timeout_seconds * 1000,
    pairThroughDaemon: (token, timeoutMs, signal) => pairThroughThisDaemon(deps, token, timeoutMs, signal),
  };

  // Made at each start and said once (`fermix run` prints the link); the configured token, if any, opens pages too.
  const startToken = isLoopbackBind(deps.http.hostname) ? undefined : randomToken(32);
  deps.log.redactor.add(startToken);
  const httpConfig = () => deps.loaded().config.fermix_core.http;
  const access: AccessPolicy = {
    allowedHosts: () => httpConfig().allowed_hosts,
    ...(startToken ? { dashboardTokens: () => [startToken, ...(httpConfig().dashboard_token ? [httpConfig().dashboard_token!] : [])] } : {}),
  };

  return {
    metrics,
    dashboard,
    setup,
    gate,
    access,
    dashboardLink(base) {
      if (!startToken) return undefined;
      const url = new URL("/", browsable(base));
      url.searchParams.set("token", startToken);
      return url.href;
    },
    setupLink(base) {
      const ttlMs = gate.tokenLifetimeMs();
      const url = new URL("/setup", browsable(base));
      url.searchParams.set("t", gate.issueToken(ttlMs));
      return { url: url.href, expiresInSeconds: Math.round(ttlMs / 1000) };
    },
    stop() {
      clearInterval(observer);
      unsubscribe();
    },
  };
}
