/**
 * The daemon's counters, kept once for both readers: `GET /metrics` (the
 * Prometheus text format, through prom-client's registry) and the status
 * dashboard (the same counters read back, plus the ActivityLog fed by the
 * same subscription). One subscription to the telemetry bus feeds both, so
 * the page and a scrape never disagree about what happened.
 *
 * Gauges that are state rather than events (queue depth, outbox pending,
 * channel status) are read when asked, from a function the composition root
 * hands in. Label values are channel names and words from our own code —
 * never an id, a text or a secret.
 */

import { ActivityLog } from "./activity.ts";
import { Counter, Gauge, Histogram, Registry } from "./prom.ts";
import type { AnyTelemetryEvent, Telemetry, TelemetryEvent } from "./telemetry.ts";

/** State read at scrape time from the running daemon. */
export interface GaugeReadings {
  runningTurns: number;
  waitingMessages: number;
  backgroundTasks: number;
  outboxPending: number;
  jobsPending: number;
  /** Each channel's status word from the health report. */
  channels: ReadonlyArray<{ name: string; status: string }>;
}

export interface MessageTotals {
  /** Per channel, messages in and out since the daemon started. */
  channels: Record<string, { inbound: number; outbound: number }>;
  turns: number;
}

const NO_READINGS: GaugeReadings = { runningTurns: 0, waitingMessages: 0, backgroundTasks: 0, outboxPending: 0, jobsPending: 0, channels: [] };
const CHANNEL_STATUSES = ["ready", "starting", "degraded", "failed", "unconfigured", "disabled"] as const;

export interface MetricsOptions {
  version: string;
  now?: () => number;
}

export class Metrics {
  readonly registry = new Registry();
  readonly activity: ActivityLog;
  private readings: () => GaugeReadings = () => NO_READINGS;
  private readonly now: () => number;
  private readonly startedAt: number;

  private readonly messages: Counter<"channel" | "direction">;
  private readonly turns: Histogram<"channel" | "outcome">;
  private readonly tokens: Counter<"kind">;
  private readonly turnFailures: Counter<"channel" | "class">;
  private readonly webhooks: Counter<"channel" | "outcome">;
  private readonly webhookMessages: Counter<"channel" | "kind">;
  private readonly streams: Counter<"channel" | "phase">;
  private readonly transcriptions: Counter<"channel" | "backend" | "status" | "reason">;
  private readonly replies: Counter<"channel" | "kind" | "ok">;
  private readonly deliveryRetries: Counter<"channel" | "kind">;
  private readonly deliveryFailures: Counter<"channel" | "kind" | "reason">;
  private readonly commands: Counter<"channel" | "command">;
  private readonly providerRetries: Counter<"provider" | "reason">;
  private readonly jobRuns: Counter<"channel" | "kind" | "outcome">;
  private readonly computerActions: Counter<"action" | "outcome">;

