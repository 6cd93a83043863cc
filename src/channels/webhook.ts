/**
 * A channel's webhook, as its profile declares it: the path its platform
 * posts to, how a request is verified (over the raw bytes) and read into
 * submissions, and the subscription check some platforms make with a GET.
 * The HTTP server (src/http/webhooks/) mounts every declared route and keeps
 * what all of them share: the order of checks (body limit, signature,
 * content type, payload), the hand-off to the inbox and the response table
 * of docs/http.md. Verifying and parsing are pure: no I/O, no adapter.
 */
import type { Config } from "../config/schema.ts";
import type { Logger } from "../kernel/log.ts";
import type { Submission } from "../message/index.ts";

/** Why a request is not authentic (answered 401). */
export type UnauthorizedReason =
  | "invalid_signature"
  | "invalid_token"
  | "missing_signature"
  | "missing_timestamp"
  | "missing_token"
  | "missing_raw_body"
  | "not_configured"
  | "stale_timestamp";
/** Why an authentic request cannot be read (answered 400). */
export type InvalidReason = "unsupported_transport" | "invalid_webhook_payload";

export type WebhookVerdict = { ok: true } | { ok: false; reason: UnauthorizedReason };

/** What a verified body holds: nothing readable, a challenge to echo, or messages (none: acknowledged and dropped). */
export type WebhookBody = { kind: "invalid" } | { kind: "challenge"; text: string } | { kind: "messages"; items: Submission[] };

/** What a handler reads besides the request: the config in force, the time, a logger. */
export interface WebhookContext {
  config: Config;
  nowSeconds: number;
  log: Logger;
  /** Whether Fermix has replied in this thread of this chat (Slack: a reply in any other thread is not for the bot). */
  repliedInThread(chatId: string, threadId: string): boolean;
}

export interface WebhookHandler {
  /** The route, e.g. "/webhook/<channel>". */
  readonly path: string;
  /**
   * Whether the channel can verify anything now (enabled, its secret set): a
   * request without a body is then `missing_raw_body`, else `not_configured`.
   */
  configured(config: Config): boolean;
  /** Check the request's signature over its raw bytes. */
  verify(rawBody: Uint8Array, headers: Headers, context: WebhookContext): WebhookVerdict;
  /** Read a verified body. */
  parse(rawBody: Uint8Array, context: WebhookContext): WebhookBody;
  /** A GET's subscription check (WhatsApp's hub.challenge): the text to echo, or why not. Absent: no GET route. */
  challenge?(query: URLSearchParams, config: Config): { ok: true; text: string } | { ok: false; reason: UnauthorizedReason | InvalidReason };
}
