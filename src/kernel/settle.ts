/**
 * Memory hygiene for a long-lived daemon: after a burst of work, once things
 * have been quiet for a few seconds, run one full garbage collection so the
 * heap a burst grew is returned instead of lingering. Idle costs nothing: no
 * timer runs unless there was work.
 */

export const SETTLE_AFTER_MS = 3000;

export interface SettlerClock {
  now(): number;
  /** Run `fire` after `ms`; the daemon's timers never keep the process alive. */
  later(fire: () => void, ms: number): void;
}

const systemClock: SettlerClock = {
  now: Date.now,
  later: (fire, ms) => void setTimeout(fire, ms).unref(),
};

/** Returns `touch`, to call on each unit of work; one collection follows the last touch of a burst. */
export function createSettler(
  delayMs = SETTLE_AFTER_MS,
  collect: () => void = () => Bun.gc(true),
  clock: SettlerClock = systemClock,
): () => void {
  let pending = false;
  let last = 0;
  const fire = () => {
    const quietFor = clock.now() - last;
    if (quietFor < delayMs) return clock.later(fire, delayMs - quietFor);
    pending = false;
    collect();
  };
  return () => {
    last = clock.now();
    if (pending) return;
    pending = true;
    clock.later(fire, delayMs);
  };
}
