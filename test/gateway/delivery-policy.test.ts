/**
 * The rule for a part after a send that may heal failed, as data: a backoff
 * that never overshoots the hold, a Retry-After honoured whatever the hold,
 * "set it aside if the chat takes other calls" once the hold ran out, and
 * giving the reply up rather than retrying past the horizon.
 */
import { expect, test } from "bun:test";
import { type FailedSend, nextStep } from "../../src/gateway/delivery/policy.ts";

const MIN = 60_000;
const base: FailedSend = { now: 0, createdAt: 0, firstFailedAt: 0, attempt: 1, horizonMs: 15 * MIN, holdMs: 60_000, random: () => 0.5 };

test("a first failure is retried after a short backoff", () => {
  expect(nextStep(base)).toEqual({ kind: "retry", at: 750, delayMs: 750 });
});

test("a backoff that would end after the hold is cut to the hold's end, so the part is looked at again in time", () => {
  // Attempt 8: a 64 s ceiling, 48 s with this jitter, from 50 s after the first failure: past the hold at 60 s.
  expect(nextStep({ ...base, now: 50_000, attempt: 8 })).toEqual({ kind: "retry", at: 60_000, delayMs: 10_000 });
});

test("once the hold ran out, the part is to be set aside if the chat takes other calls, else retried", () => {
  expect(nextStep({ ...base, now: 60_000, attempt: 9 })).toEqual({ kind: "set_aside", otherwise: { kind: "retry", at: 105_000, delayMs: 45_000 } });
});

test("a Retry-After is waited out exactly, past the hold too, and never leads to setting the part aside", () => {
  expect(nextStep({ ...base, now: 59_000, retryAfterMs: 120_000 })).toEqual({ kind: "retry", at: 179_000, delayMs: 120_000 });
  expect(nextStep({ ...base, now: 5 * MIN, retryAfterMs: 1_000 })).toEqual({ kind: "retry", at: 5 * MIN + 1_000, delayMs: 1_000 });
});

test("a retry that would fall past the horizon gives the reply up; a held part still gets its chance to be set aside first", () => {
  expect(nextStep({ ...base, now: 14.9 * MIN, firstFailedAt: 14.8 * MIN, attempt: 9 })).toEqual({ kind: "expire" });
  expect(nextStep({ ...base, now: 14.9 * MIN, attempt: 9 })).toEqual({ kind: "set_aside", otherwise: { kind: "expire" } });
});
