import { expect, test } from "bun:test";
import { createSettler } from "../../src/kernel/settle.ts";

/** A manual clock: time moves only when the test says. */
function manualClock() {
  let now = 0;
  let timers: Array<{ at: number; fire: () => void }> = [];
  return {
    now: () => now,
    later: (fire: () => void, ms: number) => void timers.push({ at: now + ms, fire }),
    advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fire();
    },
    pending: () => timers.length,
  };
}

test("one collection follows the last touch of a burst, and none while idle", () => {
  const clock = manualClock();
  let collections = 0;
  const touch = createSettler(3000, () => collections++, clock);
  clock.advance(10_000);
  expect(clock.pending()).toBe(0);
  for (let i = 0; i < 5; i++) {
    touch();
    clock.advance(1000);
  }
  // Busy until 1 s ago: not yet.
  expect(collections).toBe(0);
  clock.advance(2000);
  expect(collections).toBe(1);
  clock.advance(60_000);
  expect(collections).toBe(1);
  expect(clock.pending()).toBe(0);
  touch();
  clock.advance(3000);
  expect(collections).toBe(2);
});