  constructor(options: MetricsOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.activity = new ActivityLog(this.now);
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter<L>({ name, help, labelNames, registers });

    this.messages = counter("fermix_messages_total", "Messages received (inbound) and sent (outbound), per channel.", ["channel", "direction"]);
    this.turns = new Histogram<"channel" | "outcome">({
      name: "fermix_turn_duration_seconds",
      // Outcome is the agent's word for an answered turn (ok, step_limit) or "failed": a handful of values, never an id or a text.
      help: "How long agent turns took, by channel and outcome (ok, step_limit, failed).",
      labelNames: ["channel", "outcome"],
      buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers,
    });
    this.tokens = counter("fermix_turn_tokens_total", "Model tokens used by finished turns, input and output.", ["kind"]);
    this.turnFailures = counter("fermix_turn_failures_total", "Turns that ended in a fault the user was told about, by its class.", ["channel", "class"]);
    this.webhooks = counter("fermix_webhook_requests_total", "Webhook requests by outcome: accepted, duplicate, or the reason it was refused.", [
      "channel",
      "outcome",
    ]);
    this.webhookMessages = counter("fermix_webhook_messages_total", "Messages carried by accepted webhook requests, fresh or duplicate.", ["channel", "kind"]);
    this.streams = counter("fermix_stream_phases_total", "Streamed-reply steps: open, edit, block, rotate, seal, discard.", ["channel", "phase"]);
    this.transcriptions = counter("fermix_transcription_attempts_total", "Voice-note transcriptions by backend and how they ended.", [
      "channel",
      "backend",
      "status",
      "reason",
    ]);
    this.replies = counter("fermix_replies_total", "Reply parts handed to a platform, by kind and whether the send worked.", ["channel", "kind", "ok"]);
    this.deliveryRetries = counter("fermix_delivery_retries_total", "Sends that failed for a reason that may heal, scheduled again.", ["channel", "kind"]);
    this.deliveryFailures = counter(
      "fermix_delivery_failures_total",
      "Sends given up: refused by the platform, past the retry horizon, or set aside (refused while the chat took other calls).",
      ["channel", "kind", "reason"],
    );
    this.commands = counter("fermix_commands_total", "Slash commands received.", ["channel", "command"]);
    this.providerRetries = counter("fermix_provider_retries_total", "Model requests that failed and were tried again.", ["provider", "reason"]);
    this.jobRuns = counter("fermix_job_runs_total", "Runs of scheduled jobs, by kind and outcome.", ["channel", "kind", "outcome"]);
    this.computerActions = counter("fermix_computer_actions_total", "Desktop actions (computer use), by kind and outcome (ok, refused, error).", [
      "action",
      "outcome",
    ]);

    const metrics = this;
    const gauge = (name: string, help: string, read: (r: GaugeReadings) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(metrics.readings()));
        },
      });
    gauge("fermix_queue_running_turns", "Agent turns running now.", (r) => r.runningTurns);
    gauge("fermix_queue_waiting_messages", "Messages queued behind a running turn in their conversation.", (r) => r.waitingMessages);
    gauge("fermix_background_tasks", "Background tasks running now.", (r) => r.backgroundTasks);
    gauge("fermix_outbox_pending", "Reply parts recorded but not yet delivered.", (r) => r.outboxPending);
    gauge("fermix_jobs_pending", "Scheduled jobs still to run.", (r) => r.jobsPending);
    new Gauge({
      name: "fermix_channel_status",
      help: "Each channel's health status: 1 for the status it has now, 0 for the others.",
      labelNames: ["channel", "status"],
      registers,
      collect() {
        this.reset();
        for (const channel of metrics.readings().channels) {
          for (const status of CHANNEL_STATUSES) this.set({ channel: channel.name, status }, channel.status === status ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: "fermix_uptime_seconds",
      help: "Seconds since the daemon started.",
      registers,
      collect() {
        this.set(Math.round((metrics.now() - metrics.startedAt) / 1000));
      },
    });
    new Gauge({
      name: "fermix_resident_memory_bytes",
      help: "Resident memory of the daemon process.",
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({ name: "fermix_build_info", help: "The running version (always 1).", labelNames: ["version"], registers }).set({ version: options.version }, 1);
  }

  /** When the daemon started (epoch ms), for uptime. */
  get started(): number {
    return this.startedAt;
  }

  /** Where the gauges read the daemon's state from (the composition root sets it once). */
  readFrom(read: () => GaugeReadings): void {
    this.readings = read;
  }

  /** Count everything the bus carries from now on; returns the unsubscribe function. */
  subscribe(telemetry: Telemetry): () => void {
    return telemetry.onAny((event) => this.record(event));
  }

  /** One event into the counters and the activity log. */
  record(any: TelemetryEvent): void {
    this.activity.record(any);
    const event = any as AnyTelemetryEvent;
    switch (event.name) {
      case "channel.message":
        this.messages.inc({ channel: event.metadata.channel, direction: event.metadata.direction }, event.measurements.count);
        return;
      case "turn.done":
        this.turns.observe({ channel: event.metadata.channel, outcome: event.metadata.outcome }, event.measurements.duration_ms / 1000);
        this.tokens.inc({ kind: "input" }, event.measurements.input_tokens);
        this.tokens.inc({ kind: "output" }, event.measurements.output_tokens);
        return;
      case "turn.failed":
        this.turns.observe({ channel: event.metadata.channel, outcome: "failed" }, event.measurements.duration_ms / 1000);
        this.turnFailures.inc({ channel: event.metadata.channel, class: event.metadata.class });
        return;
      case "channel.webhook": {
        const { channel, outcome } = event.metadata;
        this.webhooks.inc({ channel, outcome });
        if (event.measurements.fresh > 0) this.webhookMessages.inc({ channel, kind: "fresh" }, event.measurements.fresh);
        if (event.measurements.duplicate > 0) this.webhookMessages.inc({ channel, kind: "duplicate" }, event.measurements.duplicate);
        return;
      }
      case "channel.stream":
        this.streams.inc({ channel: event.metadata.channel, phase: event.metadata.phase });
        return;
      case "transcription.message": {
        const { channel, backend, status, reason } = event.metadata;
        this.transcriptions.inc({ channel, backend, status, reason: reason ?? "" });
        return;
      }
      case "channel.reply":
        this.replies.inc({ channel: event.metadata.channel, kind: event.metadata.kind, ok: String(event.metadata.ok) }, event.measurements.parts || 1);
        return;
      case "delivery.retry":
        this.deliveryRetries.inc({ channel: event.metadata.channel, kind: event.metadata.kind });
        return;
      case "delivery.failed":
        this.deliveryFailures.inc({ channel: event.metadata.channel, kind: event.metadata.kind, reason: event.metadata.reason }, event.measurements.count);
        return;
      case "command.received":
        this.commands.inc({ channel: event.metadata.channel, command: event.metadata.command });
        return;
      case "provider.retry":
        this.providerRetries.inc({ provider: event.metadata.provider, reason: event.metadata.reason });
        return;
      case "job.run":
        this.jobRuns.inc({ channel: event.metadata.channel, kind: event.metadata.kind, outcome: event.metadata.outcome });
        return;
      case "computer.action":
        this.computerActions.inc({ action: event.metadata.action, outcome: event.metadata.outcome });
        return;
    }
  }

  /** The message and turn counters, read back for the dashboard. */
  async totals(): Promise<MessageTotals> {
    const channels: MessageTotals["channels"] = {};
    for (const { labels, value } of (await this.messages.get()).values) {
      const channel = String(labels.channel);
      channels[channel] ??= { inbound: 0, outbound: 0 };
      const entry = channels[channel];
      if (labels.direction === "inbound") entry.inbound += value;
      else entry.outbound += value;
    }
    let turns = 0;
    for (const { metricName, value } of (await this.turns.get()).values) if (metricName === "fermix_turn_duration_seconds_count") turns += value;
    return { channels, turns };
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
