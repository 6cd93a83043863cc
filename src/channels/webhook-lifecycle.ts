/**
 * What the webhook channels (Slack, WhatsApp) share as adapters: nothing to
 * start — they are "running" while the daemon serves their routes — their
 * health, their secrets registered with the logger, and how a file over the
 * media cap is reported.
 */
import type { ChannelName } from "../config/schema.ts";
import { PageSafeError } from "../kernel/fault-line.ts";
import type { ChannelRuntimeState } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { type OutboundMedia, SendFailed } from "../message/index.ts";
import type { AdapterContext } from "./types.ts";

export interface WebhookLifecycle {
  /** The adapter's logger: the one given at construction, then the daemon's once started. */
  log(): Logger | undefined;
  start(context: AdapterContext, secrets: Array<string | undefined>): void;
  stop(): void;
  state(): ChannelRuntimeState;
  /** A file was not sent for being over the cap (the user was told in text): log it and count it. */
  overCap(media: OutboundMedia, size: number): void;
}

export function webhookLifecycle(channel: ChannelName, initialLog?: Logger): WebhookLifecycle {
  let log = initialLog;
  let telemetry: Telemetry | undefined;
  let phase: "idle" | "running" | "stopped" = "idle";
  return {
    log: () => log,
    start(context, secrets) {
      log = context.log;
      telemetry = context.telemetry;
      // The daemon registers config secrets already; this keeps ones that came another way out of logs too.
      context.log.redactor.add(...secrets);
      phase = "running";
    },
    stop() {
      phase = "stopped";
    },
    state() {
      if (phase === "running") return { status: "ready", process_alive: true };
      return { status: phase === "idle" ? "starting" : "failed", process_alive: false, detail: phase === "idle" ? "not started" : "stopped" };
    },
    overCap(media, size) {
      log?.warn("file over the media cap not sent; the user was told", { kind: media.kind, bytes: size });
      telemetry?.emit("channel.media_send_error", { measurements: { count: 1 }, metadata: { channel, kind: media.kind, reason: "over_cap" } });
    },
  };
}

/**
 * Why a start-up credential check failed, in words that send the operator
 * the right way: an outage (5xx, 429, the network) is not a rejected
 * credential — the start is retried and nothing needs changing. The message
 * is page-safe (our words and the HTTP status); the platform's own reason is
 * the error's cause, for the log.
 */
export function startupFailure(platform: string, credential: string, error: unknown): PageSafeError {
  const status = error instanceof SendFailed ? error.status : undefined;
  const http = status !== undefined ? ` (HTTP ${status})` : "";
  const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
  if ((error instanceof SendFailed && error.transient) || timedOut) {
    return new PageSafeError(`${platform} could not be reached to check the ${credential} (an outage, not the ${credential})${http}; retrying`, {
      cause: error,
    });
  }
  return new PageSafeError(`${platform} did not accept the ${credential}${http}`, { cause: error });
}
