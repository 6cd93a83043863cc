/**
 * The supervised getUpdates loop. Each batch is handed on together with its
 * new offset, which the caller commits in the same SQLite transaction as the
 * inbox write; only then is the next batch asked for. Telegram forgets an
 * update only when a later getUpdates carries a higher offset, so a crash
 * anywhere in between redelivers rather than loses, and the idempotency keys
 * drop the repeat.
 *
 * Failures never end the loop except a rejected token: network errors and
 * 5xx reconnect with exponential backoff, a 409 (another poller on this bot)
 * is reported as degraded and retried, a 429 waits what Telegram asks.
 */
import type { Database } from "bun:sqlite";
import type { Update } from "grammy/types";
import type { Api } from "grammy/web";
import { faultLine, statusFault } from "../../kernel/fault-line.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import { sleep } from "../../kernel/wait.ts";
import { HandoffUnavailable } from "../../message/index.ts";
import { SettingsStore } from "../../store/settings.ts";
import { classify, describeError, grammySignal, retryAfterSeconds, statusOf } from "./api.ts";
import { ALLOWED_UPDATES, nextOffset } from "./inbound.ts";

/** The persisted poll offset, per bot (update ids of two bots are unrelated), in the `settings` table. */
export class OffsetStore {
  private readonly key: string;
  private readonly settings: SettingsStore;

  constructor(db: Database, botId: string) {
    this.key = `telegram.offset.${botId}`;
    this.settings = new SettingsStore(db);
  }

  /** The offset to resume from, or undefined on a first run. */
  load(): number | undefined {
    const offset = Number(this.settings.get(this.key) ?? Number.NaN);
    return Number.isSafeInteger(offset) ? offset : undefined;
  }

  /** Put back an earlier offset (none: forget it), after a hand-off that failed past its commit. */
  restore(offset: number | undefined): void {
    if (offset === undefined) this.settings.delete(this.key);
    else this.save(offset);
  }

  /** Store the offset; runs inside the caller's transaction when there is one. */
  save(offset: number): void {
    this.settings.set(this.key, String(offset));
  }
}

/** What the loop needs: the API, the offset store, and where batches go. */
export interface PollerOptions {
  api: Pick<Api, "getUpdates" | "deleteWebhook">;
  /** Only to scrub it out of error text. */
  token: string;
  offsets: OffsetStore;
  /**
   * Hand a batch on; must commit `offset` (via `offsets.save`) in the same
   * transaction as the messages, and resolve only once both are durable.
   */
  deliver(updates: Update[], offset: number): Promise<void>;
  log: Logger;
  /** Long-poll timeout, seconds (Telegram's upper bound is 50). */
  timeoutSeconds?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** The longest 429 wait honoured before retrying anyway. */
  maxRetryAfterMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** The hand-off failed; wraps the cause so the loop can say so. */
class DeliveryFailed extends Error {
  constructor(override readonly cause: unknown) {
    super("delivery failed");
  }
}

const DEFAULT_BACKOFF = { initialMs: 1000, maxMs: 60_000 };
const MAX_RETRY_AFTER_MS = 300_000;
/** The least time between two getUpdates calls that came back empty. */
const MIN_EMPTY_POLL_MS = 1000;
/** Margin over the poll timeout before a silent connection is given up. */
const POLL_GRACE_MS = 30_000;

/** Sleep that ends early (resolving) when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => undefined);
}

/** One bot's getUpdates loop, with the health it reports. */
export class Poller {
  private status: ChannelRuntimeState = { status: "starting", process_alive: false };
  private controller: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private offset: number | undefined;
  private failures = 0;
  private warnedShortPolls = false;

  constructor(private readonly options: PollerOptions) {}

  /** What health reports: starting until the first successful poll, a failure until it recovers. */
  state(): ChannelRuntimeState {
    return { ...this.status };
  }

  /** Start the loop (idempotent). */
  start(): void {
    if (this.loop) return;
    this.controller = new AbortController();
    this.offset = this.options.offsets.load();
    this.status = { status: "starting", process_alive: true };
    const signal = this.controller.signal;
    this.loop = this.supervise(signal).finally(() => {
      this.status = { ...this.status, process_alive: false };
    });
  }

  /** Abort the poll in flight and wait for the loop to end. */
  async stop(): Promise<void> {
    this.controller?.abort();
    await this.loop;
    if (this.status.status !== "failed") this.status = { status: "failed", process_alive: false, detail: "stopped" };
  }

