/** The webhook failure table of docs/http.md "Webhooks", in one place: reason → status and body. */
import type { InvalidReason, UnauthorizedReason } from "../../channels/webhook.ts";
import { jsonResponse } from "../health.ts";

export type { InvalidReason, UnauthorizedReason } from "../../channels/webhook.ts";
export type WebhookFailure = UnauthorizedReason | InvalidReason | "handoff_unavailable" | "dispatch_failed";

const STATUS: Record<WebhookFailure, [number, string]> = {
  invalid_signature: [401, "Unauthorized"],
  invalid_token: [401, "Unauthorized"],
  missing_signature: [401, "Unauthorized"],
  missing_timestamp: [401, "Unauthorized"],
  missing_token: [401, "Unauthorized"],
  missing_raw_body: [401, "Unauthorized"],
  not_configured: [401, "Unauthorized"],
  stale_timestamp: [401, "Unauthorized"],
  unsupported_transport: [400, "Invalid webhook"],
  invalid_webhook_payload: [400, "Invalid webhook"],
  handoff_unavailable: [503, "Webhook handoff unavailable"],
  dispatch_failed: [500, "Webhook dispatch failed"],
};

export function failure(reason: WebhookFailure): Response {
  const [status, error] = STATUS[reason];
  return jsonResponse({ error }, status);
}

/** Built once: every accepted webhook gets a copy (cheaper than serialising and building headers per request). */
const ACCEPTED = jsonResponse({ ok: true }, 200);
export const accepted = (): Response => ACCEPTED.clone() as Response;

export const plainText = (text: string) =>
  new Response(text, { status: 200, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });

/** The exact bytes received; null when the request carried no body at all. */
export async function rawBody(request: Request): Promise<Uint8Array | null> {
  if (request.body === null) return null;
  return new Uint8Array(await request.arrayBuffer());
}

/** JSON is what the webhook platforms post; a signed form or other encoding is an unsupported transport. */
export function isJsonContent(request: Request): boolean {
  const type = request.headers.get("content-type");
  return type === null || /^application\/(?:[\w.+-]+\+)?json\b/i.test(type.trim());
}
