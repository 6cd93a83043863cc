/**
 * What the dashboard shows of recent work, kept from the telemetry bus: a
 * short list of recent events, per-minute counts for the last hour (the
 * chart), each channel's last inbound and outbound message and today's
 * count, the last turn's latency and token usage, and when each channel
 * came up or last went wrong (fed from the health report).
 *
 * Only what is safe to show on a page is kept: event names, channel names,
 * directions, durations, counts and outcome words chosen by our own code.
 * Never message text, sender ids, session ids, tokens or keys — an event's
 * metadata is read through a per-event allow-list, not copied.
 */
import type { AnyTelemetryEvent, TelemetryEvent } from "./telemetry.ts";

/** How many activity entries are kept (the page shows them newest first). */
export const ACTIVITY_KEPT = 30;
/** The chart's span: one bucket per minute. */
export const CHART_MINUTES = 60;
const MINUTE_MS = 60_000;

export interface ActivityEntry {
  /** Epoch ms. */
  at: number;
  /** The telemetry event's name, e.g. `channel.message`. */
  event: string;
  channel?: string;
  direction?: "inbound" | "outbound";
  durationMs?: number;
  /** A short word or two from our own vocabulary: an outcome, a kind, a command name. */
  detail?: string;
}

export interface ChannelTally {
  lastInboundAt: number | null;
  lastOutboundAt: number | null;
  /** Messages in and out since local midnight. */
  todayInbound: number;
  todayOutbound: number;
  /** When the channel last connected to its platform (null: not connected now). A channel whose replies fail to send stays connected. */
  readySince: number | null;
  /** The last reason it was not ready, and when; kept after it recovers. */
  lastError: { at: number; detail: string } | null;
}

export interface LastTurn {
  at: number;
  channel: string;
  /** The provider that gave the answer, where it is known (a fallback's while the primary is down). */
  provider?: string;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
}

export interface ChartBucket {
  /** Start of the minute, epoch ms. */
  at: number;
  turns: number;
  inbound: number;
  outbound: number;
}

export interface ActivitySnapshot {
  entries: ActivityEntry[];
  chart: ChartBucket[];
  channels: Record<string, ChannelTally>;
  lastTurn: LastTurn | null;
}

type Fields = Pick<ActivityEntry, "channel" | "direction" | "durationMs" | "detail">;

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const ms = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? Math.round(value) : undefined);
const words = (...parts: Array<string | undefined>) => parts.filter(Boolean).join(" ") || undefined;

/**
 * Per event, the fields the list may show; an event not named here is not
 * listed (stream phases are counted by the metrics, too chatty for a list).
 */
function safeFields(event: TelemetryEvent): Fields | undefined {
  const m = event.metadata as Record<string, unknown>;
  const d = event.measurements as Record<string, unknown>;
  const channel = text(m.channel);
  switch (event.name) {
    case "channel.message":
      // An outbound message is listed as its channel.reply, which carries how long the send took.
      return m.direction === "outbound" ? undefined : { channel, direction: "inbound" };
    case "channel.reply":
      return { channel, direction: "outbound", durationMs: ms(d.duration_ms), detail: words(text(m.kind), m.ok === false ? "failed" : undefined) };
    case "turn.done":
      return { channel, durationMs: ms(d.duration_ms), detail: words(text(m.outcome), text(m.provider) && `by ${m.provider}`) };
    case "turn.failed":
      return { channel, durationMs: ms(d.duration_ms), detail: text(m.class) };
    case "command.received":
    case "command.unauthorized":
      // command.unauthorized carries the sender's id: only the command's name is kept.
      return { channel, detail: words(text(m.command) && `/${m.command}`, event.name === "command.unauthorized" ? "refused" : undefined) };
    case "command.dispatch":
      return undefined;
    case "channel.webhook":
      return { channel, direction: "inbound", durationMs: ms(d.duration_ms), detail: text(m.outcome) };
    case "transcription.message":
      return { channel, durationMs: ms(d.duration_ms), detail: words(text(m.backend), text(m.status), text(m.reason)) };
    case "delivery.retry":
    case "delivery.failed":
      return { channel, direction: "outbound", detail: words(text(m.kind), text(m.reason)) };
    case "channel.media_send_error":
      return { channel, direction: "outbound", detail: words(text(m.kind), text(m.reason)) };
    case "dispatcher.agent_unavailable":
      return { channel };
    case "provider.retry":
      return { detail: words(text(m.provider), text(m.reason)) };
    case "provider.failover":
      return { detail: words(text(m.from), text(m.class) && `(${m.class})`, text(m.to) && `→ ${m.to}`) };
    case "tool.call":
      return { channel, durationMs: ms(d.duration_ms), detail: words(text(m.tool), text(m.outcome)) };
    case "sandbox.decision":
      return { channel, detail: words(text(m.kind), text(m.outcome)) };
    case "job.run":
      return { channel, durationMs: ms(d.duration_ms), detail: words(text(m.kind), text(m.outcome)) };
    case "computer.action":
      return { channel, durationMs: ms(d.duration_ms), detail: words(text(m.action), text(m.outcome)) };
    case "realtime.session":
      return { channel, durationMs: m.phase === "ended" ? ms(d.duration_ms) : undefined, detail: words(text(m.phase), text(m.reason)) };
    default:
      return undefined;
  }
}

