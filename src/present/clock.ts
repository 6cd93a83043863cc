/** Time for the streaming engine, injected so tests drive it with a fake clock. */

/** The time source and timers the streaming engine uses. */
export interface Clock {
  /** Milliseconds since some fixed point. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
