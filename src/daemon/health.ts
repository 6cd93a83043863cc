/**
 * The health report (docs/http.md "The health report"), built as a pure
 * function of a snapshot of the daemon, so its shape is tested on data.
 */
import { profileOf } from "../channels/registry.ts";
import { channelReadiness } from "../config/channels.ts";
import type { LoadedConfig } from "../config/index.ts";
import { realtimeProviderName } from "../config/realtime.ts";
import { CHANNEL_NAMES, type ChannelName, type ProviderConfig } from "../config/schema.ts";
import { isLocalUrl } from "../config/urls.ts";
import { providerFaultLine } from "../kernel/fault-line.ts";
import type {
  ChannelHealth,
  ChannelRuntimeState,
  HealthReport,
  McpServerHealth,
  OverallStatus,
  ProviderHealth,
  ProviderState,
  RealtimeHealth,
  RealtimeState,
} from "../kernel/health.ts";

export type {
  ChannelHealth,
  ChannelRuntimeState,
  ChannelStatus,
  HealthReport,
  OverallStatus,
  ProviderHealth,
  RealtimeState,
} from "../kernel/health.ts";

export interface HealthSnapshot {
  version: string;
  now: Date;
  loaded: LoadedConfig;
  /** Live state of each started channel; absent for channels that were not started. */
  channels: ReadonlyMap<ChannelName, ChannelRuntimeState>;
  databaseReady: boolean;
  restartRequired: boolean;
  /** What the running daemon knows of each provider beyond its config: a failing one is degraded, with its fault's class and status. */
  providers?: ReadonlyMap<string, ProviderState>;
  /** Why a channel's sends are failing right now (retried by the outbox), if they are: a line of our own words and the status. */
  sendTrouble?: (channel: ChannelName) => string | undefined;
  /** The long-term memory store answering a query right now, or why not; absent: not checked (taken as ready). */
  memoryStore?: { ok: true } | { ok: false; error: string };
  /** Other faults the daemon found at start (a home or secrets file readable by others…), each a failure line. */
  problems?: readonly string[];
  /** Realtime voice as it runs (its socket, sessions, companions); absent: nothing runs (taken as not listening when enabled). */
  realtime?: RealtimeState;
  /** The MCP servers the daemon runs: one not ready is a failure line (its state and problem in our words); the report gains no key for them. */
  mcpServers?: readonly McpServerHealth[];
}

/** Lives in config/ now, where transcription settings use it too; re-exported for existing callers. */
export { isLocalUrl };

export function providerHealth(name: string, provider: ProviderConfig): ProviderHealth {
  const hasKey = Boolean(provider.api_key);
  const keyless = !hasKey && isLocalUrl(provider.base_url);
  return {
    name,
    status: hasKey || keyless ? "ready" : "unconfigured",
    auth_mode: hasKey ? "api_key" : keyless ? "none" : "api_key",
    primary: provider.primary === true,
  };
}

