/**
 * The shapes of the health report (docs/http.md "The health report") and of what
 * a running channel says about itself: imported by the channels that report,
 * the HTTP routes that serve, and the daemon that builds the report.
 */
import type { ChannelMode } from "../config/channels.ts";
import type { ChannelName } from "../config/schema.ts";
import type { Fault } from "./fault-line.ts";

export type ChannelStatus = "ready" | "disabled" | "starting" | "degraded" | "failed" | "unconfigured";
export type OverallStatus = "ready" | "degraded" | "setup_required";

/** What a running channel says about itself. */
export interface ChannelRuntimeState {
  status: ChannelStatus;
  process_alive: boolean;
  /**
   * Why it is not ready, for `failures` and the status page: our own words
   * and numbers (a status code, a close code, a wait) only. Never a secret,
   * and never the platform's or a helper process's own words (an error
   * description, stderr), which can echo what a user wrote: those go to the
   * log. `faultLine` (src/kernel/fault-line.ts) words a platform's fault.
   */
  detail?: string;
}

/** What the running daemon knows of a model provider beyond its config: failing since its last request, and how (class and status, never its words). */
export interface ProviderState {
  status: "ready" | "degraded";
  fault?: Fault;
}

/** An MCP server as health, the status page and the log show it: its state and tool count, and a problem in our words (never the server's). */
export interface McpServerHealth {
  name: string;
  transport: "stdio" | "http";
  state: "starting" | "ready" | "restarting" | "disabled";
  /** Tools offered now (0 unless ready). */
  tools: number;
  /** Why it is not ready: a fault's class and status, or what happened ("the program exited"). */
  problem?: string;
}

export interface ProviderHealth {
  name: string;
  status: "ready" | "degraded" | "unconfigured";
  auth_mode: "api_key" | "none";
  primary: boolean;
}

export interface ChannelHealth {
  name: ChannelName;
  status: ChannelStatus;
  enabled: boolean;
  mode: ChannelMode | null;
  process_alive: boolean | null;
}

export interface HealthReport {
  status: OverallStatus;
  app: "fermix";
  version: string;
  timestamp: string;
  failures: string[];
  config_path: string;
  "restart_required?": boolean;
  config: { home: string; path: string; workspace: { workspace: string; grants: string } };
  providers: ProviderHealth[];
  channels: ChannelHealth[];
  memory: { conversation_store: "ready" | "failed"; store: "ready" | "failed" };
  realtime: RealtimeHealth;
}

/**
 * Realtime voice (docs/realtime.md): off, ready, or degraded — why is in
 * `failures` (a provider that refused or dropped a session, a socket not
 * listening). Off, everything but the counts is null.
 */
export interface RealtimeHealth {
  enabled: boolean;
  status: "disabled" | "ready" | "degraded";
  provider: string | null;
  model: string | null;
  socket_path: string | null;
  socket_alive: boolean | null;
  /** Voice sessions open with the provider now (at most one: one owner). */
  active_sessions: number;
  /** Companions connected now (the socket's and the /talk page's), talking or not. */
  active_clients: number;
  "companion_connected?": boolean;
}

/** What the running daemon knows of realtime voice beyond its config. */
export interface RealtimeState {
  socketAlive: boolean;
  activeSessions: number;
  activeClients: number;
  /** The provider's last refusal or drop of a session, page-safe, until one is up again. */
  fault?: string;
}

/** The HTTP status a health report is served with: 200 only when ready. */
export function healthHttpStatus(report: HealthReport): 200 | 503 {
  return report.status === "ready" ? 200 : 503;
}

/** What a config reload did (the daemon's `reload()`, over SIGHUP, the control socket or the setup page). */
export interface ReloadResult {
  /** False when the new config did not load: the daemon kept running on the old one. */
  ok: boolean;
  /** Why the new config did not load (the loader's message). */
  error?: string;
  /** Changes that only a restart applies (listen address, port…), in words; empty when none. */
  restart_required: string[];
  /** Channels started, stopped or restarted because their config changed. */
  channels: { started: ChannelName[]; stopped: ChannelName[]; restarted: ChannelName[] };
  /** Whether the providers changed (the agent was rebuilt on the new primary). */
  provider_changed: boolean;
  /** The health report right after the reload. */
  health: HealthReport;
}
