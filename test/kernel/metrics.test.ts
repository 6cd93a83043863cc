import { describe, expect, test } from "bun:test";
import { ACTIVITY_KEPT, ActivityLog, CHART_MINUTES } from "../../src/kernel/activity.ts";
import { Metrics } from "../../src/kernel/metrics.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import { histogramSeries, parseMetrics, sampleValue } from "../helpers/prometheus.ts";

const clockAt = (start: number) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
};

describe("Metrics", () => {
  test("one subscription feeds the Prometheus counters and the dashboard's totals alike", async () => {
    const telemetry = new Telemetry();
    const metrics = new Metrics({ version: "9.9.9" });
    metrics.subscribe(telemetry);
    telemetry.emit("channel.message", { measurements: { count: 1 }, metadata: { channel: "telegram", direction: "inbound" } });
    telemetry.emit("channel.message", { measurements: { count: 2 }, metadata: { channel: "telegram", direction: "outbound" } });
    telemetry.emit("turn.done", {
      measurements: { duration_ms: 1500, input_tokens: 300, output_tokens: 40 },
      metadata: { channel: "telegram", kind: "conversation", outcome: "ok" },
    });
    telemetry.emit("turn.failed", { measurements: { duration_ms: 90_000 }, metadata: { channel: "slack", kind: "conversation", class: "timeout" } });
    telemetry.emit("channel.webhook", { measurements: { fresh: 2, duplicate: 1, duration_ms: 3 }, metadata: { channel: "slack", outcome: "accepted" } });
    telemetry.emit("channel.webhook", {
      measurements: { fresh: 0, duplicate: 0, duration_ms: 0 },
      metadata: { channel: "slack", outcome: "invalid_signature" },
    });
    telemetry.emit("channel.stream", { measurements: { chars: 30 }, metadata: { channel: "telegram", phase: "open", session_id: "s-1" } });
    telemetry.emit("transcription.message", {
      measurements: { duration_ms: 800, bytes: 5000 },
      metadata: { channel: "telegram", backend: "openai", status: "refused", reason: "no_key" },
    });
    metrics.readFrom(() => ({
      runningTurns: 1,
      waitingMessages: 3,
      backgroundTasks: 2,
      outboxPending: 4,
      jobsPending: 5,
      channels: [{ name: "telegram", status: "degraded" }],
    }));

    const families = parseMetrics(await metrics.text());
    expect(sampleValue(families, "fermix_messages_total", { channel: "telegram", direction: "outbound" })).toBe(2);
    // The turn-duration histogram is one series per channel and outcome.
    const exposition = await metrics.text();
    expect(families.find((f) => f.name === "fermix_turn_duration_seconds")?.type).toBe("HISTOGRAM");
    const answered = histogramSeries(exposition, "fermix_turn_duration_seconds", { channel: "telegram", outcome: "ok" });
    expect(answered).toMatchObject({ count: "1", sum: "1.5" });
    expect(answered?.buckets).toMatchObject({ "1": "0", "2": "1" });
    const failed = histogramSeries(exposition, "fermix_turn_duration_seconds", { channel: "slack", outcome: "failed" });
    expect(failed).toMatchObject({ count: "1", sum: "90" });
    expect(failed?.buckets).toMatchObject({ "60": "0", "120": "1" });
    expect(histogramSeries(exposition, "fermix_turn_duration_seconds", { channel: "telegram", outcome: "failed" })).toBeUndefined();
    expect(sampleValue(families, "fermix_turn_tokens_total", { kind: "input" })).toBe(300);
    expect(sampleValue(families, "fermix_turn_failures_total", { channel: "slack", class: "timeout" })).toBe(1);
    expect(sampleValue(families, "fermix_webhook_requests_total", { channel: "slack", outcome: "invalid_signature" })).toBe(1);
    expect(sampleValue(families, "fermix_webhook_messages_total", { channel: "slack", kind: "duplicate" })).toBe(1);
    expect(sampleValue(families, "fermix_stream_phases_total", { channel: "telegram", phase: "open" })).toBe(1);
    expect(sampleValue(families, "fermix_transcription_attempts_total", { backend: "openai", status: "refused", reason: "no_key" })).toBe(1);
    expect(sampleValue(families, "fermix_queue_waiting_messages")).toBe(3);
    expect(sampleValue(families, "fermix_outbox_pending")).toBe(4);
    expect(sampleValue(families, "fermix_channel_status", { channel: "telegram", status: "degraded" })).toBe(1);
    expect(sampleValue(families, "fermix_channel_status", { channel: "telegram", status: "ready" })).toBe(0);
    expect(sampleValue(families, "fermix_build_info", { version: "9.9.9" })).toBe(1);

    expect(await metrics.totals()).toEqual({ channels: { telegram: { inbound: 1, outbound: 2 } }, turns: 2 });
    expect(metrics.activity.snapshot().lastTurn).toMatchObject({ channel: "telegram", durationMs: 1500, inputTokens: 300, outputTokens: 40 });
  });

  test("the exposition never carries a session id or a sender id", async () => {
    const telemetry = new Telemetry();
    const metrics = new Metrics({ version: "t" });
    metrics.subscribe(telemetry);
    telemetry.emit("channel.stream", { measurements: { chars: 1 }, metadata: { channel: "slack", phase: "seal", session_id: "SESSION-123" } });
    telemetry.emit("command.unauthorized", { measurements: { count: 1 }, metadata: { channel: "slack", command: "stop", sender_id: "U-SENDER-9" } });
    const text = await metrics.text();
    expect(text).not.toContain("SESSION-123");
    expect(text).not.toContain("U-SENDER-9");
  });
});

