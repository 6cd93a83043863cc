/**
 * The HTTP half every provider shares: POST a JSON body, read the SSE reply,
 * with timeouts (until the response headers, and between body chunks),
 * cancellation through the caller's AbortSignal, and retries with exponential
 * backoff and jitter on 408/429/5xx and network errors — but only before the
 * first event arrived, because a half-streamed answer cannot be taken back.
 * Errors name the provider and say why; the API key is scrubbed from them.
 */

import { describeError } from "../../kernel/errors.ts";
import { retryAfterMs, sleep as wait } from "../../kernel/wait.ts";
import { VERSION } from "../../version.ts";
import { readSse, type SseEvent } from "./sse.ts";
import { ProviderError } from "./types.ts";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface HttpLimits {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Backoff before retry n is about baseDelayMs × 2^(n-1), jittered, at most maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server's Retry-After is honoured up to this long. */
  retryAfterCapMs: number;
  /** From sending the request until the server answers at all (its response headers): retried when it passes. */
  connectTimeoutMs: number;
  /** From sending the request until the first event of the answer: a model that never starts is not retried. */
  firstByteTimeoutMs: number;
  /** The longest silence allowed between two chunks of the body once the answer has started. */
  idleTimeoutMs: number;
}

export const DEFAULT_LIMITS: HttpLimits = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  retryAfterCapMs: 60_000,
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 90_000,
};

/** What talks to the world, injectable so tests run on a fake clock. */
export interface HttpDeps {
  fetch?: FetchLike;
  /** Wait before a retry; must reject when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Wall clock in ms, for Retry-After given as an HTTP date. */
  now?: () => number;
  /** In [0, 1): the backoff jitter. */
  random?: () => number;
  limits?: Partial<HttpLimits>;
  /**
   * Another provider stands ready behind this one (failover, src/agent/providers/chain.ts):
   * an attempt that cannot connect is not retried here, and a Retry-After longer
   * than the cap is not waited for — the next provider answers sooner.
   */
  fallbackWaiting?: boolean;
  /** Told before each retry, e.g. to log it. */
  onRetry?: (retry: { provider: string; attempt: number; delayMs: number; reason: string; status?: number; retryAfterMs?: number }) => void;
}

/** One streaming call: who it is for (errors name it), where, and what to send. */
export interface SseCall {
  provider: string;
  url: string;
  apiKey?: string;
  /** Where the key goes: `Authorization: Bearer` (default), or a header of its own (Anthropic's `x-api-key`). */
  keyHeader?: "authorization" | "x-api-key";
  /** Headers the wire format adds (Anthropic's `anthropic-version`). */
  headers?: Readonly<Record<string, string>>;
  body: unknown;
  signal?: AbortSignal;
}

/** A failed attempt, before it is known whether it will be retried. */
class AttemptFailure extends Error {
  constructor(
    readonly why: string,
    readonly retryable: boolean,
    readonly status?: number,
    readonly code?: string,
    readonly retryAfterMs?: number,
    /** The server was never reached (refused, unresolvable, no response headers in time). */
    readonly connecting = false,
  ) {
    super(why);
  }
}

/** A ProviderError that names the provider, with the API key scrubbed out. */
export function providerError(call: Pick<SseCall, "provider" | "apiKey">, why: string, status?: number, code?: string, attempts = 1): ProviderError {
  let message = `provider "${call.provider}" failed: ${why}`;
  if (call.apiKey) message = message.split(call.apiKey).join("[redacted]");
  return new ProviderError(message, status, code, attempts);
}

/** The error a cancelled call rejects with: the signal's own AbortError, else a fresh one. */
export function abortError(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("The model request was aborted", "AbortError");
}

/** A sleep that rejects with an AbortError (what callers of a provider expect) as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return wait(ms, signal).catch(() => Promise.reject(abortError(signal)));
}

/** Retry-After (or OpenAI's retry-after-ms) in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(headers: Headers, now: number): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  return retryAfterMs(headers.get("retry-after"), now);
}

/** The limits, each missing (or undefined) one taken from DEFAULT_LIMITS. */
export function withDefaults(limits: Partial<HttpLimits> = {}): HttpLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(out) as Array<keyof HttpLimits>) {
    const value = limits[key];
    if (typeof value === "number" && value >= 0) out[key] = value;
  }
  return out;
}

