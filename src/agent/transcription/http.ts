/**
 * The HTTP half the three backends share: send one request with a deadline,
 * retry once on 429 or 5xx (after the server's Retry-After, when it gives
 * one), and turn every other outcome into a TranscriptionFailed whose reason
 * says what the server said — with the key scrubbed out of it.
 */

import { describeError } from "../../kernel/errors.ts";
import { sleep as abortableSleep, retryAfterMs } from "../../kernel/wait.ts";
import { TranscriptionFailed } from "./errors.ts";
import type { BackendOptions } from "./types.ts";

const DEFAULT_RETRY_DELAY_MS = 1000;
const DEFAULT_MAX_RETRY_WAIT_MS = 30_000;
/** How much of an error body goes into the reason. */
const REASON_CHARS = 300;

export interface BackendRequest {
  backend: string;
  url: string;
  /** Built afresh for each attempt: a multipart body cannot be sent twice. */
  init: () => RequestInit;
}

/** POST the request and return the successful response's JSON; one retry on 429/5xx. */
export async function requestJson(request: BackendRequest, options: BackendOptions, signal?: AbortSignal): Promise<unknown> {
  const wait = options.sleep ?? abortableSleep;
  const now = options.now ?? Date.now;
  for (let attempt = 1; ; attempt++) {
    const response = await attemptOnce(request, options, signal);
    if (response.ok) return readJson(request, response, options);
    const reason = await errorReason(response, options.apiKey);
    const retryable = response.status === 429 || response.status >= 500;
    if (!retryable || attempt >= 2) throw new TranscriptionFailed(request.backend, reason, response.status);
    const asked = retryAfterMs(response.headers.get("retry-after"), now());
    const delay = asked ?? options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    const limit = options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
    if (delay > limit) {
      throw new TranscriptionFailed(request.backend, `${reason} (asked to retry after ${Math.ceil(delay / 1000)} s; not waiting that long)`, response.status);
    }
    await wait(delay, signal);
  }
}

/** One attempt under its own deadline; the caller's abort passes through as it is. */
async function attemptOnce(request: BackendRequest, options: BackendOptions, signal?: AbortSignal): Promise<Response> {
  const fetchFn = options.fetch ?? fetch;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DOMException("transcription timed out", "TimeoutError")), options.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
  try {
    const response = await fetchFn(request.url, { ...request.init(), signal: combined });
    // The body is read under the same deadline: keep the timer until it is.
    const body = await response.arrayBuffer();
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (deadline.signal.aborted) throw new TranscriptionFailed(request.backend, `no answer within ${options.timeoutMs} ms`);
    throw new TranscriptionFailed(request.backend, scrub(`could not reach ${request.url}: ${describeError(error)}`, options.apiKey));
  } finally {
    clearTimeout(timer);
  }
}

async function readJson(request: BackendRequest, response: Response, options: BackendOptions): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new TranscriptionFailed(
      request.backend,
      scrub(`HTTP ${response.status} but the body is not JSON: ${text.slice(0, REASON_CHARS)}`, options.apiKey),
      response.status,
    );
  }
}

/** "HTTP 401: <the server's message>", from whichever error shape the backend uses. */
async function errorReason(response: Response, apiKey: string | undefined): Promise<string> {
  const text = await response.text().catch(() => "");
  let detail = text.trim();
  try {
    detail = errorMessage(JSON.parse(text)) ?? detail;
  } catch {
    // Not JSON: the text itself (a proxy's HTML page, a plain message).
  }
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  return scrub(detail ? `${status}: ${detail.slice(0, REASON_CHARS)}` : status, apiKey);
}

/** OpenAI `{error:{message}}`, xAI `{error:"…"}`, Deepgram `{err_msg}` or `{message}`. */
function errorMessage(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.error === "string") return b.error;
  if (typeof b.error === "object" && b.error !== null && typeof (b.error as { message?: unknown }).message === "string") {
    return (b.error as { message: string }).message;
  }
  if (typeof b.err_msg === "string") return b.err_msg;
  if (typeof b.message === "string") return b.message;
  return undefined;
}

/** The key out of any text that may reach a log: the value itself, and any bearer credential a proxy echoes back. */
export function scrub(text: string, apiKey: string | undefined): string {
  const out = apiKey && apiKey.length >= 4 ? text.split(apiKey).join("[redacted]") : text;
  return out.replace(/\b(Bearer)\s+[^\s"',]+/gi, "$1 [redacted]");
}
