/**
 * The one source of time and timers for code that waits: the scheduler, the
 * streaming engine, the album buffer, the garbage-collection settler. Each
 * takes a Clock (the system's by default) so a test moves time itself
 * (test/helpers/clock.ts) instead of waiting for it.
 */

export interface Clock {
  /** Milliseconds since the epoch (a fake clock may start anywhere). */
  now(): number;
  /** Run `callback` once after `ms`; the handle is for clearTimeout. */
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Let a timer of the system clock not keep the process alive (housekeeping); a fake clock's handle is left as it is. */
export function unrefTimer(handle: unknown): void {
  if (typeof handle === "object" && handle !== null && "unref" in handle && typeof handle.unref === "function") handle.unref();
}
