/**
 * The one fake clock of the tests: a src/kernel/clock.ts Clock whose time
 * moves only when the test says (`advance`), firing each timer at its
 * moment, in order, and letting the work a timer starts settle before the
 * next one fires. Its methods are bound: `clock.now` can be handed on alone
 * wherever code takes a `() => number`.
 */
import type { Clock } from "../../src/kernel/clock.ts";

interface Timer {
  at: number;
  callback: () => void;
}

export class FakeClock implements Clock {
  private time: number;
  private seq = 0;
  private readonly timers = new Map<number, Timer>();

  /** `start`: the time it reads before any advance (ms since the epoch; 0 where only differences matter). */
  constructor(start = 0) {
    this.time = start;
  }

  now = (): number => this.time;

  setTimeout = (callback: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.time + Math.max(0, ms), callback });
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.timers.delete(handle as number);
  };

  /** A src/kernel/wait.ts `Sleep` on this clock: resolves when `advance` passes `ms` from now, rejects when `signal` aborts. */
  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.clearTimeout(handle);
        reject(signal?.reason);
      };
      const handle = this.setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });

  /** Move time forward by `ms`, running the timers due meanwhile in time order, each at its moment, and letting their async work settle. */
  advance = async (ms: number): Promise<void> => {
    const target = this.time + ms;
    for (;;) {
      let next: [number, Timer] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].callback();
      await settle();
    }
    this.time = target;
    await settle();
  };

  /** How many timers are set and not yet fired or cleared. */
  pending = (): number => this.timers.size;
}

/** Let queued promise chains run (microtasks only: no real time passes). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}