  /** Restart the loop with backoff if it ever throws (a bug, not a Telegram error): the crash shows until it recovers. */
  private async supervise(signal: AbortSignal): Promise<void> {
    const sleep = this.options.sleep ?? abortableSleep;
    while (!signal.aborted) {
      try {
        return await this.run(signal);
      } catch (error) {
        if (signal.aborted) return;
        this.failures++;
        const wait = this.backoffMs();
        this.degraded("poller crashed; restarting", wait, "telegram poller crashed; restarting", { error: describeError(error, this.options.token) });
        await sleep(wait, signal);
      }
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { api, log } = this.options;
    const sleep = this.options.sleep ?? abortableSleep;
    let webhookCleared = false;
    log.info("telegram polling started", { offset: this.offset ?? "none" });
    while (!signal.aborted) {
      try {
        // Long polling and a webhook exclude each other; Fermix offers no webhook, so clear any left over.
        if (!webhookCleared) {
          await api.deleteWebhook({}, grammySignal(signal));
          webhookCleared = true;
        }
        await this.pollOnce(signal);
      } catch (error) {
        if (signal.aborted) break;
        const wait = this.onFailure(error);
        if (wait === null) return;
        await sleep(wait, signal);
      }
    }
  }

  private async pollOnce(signal: AbortSignal): Promise<void> {
    // A short poll while not yet healthy: health turns ready (or shows the fault) without waiting out a long poll.
    const timeout = this.status.status === "ready" ? (this.options.timeoutSeconds ?? 25) : 0;
    const params: { timeout: number; limit: number; allowed_updates: Array<(typeof ALLOWED_UPDATES)[number]>; offset?: number } = {
      timeout,
      limit: 100,
      allowed_updates: [...ALLOWED_UPDATES],
    };
    if (this.offset !== undefined) params.offset = this.offset;
    const started = Date.now();
    const updates = await this.options.api.getUpdates(params, grammySignal(AbortSignal.any([signal, AbortSignal.timeout(timeout * 1000 + POLL_GRACE_MS)])));
    this.recovered();
    if (updates.length === 0) {
      // A long poll that came back empty at once: the server does not hold polls open (an emulator, a proxy).
      // Without a pause this loop would ask hundreds of times a second.
      const elapsed = Date.now() - started;
      if (timeout > 0 && elapsed < MIN_EMPTY_POLL_MS) {
        if (!this.warnedShortPolls) {
          this.warnedShortPolls = true;
          this.options.log.warn("the Bot API server answers long polls at once; polling at most once a second", { asked_timeout_s: timeout });
        }
        await (this.options.sleep ?? abortableSleep)(MIN_EMPTY_POLL_MS - elapsed, signal);
      }
      return;
    }
    const next = nextOffset(updates, this.offset ?? 0);
    try {
      await this.options.deliver(updates, next);
    } catch (error) {
      // The hand-off may have committed the offset before failing (capacity): put the old one back,
      // so a restart asks Telegram for these updates again, as the next poll will.
      this.options.offsets.restore(this.offset);
      throw new DeliveryFailed(error);
    }
    this.offset = next;
  }

  private recovered(): void {
    if (this.status.status !== "ready") {
      const was = this.status.detail;
      this.options.log.info(was ? "telegram polling recovered" : "telegram polling ready", was ? { after: was } : {});
    }
    this.failures = 0;
    this.status = { status: "ready", process_alive: true };
  }

  /** Record a failure in state and the log; the wait before retrying, or null to stop for good. */
  private onFailure(error: unknown): number | null {
    const { log, token } = this.options;
    this.failures++;
    const exponential = this.backoffMs();
    if (error instanceof DeliveryFailed) {
      const capacity = error.cause instanceof HandoffUnavailable;
      const detail = capacity ? "daemon at capacity: updates will be fetched again" : "hand-off failed: updates will be fetched again";
      return this.degraded(
        detail,
        exponential,
        "telegram updates not handed off; polling them again",
        capacity ? {} : { error: describeError(error.cause, token) },
      );
    }
    const kind = classify(error);
    const reason = describeError(error, token);
    const code = (error as { error_code?: unknown }).error_code;
    // Health gets the status only: Telegram's description of a failure is for the log.
    const status = statusOf(error);
    const http = status !== undefined ? ` (HTTP ${status})` : "";
    if (kind === "unauthorized" || code === 404) {
      // A rejected token does not heal by retrying; it needs a config change and a restart.
      this.status = { status: "failed", process_alive: false, detail: `bot token rejected by Telegram${http}; fix bot_token and restart` };
      log.error("telegram polling stopped: the bot token was rejected", { error: reason });
      return null;
    }
    if (kind === "conflict") {
      const detail = /webhook/i.test(reason)
        ? "conflict (409): a webhook was set on this bot token elsewhere; retrying"
        : "conflict (409): another getUpdates poller is using this bot token; retrying";
      return this.degraded(detail, exponential, "telegram polling conflict: is another instance running with this bot token?", { error: reason });
    }
    if (kind === "rate_limited") {
      const seconds = retryAfterSeconds(error) ?? 1;
      // Telegram means it: polling again sooner only earns another 429.
      const wait = Math.min(seconds * 1000, this.options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS);
      return this.degraded(`rate limited (429): retrying after ${seconds} s`, wait, "telegram polling rate limited");
    }
    return this.degraded(
      `polling failed: ${faultLine({ fault: statusFault(status), ...(status !== undefined ? { status } : {}) }, "Telegram")}; reconnecting`,
      exponential,
      "telegram polling failed; reconnecting",
      {
        error: reason,
      },
    );
  }

  /** Exponential backoff for the current run of failures, capped. */
  private backoffMs(): number {
    const { initialMs, maxMs } = this.options.backoff ?? DEFAULT_BACKOFF;
    return Math.min(maxMs, initialMs * 2 ** Math.min(this.failures - 1, 30));
  }

  /** `detail` is what health shows (our words); `why` carries Telegram's own words, for the log only. */
  private degraded(detail: string, waitMs: number, message: string, why: Record<string, string> = {}): number {
    this.status = { status: "degraded", process_alive: true, detail };
    this.options.log.warn(message, { detail, ...why, attempt: this.failures, retry_in_ms: waitMs });
    return waitMs;
  }
}