describe("ActivityLog", () => {
  test("lists events through an allow-list: no sender id, no session id, stream phases left to the counters", () => {
    const clock = clockAt(Date.UTC(2026, 5, 1, 12));
    const log = new ActivityLog(clock.now);
    const event = <T>(e: T) => e as never;
    log.record(event({ name: "command.unauthorized", measurements: { count: 1 }, metadata: { channel: "slack", command: "stop", sender_id: "U-SENDER-9" } }));
    log.record(event({ name: "channel.stream", measurements: { chars: 1 }, metadata: { channel: "slack", phase: "seal", session_id: "SESSION-1" } }));
    log.record(event({ name: "channel.reply", measurements: { duration_ms: 12.4, parts: 1 }, metadata: { channel: "slack", kind: "text", ok: false } }));
    const { entries } = log.snapshot();
    expect(entries).toEqual([
      { at: clock.now(), event: "channel.reply", channel: "slack", direction: "outbound", durationMs: 12, detail: "text failed" },
      { at: clock.now(), event: "command.unauthorized", channel: "slack", detail: "/stop refused" },
    ]);
    expect(JSON.stringify(log.snapshot())).not.toContain("U-SENDER-9");
    expect(JSON.stringify(log.snapshot())).not.toContain("SESSION-1");
  });

  test("keeps the newest entries, a 60-minute chart, and today's counts that start again at midnight", () => {
    const clock = clockAt(new Date(2026, 5, 1, 23, 58, 30).getTime());
    const log = new ActivityLog(clock.now);
    const message = (direction: "inbound" | "outbound") =>
      log.record({ name: "channel.message", measurements: { count: 1 }, metadata: { channel: "telegram", direction } } as never);
    for (let i = 0; i < ACTIVITY_KEPT + 5; i++) message("inbound");
    message("outbound");
    log.record({
      name: "turn.done",
      measurements: { duration_ms: 10, input_tokens: 1, output_tokens: 1 },
      metadata: { channel: "telegram", outcome: "ok" },
    } as never);
    let snap = log.snapshot();
    expect(snap.entries).toHaveLength(ACTIVITY_KEPT);
    expect(snap.entries[0]!.event).toBe("turn.done");
    expect(snap.chart).toHaveLength(CHART_MINUTES);
    expect(snap.chart.at(-1)).toMatchObject({ inbound: ACTIVITY_KEPT + 5, outbound: 1, turns: 1 });
    expect(snap.channels.telegram).toMatchObject({ todayInbound: ACTIVITY_KEPT + 5, todayOutbound: 1 });

    clock.advance(2 * 60_000); // past midnight
    message("inbound");
    snap = log.snapshot();
    expect(snap.channels.telegram).toMatchObject({ todayInbound: 1, todayOutbound: 0 });
    expect(snap.chart.at(-1)).toMatchObject({ inbound: 1 });
    expect(snap.chart.at(-3)).toMatchObject({ inbound: ACTIVITY_KEPT + 5 });

    clock.advance(61 * 60_000); // the hour has passed: the chart is empty again
    expect(log.snapshot().chart.every((b) => b.inbound === 0 && b.turns === 0)).toBe(true);
  });

  test("remembers when a channel became ready and its last error, after it recovers", () => {
    const clock = clockAt(1_000_000);
    const log = new ActivityLog(clock.now);
    log.observeChannel("telegram", "starting");
    expect(log.snapshot().channels.telegram!.readySince).toBeNull();
    clock.advance(1000);
    log.observeChannel("telegram", "ready");
    clock.advance(5000);
    log.observeChannel("telegram", "ready");
    expect(log.snapshot().channels.telegram!.readySince).toBe(1_001_000);
    log.observeChannel("telegram", "degraded", "degraded: polling failed: server error (HTTP 502); reconnecting");
    expect(log.snapshot().channels.telegram!.readySince).toBeNull();
    clock.advance(3000);
    log.observeChannel("telegram", "ready");
    expect(log.snapshot().channels.telegram).toMatchObject({
      readySince: 1_009_000,
      lastError: { at: 1_006_000, detail: "degraded: polling failed: server error (HTTP 502); reconnecting" },
    });
    // Degraded because replies fail to send, still connected: the connection's start stays.
    clock.advance(4000);
    log.observeChannel("telegram", "degraded", "degraded: sends failing: 502", true);
    expect(log.snapshot().channels.telegram).toMatchObject({ readySince: 1_009_000, lastError: { at: 1_013_000, detail: "degraded: sends failing: 502" } });
    clock.advance(1000);
    log.observeChannel("telegram", "ready");
    expect(log.snapshot().channels.telegram!.readySince).toBe(1_009_000);
  });
});
