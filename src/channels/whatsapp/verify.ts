/**
 * WhatsApp Cloud API webhook checks, pure: the POST signature
 * (`X-Hub-Signature-256`, HMAC-SHA256 of the raw bytes with the app secret)
 * and the GET subscription challenge. Both compare in constant time.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

export type WhatsAppSignatureFailure = "missing_signature" | "invalid_signature" | "not_configured";
export type WhatsAppSignatureResult = { ok: true } | { ok: false; reason: WhatsAppSignatureFailure };

export interface WhatsAppSignatureInput {
  rawBody: Uint8Array;
  /** `X-Hub-Signature-256` as received: `sha256=<64 hex>`. */
  signatureHeader: string | null | undefined;
  /** The Meta app secret; empty or absent means the channel is not configured. */
  appSecret: string | null | undefined;
}

export type WhatsAppChallengeFailure = "not_configured" | "missing_token" | "invalid_token" | "invalid_webhook_payload";
export type WhatsAppChallengeResult = { ok: true; challenge: string } | { ok: false; reason: WhatsAppChallengeFailure };

export interface WhatsAppChallengeInput {
  /** `hub.mode` query parameter. */
  mode: string | null | undefined;
  /** `hub.verify_token` query parameter. */
  token: string | null | undefined;
  /** `hub.challenge` query parameter, echoed back on success. */
  challenge: string | null | undefined;
  /** The configured verify token; empty or absent means the channel is not configured. */
  verifyToken: string | null | undefined;
}

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/** Verify `X-Hub-Signature-256` over the exact raw body bytes, in constant time. */
export function verifyWhatsAppSignature(input: WhatsAppSignatureInput): WhatsAppSignatureResult {
  const { rawBody, signatureHeader, appSecret } = input;
  if (!appSecret) return { ok: false, reason: "not_configured" };
  if (!signatureHeader) return { ok: false, reason: "missing_signature" };
  const match = SIGNATURE.exec(signatureHeader);
  if (!match) return { ok: false, reason: "invalid_signature" };
  const received = Buffer.from(match[1]!, "hex");
  const expected = whatsAppSignatureBytes(appSecret, rawBody);
  if (received.length !== expected.length) return { ok: false, reason: "invalid_signature" };
  return timingSafeEqual(received, expected) ? { ok: true } : { ok: false, reason: "invalid_signature" };
}

/** HMAC-SHA256 of the raw body with the app secret, the bytes behind `X-Hub-Signature-256`. */
export function whatsAppSignatureBytes(appSecret: string, rawBody: Uint8Array): Buffer {
  return createHmac("sha256", appSecret).update(rawBody).digest();
}

/**
 * Answer Meta's GET subscription check. The token is judged before the mode
 * and challenge, so an unauthenticated caller always gets a 401-class reason
 * and learns nothing about what a well-formed request looks like.
 */
export function verifyWhatsAppChallenge(input: WhatsAppChallengeInput): WhatsAppChallengeResult {
  const { mode, token, challenge, verifyToken } = input;
  if (!verifyToken) return { ok: false, reason: "not_configured" };
  if (!token) return { ok: false, reason: "missing_token" };
  if (!constantTimeEqual(token, verifyToken)) return { ok: false, reason: "invalid_token" };
  if (mode !== "subscribe" || !challenge) return { ok: false, reason: "invalid_webhook_payload" };
  return { ok: true, challenge };
}

/**
 * Compare two strings without leaking where they differ or how long the
 * secret is: both sides are hashed to 32 bytes first, so timingSafeEqual
 * always sees equal lengths.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash("sha256").update(a).digest();
  const right = createHash("sha256").update(b).digest();
  return timingSafeEqual(left, right);
}
