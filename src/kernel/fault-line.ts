/**
 * What a page may say about a fault that came from outside: its class, its
 * HTTP status and who failed — never the outside's own words. A model
 * provider's error body, a platform's error description or a helper
 * process's stderr can echo what a user wrote (a phone number, a sentence),
 * so those words go to the log line (redacted by the logger) and pages get a
 * line built here from data alone. The health report, the dashboard, its
 * event stream and the activity log all take their fault lines from this
 * module; `faultLine` takes no free text, so nothing upstream can pass
 * through it.
 */
import { describeError } from "./errors.ts";

/**
 * What kind of fault a failed request was: the other side could not be
 * reached, refused our credentials, is out of quota, rate-limits us, failed
 * on its side, took too long to start answering, cut its answer off mid-way,
 * or refused the request itself.
 */
export type FaultClass = "unreachable" | "auth" | "quota" | "rate_limited" | "server" | "timeout" | "cut_off" | "rejected";

/** A fault as pages may know it: its class, and the HTTP status where there was one. */
export interface Fault {
  fault: FaultClass;
  status?: number;
}

/** The class an HTTP status means on its own; no status (a connection that failed) is "unreachable". */
export function statusFault(status: number | undefined): FaultClass {
  if (status === undefined) return "unreachable";
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server";
  return "rejected";
}

/** Each class in words; `who` is the party that refused ("the provider", "the platform"). */
const CLASS_WORDS: Readonly<Record<FaultClass, (who: string) => string>> = {
  unreachable: () => "could not be reached",
  auth: (who) => `${who} refused the key`,
  quota: () => "out of quota",
  rate_limited: () => "rate limited",
  server: () => "server error",
  timeout: () => "no answer in time",
  cut_off: () => "answer cut off",
  rejected: (who) => `${who} refused the request`,
};

/** A status worth showing: an HTTP status code, nothing else a caller might have put there. */
const httpStatus = (status: unknown): number | undefined =>
  typeof status === "number" && Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined;

/**
 * A fault in page-safe words: "server error (HTTP 500)", "rate limited (HTTP 429)",
 * "the provider refused the key (HTTP 401); run `fermix doctor`". An unknown
 * class (a value from an older build) is "failing".
 */
export function faultLine(fault: Fault, who = "the provider"): string {
  const words = CLASS_WORDS[fault.fault]?.(who) ?? "failing";
  const status = httpStatus(fault.status);
  const line = status === undefined ? words : `${words} (HTTP ${status})`;
  // A refused key is the one fault only the owner can fix, and doctor says how.
  return fault.fault === "auth" ? `${line}; run \`fermix doctor\`` : line;
}

/** A model provider's fault as the health report lists it: "provider openai: server error (HTTP 500)". */
export function providerFaultLine(name: string, fault: Fault | undefined): string {
  return `provider ${name}: ${fault ? faultLine(fault) : "failing"}`;
}

/**
 * An error whose message is page-safe: written by our code from our words
 * and numbers. The outside's words it was made from ride in `cause`, for the
 * log. Anything else thrown is shown on a page only as "see the log".
 */
export class PageSafeError extends Error {
  override name = "PageSafeError";
}

/** What a page may say of `error`: its message when it is a PageSafeError, else undefined (the log has it). */
export function pageSafeMessage(error: unknown): string | undefined {
  return error instanceof PageSafeError ? error.message : undefined;
}

/** An error with its causes, in one line for the log (the logger redacts known secrets). */
export function describeForLog(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 4; e = e instanceof Error ? e.cause : undefined, depth++) {
    parts.push(describeError(e));
  }
  return parts.join(": ");
}
