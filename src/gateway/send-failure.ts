/**
 * What a failed send means for delivery: whether waiting can help, how long
 * to wait, and how to say it in a log line. Ports report platform refusals as
 * `SendFailed` (status first, then the platform's words); a network error that
 * escapes a client untyped (a refused or reset connection) may heal too.
 */

import { describeError } from "../kernel/errors.ts";
import { FormattingRejected, SendFailed } from "../message/index.ts";

export interface SendFailure {
  transient: boolean;
  status?: number;
  retryAfterMs?: number;
  /** For the log: never a credential (ports scrub theirs). */
  reason: string;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
]);

/** Classify an error thrown by a port's send. */
export function classifySendError(error: unknown): SendFailure {
  if (error instanceof SendFailed) {
    const out: SendFailure = { transient: error.transient, reason: error.message };
    if (error.status !== undefined) out.status = error.status;
    if (error.retryAfterMs !== undefined) out.retryAfterMs = error.retryAfterMs;
    return out;
  }
  // The plain-text resend after a formatting rejection failed too: trying the same again will not help.
  if (error instanceof FormattingRejected) return { transient: false, reason: `formatting rejected: ${error.message}` };
  const message = describeError(error);
  const code = (error as { code?: unknown } | null)?.code;
  const network =
    (typeof code === "string" && NETWORK_CODES.has(code)) ||
    (error instanceof Error &&
      (error.name === "TimeoutError" || /fetch failed|unable to connect|connection (refused|reset|closed)|socket|network/i.test(message)));
  return { transient: network, reason: network ? `network: ${message}` : message };
}

/** Exponential backoff with jitter for retry `attempt` (1-based): half fixed, half random, capped. */
export function retryDelay(attempt: number, random: () => number = Math.random, baseMs = 1000, maxMs = 60_000): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}
