/**
 * What the dashboard is handed by the composition root: one function that
 * gathers a view of the daemon, and a way to hear that something happened.
 * The HTTP layer never reaches into the daemon for more.
 */
import type { ActivitySnapshot } from "../../kernel/activity.ts";
import type { HealthReport, McpServerHealth } from "../../kernel/health.ts";
import type { MessageTotals } from "../../kernel/metrics.ts";

export interface QueueView {
  runningTurns: number;
  waitingMessages: number;
  backgroundTasks: number;
  outboxPending: number;
}

export interface JobsView {
  state: "stopped" | "running";
  pending: number;
  active: number;
  waiting: number;
  nextDueAt: number | null;
}

/** The owner's desktop (computer use): off, or its session (none: idle). */
export interface DesktopView {
  enabled: boolean;
  display: "virtual" | "host";
  session: { state: "running" | "paused"; display: string; startedAt: number; actions: number; lastUsedAt: number } | null;
}

export interface DashboardView {
  /** Epoch ms the view was taken. */
  now: number;
  health: HealthReport;
  activity: ActivitySnapshot;
  totals: MessageTotals;
  /** The primary provider (no URL, no key: its name, model and API). */
  provider: { name: string; model: string; api: string } | null;
  /** The fallback providers' names, in the order they are tried (`[fermix_core] fallback`). */
  fallback?: string[];
  queues: QueueView;
  jobs: JobsView;
  /** Absent: no desktop card (computer use off). */
  desktop?: DesktopView;
  /** The owner's MCP servers: each one's state and how many tools it offers (none configured: empty). */
  toolServers?: readonly McpServerHealth[];
  process: { version: string; startedAt: number; rssBytes: number; heapBytes: number };
}

export interface DashboardSource {
  view(): Promise<DashboardView>;
  /** `listener` runs whenever something was recorded (a telemetry event); returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}
