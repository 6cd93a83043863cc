import { expect, test } from "bun:test";
import { createSettler } from "../../src/kernel/settle.ts";
import { FakeClock } from "../helpers/clock.ts";

test("one collection follows the last touch of a burst, and none while idle", async () => {
  const clock = new FakeClock();
  let collections = 0;
  const touch = createSettler(3000, () => collections++, clock);
  await clock.advance(10_000);
  expect(clock.pending()).toBe(0);
  for (let i = 0; i < 5; i++) {
    touch();
    await clock.advance(1000);
  }
  // Busy until 1 s ago: not yet.
  expect(collections).toBe(0);
  await clock.advance(2000);
  expect(collections).toBe(1);
  await clock.advance(60_000);
  expect(collections).toBe(1);
  expect(clock.pending()).toBe(0);
  touch();
  await clock.advance(3000);
  expect(collections).toBe(2);
});
