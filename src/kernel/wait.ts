/**
 * Waiting, the way every network client here waits: an abortable sleep, and
 * a platform's Retry-After header read into milliseconds.
 */

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Resolve after `ms`, or reject with the signal's reason as soon as it aborts. */
export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** A Retry-After header (delay seconds or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  // An HTTP date always names its month; without that check Date.parse takes "-3" for a year.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
