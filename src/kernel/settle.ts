/**
 * Memory hygiene for a long-lived daemon: after a burst of work, once things
 * have been quiet for a few seconds, run one full garbage collection so the
 * heap a burst grew is returned instead of lingering. Idle costs nothing: no
 * timer runs unless there was work.
 */

import { type Clock, systemClock, unrefTimer } from "./clock.ts";

export const SETTLE_AFTER_MS = 3000;

/** Returns `touch`, to call on each unit of work; one collection follows the last touch of a burst. */
export function createSettler(delayMs = SETTLE_AFTER_MS, collect: () => void = () => Bun.gc(true), clock: Clock = systemClock): () => void {
  let pending = false;
  let last = 0;
  // The daemon's housekeeping never keeps the process alive.
  const later = (ms: number) => unrefTimer(clock.setTimeout(fire, ms));
  const fire = () => {
    const quietFor = clock.now() - last;
    if (quietFor < delayMs) return later(delayMs - quietFor);
    pending = false;
    collect();
  };
  return () => {
    last = clock.now();
    if (pending) return;
    pending = true;
    later(delayMs);
  };
}
