/** The log of dropped strangers (src/gateway/strangers.ts): the first at once, then a line a minute with the counts. */
import { expect, test } from "bun:test";
import { STRANGER_SENDERS_COUNTED, StrangerTally } from "../../src/gateway/strangers.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { FakeClock } from "../helpers/clock.ts";

test("a flood is one line at once and one a minute, not a line per message; a quiet minute ends the spell", async () => {
  const lines: string[] = [];
  const clock = new FakeClock();
  const tally = new StrangerTally(createLogger({ FERMIX_LOG_LEVEL: "info" }, { write: (line) => void lines.push(line) }), clock, 60_000);
  for (let i = 0; i < 1000; i++) tally.drop("slack", `U${i % 7}`);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('msg="message from an unauthorized sender dropped" channel=slack sender=U0');
  await clock.advance(60_000);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain('msg="999 more messages from 7 unauthorized senders dropped"');
  // Another minute of flood: one more line; then a quiet minute ends the spell, and the next drop is said at once.
  for (let i = 0; i < 10; i++) tally.drop("telegram", "42");
  await clock.advance(60_000);
  expect(lines.at(-1)).toContain('msg="10 more messages from 1 unauthorized sender dropped"');
  await clock.advance(60_000);
  tally.drop("telegram", "43");
  expect(lines.at(-1)).toContain('msg="message from an unauthorized sender dropped" channel=telegram sender=43');
  expect(lines).toHaveLength(4);
  tally.close();
});

test("a flood from more senders than are told apart keeps that many names, and says at least", async () => {
  const lines: string[] = [];
  const clock = new FakeClock();
  const tally = new StrangerTally(createLogger({ FERMIX_LOG_LEVEL: "info" }, { write: (line) => void lines.push(line) }), clock, 60_000);
  const drops = STRANGER_SENDERS_COUNTED * 3;
  for (let i = 0; i <= drops; i++) tally.drop("slack", `U${i}`);
  await clock.advance(60_000);
  expect(lines.at(-1)).toContain(`msg="${drops} more messages from at least ${STRANGER_SENDERS_COUNTED} unauthorized senders dropped"`);
  tally.close();
});