/** Exponential backoff with jitter for retry number `attempt` (1-based): half fixed, half random. */
export function backoffDelay(attempt: number, limits: HttpLimits, random: () => number): number {
  const ceiling = Math.min(limits.maxDelayMs, limits.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}

/** POST `call.body` and yield the SSE events of the reply, retrying what may be retried. */
export async function* streamSse(call: SseCall, deps: HttpDeps = {}): AsyncGenerator<SseEvent> {
  const limits = withDefaults(deps.limits);
  const wait = deps.sleep ?? sleep;
  const now = deps.now ?? Date.now;
  const { signal } = call;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw abortError(signal);
    let received = false;
    try {
      for await (const event of attemptOnce(call, deps.fetch ?? fetch, limits, now)) {
        received = true;
        yield event;
      }
      return;
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      const failure = error instanceof AttemptFailure ? error : new AttemptFailure(describe(error), false);
      // With a fallback waiting, a server that cannot be reached or asks for a wait past the cap is left to it.
      const handOff = deps.fallbackWaiting === true && (failure.connecting || (failure.retryAfterMs ?? 0) > limits.retryAfterCapMs);
      const retry = failure.retryable && !received && !handOff && attempt <= limits.maxRetries;
      if (!retry) {
        const gaveUp = failure.retryable && !received && attempt > 1 ? ` (gave up after ${attempt} attempts)` : "";
        throw providerError(call, failure.why + gaveUp, failure.status, received && failure.code === undefined ? "dropped" : failure.code, attempt);
      }
      const delayMs =
        failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, limits.retryAfterCapMs) : backoffDelay(attempt, limits, deps.random ?? Math.random);
      deps.onRetry?.({
        provider: call.provider,
        attempt,
        delayMs,
        reason: providerError(call, failure.why).message,
        ...(failure.status !== undefined ? { status: failure.status } : {}),
        ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
      });
      await wait(delayMs, signal).catch((e: unknown) => {
        throw signal?.aborted ? abortError(signal) : e;
      });
    }
  }
}

/** One HTTP attempt; everything that goes wrong becomes an AttemptFailure, except the caller's abort. */
async function* attemptOnce(call: SseCall, fetchFn: FetchLike, limits: HttpLimits, now: () => number): AsyncGenerator<SseEvent> {
  const where = `POST ${safeUrl(call.url)}`;
  const started = Date.now();
  // Our own controller tears the connection down on a timeout, or when the consumer stops early.
  const local = new AbortController();
  const signal = call.signal ? AbortSignal.any([call.signal, local.signal]) : local.signal;
  try {
    const response = await withDeadline(
      fetchFn(call.url, { method: "POST", headers: requestHeaders(call), body: JSON.stringify(call.body), signal }),
      Math.min(limits.connectTimeoutMs, limits.firstByteTimeoutMs),
      call.signal,
      () =>
        limits.connectTimeoutMs <= limits.firstByteTimeoutMs
          ? new AttemptFailure(`no response from ${where} within ${seconds(limits.connectTimeoutMs)}`, true, undefined, "connect_timeout", undefined, true)
          : new AttemptFailure(`no answer from ${where} within ${seconds(limits.firstByteTimeoutMs)}`, false, undefined, "first_byte_timeout"),
    ).catch((error: unknown) => {
      if (error instanceof AttemptFailure || call.signal?.aborted) throw error;
      throw new AttemptFailure(`could not reach ${where}: ${describe(error)}`, true, undefined, errorCode(error), undefined, true);
    });
    if (!response.ok) throw await statusFailure(response, where, limits, call.signal, now());
    if (!response.body) throw new AttemptFailure(`${where} answered with an empty body`, false);
    // The first chunk has what is left of the first-byte deadline; every later one the idle deadline.
    const firstWithinMs = Math.max(1, limits.firstByteTimeoutMs - (Date.now() - started));
    try {
      yield* readSse(
        chunks(response.body, firstWithinMs, limits.idleTimeoutMs, call.signal, (first) =>
          first
            ? new AttemptFailure(`no answer from ${where} within ${seconds(limits.firstByteTimeoutMs)}`, false, undefined, "first_byte_timeout")
            : new AttemptFailure(`the stream from ${where} went silent for ${seconds(limits.idleTimeoutMs)}`, true, undefined, "idle_timeout"),
        ),
      );
    } catch (error) {
      if (error instanceof AttemptFailure || call.signal?.aborted) throw error;
      throw new AttemptFailure(`the connection to ${where} dropped mid-stream: ${describe(error)}`, true, undefined, "dropped");
    }
  } finally {
    local.abort();
  }
}

