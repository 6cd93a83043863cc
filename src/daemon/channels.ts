/**
 * Starts the channel adapters and keeps them up: an adapter whose start
 * fails is retried with backoff, and until it recovers the failure is what
 * health reports for it. One broken channel never stops the daemon.
 */
import type { AdapterContext, ChannelAdapter } from "../channels/types.ts";
import type { ChannelName } from "../config/schema.ts";
import { describeForLog, pageSafeMessage } from "../kernel/fault-line.ts";
import type { Logger } from "../kernel/log.ts";
import type { ChannelRuntimeState } from "./health.ts";

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;
const START_PATIENCE_MS = 2000;

export class ChannelSupervisor {
  private readonly failures = new Map<ChannelName, string>();
  private readonly timers = new Map<ChannelName, ReturnType<typeof setTimeout>>();
  private stopped = false;

  constructor(
    private readonly adapters: Map<ChannelName, ChannelAdapter>,
    private readonly context: (name: ChannelName) => AdapterContext,
    private readonly log: Logger,
  ) {}

  /**
   * Start every adapter; failures are retried in the background. Waits at
   * most `patienceMs`: a platform that is slow to answer (its adapter checks
   * the token first) shows as "starting" instead of holding up the daemon.
   */
  async startAll(patienceMs = START_PATIENCE_MS): Promise<void> {
    const all = Promise.all([...this.adapters.keys()].map((name) => this.start(name, FIRST_RETRY_MS)));
    await Promise.race([all, Bun.sleep(patienceMs)]);
  }

  /** What health shows: a failing start overrides what the adapter says of itself. */
  state(name: ChannelName): ChannelRuntimeState | undefined {
    const failure = this.failures.get(name);
    if (failure) return { status: "failed", process_alive: false, detail: failure };
    return this.adapters.get(name)?.state();
  }

  /** The channels with an adapter, started or retrying. */
  names(): ChannelName[] {
    return [...this.adapters.keys()];
  }

  /** Stop one channel's adapter and forget it (a reload turned it off or is replacing it). */
  async remove(name: ChannelName): Promise<void> {
    const adapter = this.adapters.get(name);
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    this.failures.delete(name);
    this.adapters.delete(name);
    await adapter?.stop().catch(() => {});
  }

  /** Put `adapter` in place of the channel's current one and start it, waiting at most `patienceMs`. */
  async replace(name: ChannelName, adapter: ChannelAdapter, patienceMs = START_PATIENCE_MS): Promise<void> {
    await this.remove(name);
    if (this.stopped) return;
    this.adapters.set(name, adapter);
    await Promise.race([this.start(name, FIRST_RETRY_MS), Bun.sleep(patienceMs)]);
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    await Promise.all([...this.adapters.values()].map((a) => a.stop().catch(() => {})));
  }

  private async start(name: ChannelName, retryMs: number): Promise<void> {
    const adapter = this.adapters.get(name);
    if (!adapter) return;
    try {
      await adapter.start(this.context(name));
      if (this.failures.delete(name)) this.log.info("channel recovered", { channel: name });
    } catch (error) {
      // Replaced or removed by a reload while it was starting: its failure is not the channel's any more.
      if (this.adapters.get(name) !== adapter) return;
      // Health gets our words only; the platform's reason (which may echo what a user wrote) is for the log.
      const safe = pageSafeMessage(error);
      this.failures.set(name, safe ? `start failed: ${safe}` : "start failed (the log says why)");
      this.log.error("channel failed to start; retrying", { channel: name, error: describeForLog(error), retry_ms: retryMs });
      await adapter.stop().catch(() => {});
      if (this.stopped || this.adapters.get(name) !== adapter) return;
      this.timers.set(
        name,
        setTimeout(() => void this.start(name, Math.min(retryMs * 2, MAX_RETRY_MS)), retryMs),
      );
    }
  }
}