/** A channel nothing has been seen of yet. */
export const emptyTally = (): ChannelTally => ({
  lastInboundAt: null,
  lastOutboundAt: null,
  todayInbound: 0,
  todayOutbound: 0,
  readySince: null,
  lastError: null,
});

/** A local calendar day, for "today". The first call loads the time zone data (a few ms, a few MB): it waits for the first event. */
const dayOf = (at: number) => new Date(at).toDateString();

export class ActivityLog {
  private readonly entries: ActivityEntry[] = [];
  /** Minute buckets by their start, at most CHART_MINUTES + 1 kept. */
  private readonly buckets = new Map<number, ChartBucket>();
  private readonly tallies = new Map<string, ChannelTally>();
  /** The day today's counts are for; set by the first event (until then every count is zero). */
  private tallyDay: string | undefined;
  private lastTurn: LastTurn | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /** Take one telemetry event: the list, the chart, the channel tallies, the last turn. */
  record(any: TelemetryEvent): void {
    const event = any as AnyTelemetryEvent;
    const at = this.now();
    const fields = safeFields(event);
    if (fields) {
      const entry: ActivityEntry = { at, event: event.name };
      if (fields.channel !== undefined) entry.channel = fields.channel;
      if (fields.direction !== undefined) entry.direction = fields.direction;
      if (fields.durationMs !== undefined) entry.durationMs = fields.durationMs;
      if (fields.detail !== undefined) entry.detail = fields.detail;
      this.entries.push(entry);
      if (this.entries.length > ACTIVITY_KEPT) this.entries.splice(0, this.entries.length - ACTIVITY_KEPT);
    }
    if (event.name === "channel.message") {
      const { channel, direction } = event.metadata;
      const tally = this.tally(channel, at);
      const bucket = this.bucket(at);
      if (direction === "inbound") {
        tally.lastInboundAt = at;
        tally.todayInbound += event.measurements.count;
        bucket.inbound += event.measurements.count;
      } else {
        tally.lastOutboundAt = at;
        tally.todayOutbound += event.measurements.count;
        bucket.outbound += event.measurements.count;
      }
    }
    if (event.name === "turn.done" || event.name === "turn.failed") this.bucket(at).turns++;
    if (event.name === "turn.done") {
      this.lastTurn = {
        at,
        channel: event.metadata.channel,
        ...(event.metadata.provider ? { provider: event.metadata.provider } : {}),
        durationMs: Math.round(event.measurements.duration_ms),
        inputTokens: event.measurements.input_tokens,
        outputTokens: event.measurements.output_tokens,
      };
    }
  }

  /**
   * A channel's status as the health report has it now: remembers when it
   * became ready, and the last reason it was not (`detail`, from the
   * report's failures, which never carry a secret).
   */
  observeChannel(channel: string, status: string, detail?: string, connected = status === "ready"): void {
    const at = this.now();
    const tally = this.tallyOf(channel);
    if (connected && tally.readySince === null) tally.readySince = at;
    if (!connected) tally.readySince = null;
    if ((status === "degraded" || status === "failed" || status === "unconfigured") && detail && tally.lastError?.detail !== detail) {
      tally.lastError = { at, detail };
    }
  }

  snapshot(): ActivitySnapshot {
    const at = this.now();
    this.rollDay(at);
    const first = minuteOf(at) - (CHART_MINUTES - 1) * MINUTE_MS;
    for (const start of this.buckets.keys()) if (start < first) this.buckets.delete(start);
    const chart: ChartBucket[] = [];
    for (let start = first; start <= minuteOf(at); start += MINUTE_MS) {
      chart.push({ ...(this.buckets.get(start) ?? { at: start, turns: 0, inbound: 0, outbound: 0 }) });
    }
    return {
      entries: this.entries.map((e) => ({ ...e })).reverse(),
      chart,
      channels: Object.fromEntries([...this.tallies].map(([name, tally]) => [name, { ...tally }])),
      lastTurn: this.lastTurn ? { ...this.lastTurn } : null,
    };
  }

  private tally(channel: string, at: number): ChannelTally {
    this.rollDay(at);
    return this.tallyOf(channel);
  }

  /** A channel's tally as it is: for its status fields, which do not reset at midnight (and so need no local day, nor the time-zone data it loads). */
  private tallyOf(channel: string): ChannelTally {
    return this.tallies.getOrInsertComputed(channel, emptyTally);
  }

  /** Past midnight, today's counts start again. */
  private rollDay(at: number): void {
    const day = dayOf(at);
    if (day === this.tallyDay) return;
    const first = this.tallyDay === undefined;
    this.tallyDay = day;
    if (first) return;
    for (const tally of this.tallies.values()) {
      tally.todayInbound = 0;
      tally.todayOutbound = 0;
    }
  }

  private bucket(at: number): ChartBucket {
    const start = minuteOf(at);
    let bucket = this.buckets.get(start);
    if (!bucket) {
      bucket = { at: start, turns: 0, inbound: 0, outbound: 0 };
      this.buckets.set(start, bucket);
      // Keep the map small even when nobody looks.
      if (this.buckets.size > CHART_MINUTES + 1) this.buckets.delete(Math.min(...this.buckets.keys()));
    }
    return bucket;
  }
}

const minuteOf = (at: number) => Math.floor(at / MINUTE_MS) * MINUTE_MS;