/** The body's chunks: the first awaited under the first-byte deadline, each later one under the idle deadline. */
async function* chunks(
  body: ReadableStream<Uint8Array>,
  firstMs: number,
  idleMs: number,
  signal: AbortSignal | undefined,
  onTimeout: (first: boolean) => Error,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let first = true;
  try {
    for (;;) {
      const waitingFirst = first;
      const { done, value } = await withDeadline(reader.read(), waitingFirst ? firstMs : idleMs, signal, () => onTimeout(waitingFirst));
      if (done) return;
      if (value && value.byteLength > 0) {
        first = false;
        yield value;
      }
    }
  } finally {
    // Stop the download, so the server sees the request closed even if the consumer stopped early.
    reader.cancel().catch(() => {});
  }
}

/** `promise`, unless the deadline passes (rejects with onTimeout()) or the signal aborts first. */
function withDeadline<T>(promise: Promise<T>, ms: number, signal: AbortSignal | undefined, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      settle();
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      settle();
      reject(onTimeout());
    }, ms);
    // Handlers first: a promise we stop waiting for must not become an unhandled rejection.
    promise.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Turn a non-2xx response into a failure carrying the API's own message and code. */
async function statusFailure(response: Response, where: string, limits: HttpLimits, signal: AbortSignal | undefined, now: number): Promise<AttemptFailure> {
  const text = await withDeadline(response.text(), limits.idleTimeoutMs, signal, () => new Error("timeout")).catch(() => "");
  const { message, code } = apiError(text);
  const status = response.status;
  const head = `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""} from ${where}`;
  // A spent quota answers 429 too, but waiting does not refill it.
  const retryable = (status === 408 || status === 429 || status >= 500) && code !== "insufficient_quota";
  const retryAfter = parseRetryAfter(response.headers, now);
  return new AttemptFailure(message ? `${head}: ${message}` : head, retryable, status, code, retryAfter);
}

/** The message and code of an error body: OpenAI's {error:{message,code,type}}, Ollama's {error:"…"}, or plain text. */
export function apiError(text: string): { message?: string; code?: string } {
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    const err = json.error ?? json;
    if (typeof err === "string") return { message: err };
    if (err && typeof err === "object") {
      const { message, code, type } = err as Record<string, unknown>;
      const detail = message ?? json.message ?? json.detail;
      return {
        message: typeof detail === "string" ? detail : undefined,
        code: typeof code === "string" ? code : typeof type === "string" ? type : undefined,
      };
    }
  } catch {
    // not JSON: fall through to the text itself
  }
  const plain = text.trim().slice(0, 300);
  return plain ? { message: plain } : {};
}

/** The JSON object in an event's data; a ProviderError when it is not one. */
/** A provider's JSON object, as its events and bodies are read. */
export type Json = Record<string, unknown>;

/** A field read as text: a string as it is, anything else (absent, null, a number) as "". */
export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function eventJson(data: string, call: Pick<SseCall, "provider" | "apiKey">): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw providerError(call, `the stream sent malformed data: ${data.slice(0, 120)}`, undefined, "bad_event");
}

function requestHeaders(call: SseCall): Record<string, string> {
  const out: Record<string, string> = {
    "content-type": "application/json",
    accept: "text/event-stream",
    "user-agent": `fermix/${VERSION}`,
    ...call.headers,
  };
  // Local servers (Ollama, llama.cpp) need no key, and some reject an empty Bearer.
  if (call.apiKey) {
    if (call.keyHeader === "x-api-key") out["x-api-key"] = call.apiKey;
    else out.authorization = `Bearer ${call.apiKey}`;
  }
  return out;
}

/** The URL without credentials or query, which may carry secrets. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

function describe(error: unknown): string {
  const message = describeError(error);
  // Bun appends advice meant for whoever debugs fetch itself, not for our users.
  return message.replace(/\s*For more information, pass `verbose: true`.*$/s, "");
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
