/**
 * Slack request signing (docs.slack.dev "Verifying requests from Slack"),
 * pure: the route passes the exact raw bytes and the two headers, and this
 * decides before anything is parsed. The clock is an argument so tests and
 * the route share one notion of "now".
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Slack's own tolerance: a request more than five minutes from now, either way, is a replay (the profile's acceptance window, which the idempotency keys outlive). */
export const SLACK_MAX_SKEW_SECONDS = 300;

export type SlackVerifyFailure = "missing_signature" | "missing_timestamp" | "stale_timestamp" | "invalid_signature" | "not_configured";

export type SlackVerifyResult = { ok: true } | { ok: false; reason: SlackVerifyFailure };

export interface SlackVerifyInput {
  rawBody: Uint8Array;
  /** `X-Slack-Request-Timestamp` as received (null when absent). */
  timestampHeader: string | null | undefined;
  /** `X-Slack-Signature` as received: `v0=<64 hex>`. */
  signatureHeader: string | null | undefined;
  /** The app's signing secret; empty or absent means the channel is not configured. */
  signingSecret: string | null | undefined;
  /** The current time in whole or fractional Unix seconds. */
  nowSeconds: number;
}

// Strict shape: a header that is not exactly one v0 signature is simply not valid.
const SIGNATURE = /^v0=([0-9a-fA-F]{64})$/;
// Digits only: Slack sends a plain integer, and the base string must use it verbatim.
const TIMESTAMP = /^\d{1,15}$/;

/** Verify a Slack request: secret configured, headers present, timestamp fresh, HMAC matches in constant time. */
export function verifySlackRequest(input: SlackVerifyInput): SlackVerifyResult {
  const { rawBody, timestampHeader, signatureHeader, signingSecret, nowSeconds } = input;
  if (!signingSecret) return fail("not_configured");
  if (!signatureHeader) return fail("missing_signature");
  if (!timestampHeader) return fail("missing_timestamp");
  if (!TIMESTAMP.test(timestampHeader)) return fail("stale_timestamp");
  // Written as "not within" so a NaN clock fails closed instead of passing.
  if (!(Math.abs(nowSeconds - Number(timestampHeader)) <= SLACK_MAX_SKEW_SECONDS)) return fail("stale_timestamp");

  const match = SIGNATURE.exec(signatureHeader);
  if (!match) return fail("invalid_signature");
  const received = Buffer.from(match[1]!, "hex");
  const expected = slackSignatureBytes(signingSecret, timestampHeader, rawBody);
  // The regex fixes the length at 32 bytes, so timingSafeEqual never throws here;
  // the guard stays so a future change to the pattern cannot turn into a 500.
  if (received.length !== expected.length) return fail("invalid_signature");
  return timingSafeEqual(received, expected) ? { ok: true } : fail("invalid_signature");
}

/** HMAC-SHA256 of `v0:<timestamp>:<raw body>`, the bytes behind `X-Slack-Signature`. */
export function slackSignatureBytes(signingSecret: string, timestamp: string, rawBody: Uint8Array): Buffer {
  return createHmac("sha256", signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest();
}

const fail = (reason: SlackVerifyFailure): SlackVerifyResult => ({ ok: false, reason });
