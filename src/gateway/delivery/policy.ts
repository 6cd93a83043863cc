/**
 * What happens to a part after a send that may heal failed (a 5xx, a 429, a
 * network error) — pure, so the rule is read and tested in one place:
 *
 * - the platform asked to wait (Retry-After): wait exactly that, whatever
 *   the hold;
 * - otherwise, until `hold` has passed since the part first failed: retry
 *   with a jittered backoff, never later than the moment the hold runs out;
 * - once the hold has run out: set the part aside if the platform takes
 *   other calls for the chat (the caller finds out), else go on retrying;
 * - a retry that would fall past the horizon (counted from when the part was
 *   recorded) is not made: the reply is given up and the user told.
 */
import { retryDelay } from "../send-failure.ts";

export interface FailedSend {
  now: number;
  /** When the part was recorded (epoch ms): the horizon counts from here. */
  createdAt: number;
  /** When the part first failed (epoch ms; `now` for a first failure): the hold counts from here. */
  firstFailedAt: number;
  /** This failure's number, 1-based. */
  attempt: number;
  /** What the platform asked to wait, when it did. */
  retryAfterMs?: number;
  horizonMs: number;
  holdMs: number;
  random: () => number;
}

/** Send again at `at`, or give the reply up. */
export type Retry = { kind: "retry"; at: number; delayMs: number } | { kind: "expire" };
/** The hold ran out: set the part aside if the chat takes other calls; `otherwise` if it turns out to be an outage. */
export type Step = Retry | { kind: "set_aside"; otherwise: Retry };

export function nextStep(failed: FailedSend): Step {
  const { now, retryAfterMs } = failed;
  const rateLimited = retryAfterMs !== undefined;
  const holdEnds = failed.firstFailedAt + failed.holdMs;
  let at = now + (retryAfterMs ?? retryDelay(failed.attempt, failed.random));
  // Not before the hold runs out, not after it either: the part is looked at again then.
  if (!rateLimited && now < holdEnds) at = Math.min(at, holdEnds);
  const retry: Retry = at > failed.createdAt + failed.horizonMs ? { kind: "expire" } : { kind: "retry", at, delayMs: at - now };
  if (!rateLimited && now >= holdEnds) return { kind: "set_aside", otherwise: retry };
  return retry;
}