/** The health report, and the HTTP status it is served with (200 only when ready). */
export function buildHealthReport(snapshot: HealthSnapshot): HealthReport {
  const { loaded } = snapshot;
  const { config, paths } = loaded;
  const failures: string[] = [];

  const providers = Object.entries(config.fermix_core.providers).map(([name, p]) => providerHealth(name, p));
  for (const p of providers) {
    if (p.status !== "ready") {
      failures.push(`provider ${p.name}: no api_key`);
      continue;
    }
    const live = snapshot.providers?.get(p.name);
    if (live?.status === "degraded") {
      p.status = "degraded";
      failures.push(providerFaultLine(p.name, live.fault));
    }
  }

  // Named rather than inline in map(): Biome cannot tell the switch covers every readiness; TypeScript does (a new kind fails to compile).
  const channelHealth = (name: ChannelName): ChannelHealth => {
    const profile = profileOf(name);
    const readiness = channelReadiness(config, name, profile);
    const mode = profile.mode;
    switch (readiness.kind) {
      case "disabled":
        return { name, status: "disabled", enabled: false, mode: null, process_alive: null };
      case "unconfigured":
        failures.push(`channel ${name}: missing ${readiness.missing.join(", ")}`);
        return { name, status: "unconfigured", enabled: true, mode, process_alive: false };
      case "refused":
        failures.push(`channel ${name}: refused: ${readiness.reason}`);
        return { name, status: "failed", enabled: true, mode, process_alive: false };
      case "servable": {
        const live = snapshot.channels.get(name) ?? {
          status: "failed" as const,
          process_alive: false,
          detail: "not started",
        };
        const trouble = live.status === "ready" ? snapshot.sendTrouble?.(name) : undefined;
        const status = trouble ? "degraded" : live.status;
        const detail = trouble ?? live.detail;
        if (status !== "ready") failures.push(`channel ${name}: ${status}${detail ? `: ${detail}` : ""}`);
        return { name, status, enabled: true, mode, process_alive: live.process_alive };
      }
    }
  };
  const channels = CHANNEL_NAMES.map(channelHealth);

  const store = snapshot.databaseReady ? "ready" : "failed";
  if (!snapshot.databaseReady) failures.push("database: not open");
  const memoryProbe = snapshot.memoryStore ?? { ok: true };
  const memoryStore = snapshot.databaseReady && memoryProbe.ok ? "ready" : "failed";
  if (!memoryProbe.ok) failures.push(`memory store: ${memoryProbe.error}`);
  failures.push(...(snapshot.problems ?? []));
  const { block: realtime, failures: realtimeFailures } = realtimeHealth(loaded, snapshot.realtime);
  failures.push(...realtimeFailures);
  for (const server of snapshot.mcpServers ?? []) {
    if (server.state === "ready" || server.state === "disabled") continue;
    failures.push(`mcp server ${server.name}: ${server.state === "starting" ? "starting" : `${server.problem ?? "not running"}; connecting again`}`);
  }

  const needsSetup = !loaded.fileExists || providers.length === 0;
  const status: OverallStatus = needsSetup ? "setup_required" : failures.length > 0 ? "degraded" : "ready";
  if (needsSetup) failures.unshift(loaded.fileExists ? "no provider configured" : "no config.toml: run fermix setup");

  return {
    status,
    app: "fermix",
    version: snapshot.version,
    timestamp: snapshot.now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    failures,
    config_path: paths.config,
    "restart_required?": snapshot.restartRequired,
    config: { home: paths.home, path: paths.config, workspace: { workspace: paths.workspace, grants: paths.grants } },
    providers,
    channels,
    memory: { conversation_store: store, store: memoryStore },
    realtime,
  };
}

/** The realtime block, and the failure lines behind a degraded one. */
function realtimeHealth(loaded: LoadedConfig, state: RealtimeState | undefined): { block: RealtimeHealth; failures: string[] } {
  const { config, paths } = loaded;
  const counts = {
    active_sessions: state?.activeSessions ?? 0,
    active_clients: state?.activeClients ?? 0,
    "companion_connected?": (state?.activeClients ?? 0) > 0,
  };
  if (!config.fermix_core.realtime.enabled) {
    const block = { enabled: false, status: "disabled", provider: null, model: null, socket_path: null, socket_alive: null, ...counts } as const;
    return { block, failures: [] };
  }
  const name = realtimeProviderName(config);
  const provider = name === undefined ? undefined : config.fermix_core.providers[name];
  const socketAlive = state?.socketAlive ?? false;
  const failures: string[] = [];
  if (!provider) failures.push("realtime: no provider configured");
  else if (providerHealth(name!, provider).status !== "ready") failures.push(`realtime: provider ${name} has no api_key`);
  if (!socketAlive) failures.push(`realtime: the companion socket is not listening (${paths.realtimeSocket})`);
  if (state?.fault) failures.push(`realtime: ${state.fault}`);
  return {
    block: {
      enabled: true,
      status: failures.length > 0 ? "degraded" : "ready",
      provider: name ?? null,
      model: config.fermix_core.realtime.model,
      socket_path: paths.realtimeSocket,
      socket_alive: socketAlive,
      ...counts,
    },
    failures,
  };
}
