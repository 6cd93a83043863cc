/**
 * A typed in-process event bus carrying Fermix's telemetry events. Each
 * event has numeric measurements and string metadata; subscribers (logs,
 * tests, later exporters) never throw into the emitter.
 */
import type { GatewayChannel } from "../config/schema.ts";

/** Every source of turns, by name: the configured channels and the local command line. */
type ChannelName = GatewayChannel;

type Direction = "inbound" | "outbound";

export interface TelemetryEvents {
  "channel.message": { measurements: { count: number }; metadata: { channel: ChannelName; direction: Direction } };
  "channel.reply": {
    measurements: { duration_ms: number; parts: number };
    metadata: { channel: ChannelName; kind: "text" | "media" | "reaction"; ok: boolean };
  };
  "channel.media_send_error": {
    measurements: { count: number };
    metadata: { channel: ChannelName; kind: string; reason: string };
  };
  "channel.stream": {
    measurements: { chars: number };
    metadata: {
      channel: ChannelName;
      phase: "open" | "edit" | "block" | "rotate" | "seal" | "discard";
      session_id: string;
    };
  };
  "channel.webhook": {
    measurements: { fresh: number; duplicate: number; duration_ms: number };
    metadata: { channel: ChannelName; outcome: string };
  };
  "command.received": { measurements: { count: number }; metadata: { channel: ChannelName; command: string } };
  "command.unauthorized": {
    measurements: { count: number };
    metadata: { channel: ChannelName; command: string; sender_id: string };
  };
  "command.dispatch": {
    measurements: { duration_ms: number };
    metadata: { channel: ChannelName; command: string; ok: boolean };
  };
  "transcription.message": {
    measurements: { duration_ms: number; bytes: number };
    /** `reason` says why a refusal or error happened: no_key, too_large, download_failed, failed. */
    metadata: { channel: ChannelName; backend: string; status: "ok" | "error" | "refused"; reason?: string };
  };
  "dispatcher.agent_unavailable": { measurements: { count: number }; metadata: { channel: ChannelName } };
  /** A send that failed for a reason that may heal, scheduled to be tried again. */
  "delivery.retry": { measurements: { attempt: number; delay_ms: number }; metadata: { channel: ChannelName; kind: "text" | "media" } };
  /** Sends given up: refused by the platform, still failing at the retry horizon, or set aside (refused while the chat took other calls). */
  "delivery.failed": {
    measurements: { count: number };
    metadata: { channel: ChannelName; kind: "text" | "media"; reason: "refused" | "horizon" | "set_aside" };
  };
  /** A model request that failed and is tried again. */
  "provider.retry": { measurements: { attempt: number; delay_ms: number }; metadata: { provider: string; reason: string } };
  /** A request moved on from a provider that failed before answering to the next one of the chain (the fault's class, never its words). */
  "provider.failover": { measurements: { count: number }; metadata: { from: string; to: string; class: string } };
  /** A turn that ended in a fault the user is told about (the class of the fault, never its text). */
  "turn.failed": { measurements: { duration_ms: number }; metadata: { channel: ChannelName; kind: string; class: string } };
  /** A workspace tool call and how it ended: ok, refused (out of reach), error (bad arguments, a failure). */
  "tool.call": { measurements: { duration_ms: number }; metadata: { channel: ChannelName; tool: string; outcome: "ok" | "refused" | "error" } };
  /** A sandbox change or access request decided: what it was, and how it ended. */
  "sandbox.decision": {
    measurements: { count: number };
    metadata: {
      channel: ChannelName;
      kind: "proposal" | "access";
      outcome: "confirmed" | "denied" | "refused" | "timed_out";
      via: "text" | "button" | "editor" | "timeout";
    };
  };
  /** A turn that ran to an answer (what the dashboard's provider card and charts show). */
  "turn.done": {
    measurements: { duration_ms: number; input_tokens: number; output_tokens: number };
    /** `provider`: which one gave the answer, where a failover chain answered. */
    metadata: { channel: ChannelName; kind: string; outcome: string; provider?: string };
  };
  /** One desktop action (computer use): its kind, and whether it was done, refused (paused, over the limit) or failed. */
  "computer.action": {
    measurements: { duration_ms: number };
    metadata: { channel: ChannelName; action: string; outcome: "ok" | "refused" | "error" };
  };
  /** A realtime voice session began (its companion was told to speak) or ended, and why. */
  "realtime.session": {
    measurements: { duration_ms: number };
    metadata: { channel: ChannelName; phase: "started" | "ended"; reason: string };
  };
  /** One run of a scheduled job: how it ended, how late it started (0 on time), where its result went. */
  "job.run": {
    measurements: { duration_ms: number; late_ms: number };
    metadata: { channel: ChannelName; kind: "once" | "repeat"; outcome: string; late: boolean };
  };
}

export type TelemetryName = keyof TelemetryEvents;
export type TelemetryEvent<K extends TelemetryName = TelemetryName> = { name: K } & TelemetryEvents[K];
/** Any one event as a union discriminated by `name`, so a switch on it narrows the fields. */
export type AnyTelemetryEvent = { [K in TelemetryName]: TelemetryEvent<K> }[TelemetryName];
type Handler<K extends TelemetryName> = (event: TelemetryEvent<K>) => void;

export class Telemetry {
  private readonly handlers = new Map<TelemetryName | "*", Set<Handler<never>>>();

  /** Subscribe to one event; returns the unsubscribe function. */
  on<K extends TelemetryName>(name: K, handler: Handler<K>): () => void {
    return this.add(name, handler as Handler<never>);
  }

  /** Subscribe to every event. */
  onAny(handler: (event: TelemetryEvent) => void): () => void {
    return this.add("*", handler as Handler<never>);
  }

  emit<K extends TelemetryName>(name: K, payload: TelemetryEvents[K]): void {
    const event = { name, ...payload } as TelemetryEvent<K>;
    for (const key of [name, "*"] as const) {
      for (const handler of this.handlers.get(key) ?? []) {
        try {
          (handler as Handler<K>)(event);
        } catch {
          // A broken subscriber must not break the path that emitted.
        }
      }
    }
  }

  private add(name: TelemetryName | "*", handler: Handler<never>): () => void {
    const set = this.handlers.getOrInsertComputed(name, () => new Set());
    set.add(handler);
    return () => set.delete(handler);
  }
}
