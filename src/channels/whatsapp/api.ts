/**
 * The WhatsApp Cloud API (Graph API) as the WhatsApp adapter uses it, over
 * fetch: send a message, upload media, look up and download inbound media.
 * Every call carries the access token as a Bearer header (never in a URL),
 * Graph error objects become one typed error with the token scrubbed out, and
 * rate limits are waited out with a capped wait.
 */

import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { retryAfterMs, type Sleep, sleep } from "../../kernel/wait.ts";
import { SendFailed, transientStatus } from "../../message/index.ts";
import { RateGate, readCapped, scrub } from "../net.ts";

/** A Graph API failure: the HTTP status and, when Graph sent one, its error code and details. */
export class WhatsAppApiError extends SendFailed {
  override name = "WhatsAppApiError";
  constructor(
    readonly operation: string,
    override readonly status: number,
    readonly code: number | undefined,
    message: string,
    readonly details?: string,
    retryAfterMs?: number,
  ) {
    // Status 0: the request never got an answer (refused, reset, timed out): that heals too.
    super(message, status === 0 || transientStatus(status), status === 0 ? undefined : status, retryAfterMs);
  }
}

export interface WhatsAppApiOptions {
  accessToken: string;
  phoneNumberId: string;
  /** e.g. https://graph.facebook.com/v21.0 */
  graphApiBase: string;
  fetch?: typeof fetch;
  sleep?: Sleep;
  /** The longest wait for one rate-limit pause; a longer Retry-After fails the call at once (default 30 s). */
  maxRateLimitWaitMs?: number;
  /** How many rate-limit refusals in a row one call sits out (default 3). */
  rateLimitRetries?: number;
  /** Per-request timeout (default 120 s, enough for a 100 MB upload). */
  timeoutMs?: number;
  log?: () => Logger | undefined;
}

/**
 * Graph codes that mean "slow down" (error-codes page): 4 app call limit,
 * 80007 account rate limit, 130429 throughput, 131056 pair rate limit.
 * Meta sends them with 400 as well as 429, and usually without Retry-After.
 */
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131056]);

interface GraphErrorBody {
  error?: { message?: string; code?: number; error_data?: { details?: string } };
}

interface RequestOptions {
  method: "GET" | "POST";
  body?: string | FormData;
  json?: boolean;
  /** Safe to repeat after a network error or a 5xx: nothing is sent to a user twice. */
  idempotent: boolean;
  signal?: AbortSignal;
}

export class WhatsAppApi {
  private readonly gate: RateGate;
  private readonly fetchFn: typeof fetch;
  private readonly base: string;

  constructor(private readonly options: WhatsAppApiOptions) {
    this.gate = new RateGate(options.sleep ?? sleep);
    this.fetchFn = options.fetch ?? fetch;
    this.base = options.graphApiBase.replace(/\/+$/, "");
  }

  /** GET /{phone_number_id}: whether Graph accepts the token for this number; returns its display number. */
  async phoneNumber(signal?: AbortSignal): Promise<string> {
    const url = new URL(`${this.base}/${encodeURIComponent(this.options.phoneNumberId)}`);
    url.searchParams.set("fields", "display_phone_number,verified_name");
    const info = await this.json<{ display_phone_number?: string }>("phone_number.get", url, {
      method: "GET",
      idempotent: true,
      ...(signal ? { signal } : {}),
    });
    return info.display_phone_number ?? "";
  }

  /** POST /{phone_number_id}/messages; returns the new message's wamid. */
  async sendMessage(to: string, type: string, payload: Record<string, unknown>): Promise<string> {
    const body = { messaging_product: "whatsapp", recipient_type: "individual", to, type, [type]: payload };
    // Not idempotent: a send that timed out may have been delivered, and the outbox promises at most once.
    const result = await this.json<{ messages?: Array<{ id?: string }> }>("messages", this.url(`${this.options.phoneNumberId}/messages`), {
      method: "POST",
      body: JSON.stringify(body),
      json: true,
      idempotent: false,
    });
    const id = result.messages?.[0]?.id;
    if (!id) throw new WhatsAppApiError("messages", 200, undefined, "WhatsApp accepted the message but returned no message id");
    return id;
  }

  /** POST /{phone_number_id}/media (multipart file, type, messaging_product); returns the media id. */
  async uploadMedia(bytes: Uint8Array, mime: string, filename: string): Promise<string> {
    const form = new FormData();
    form.append("messaging_product", "whatsapp");
    form.append("type", mime);
    form.append("file", new Blob([bytes], { type: mime }), filename);
    // An upload repeated after a lost answer only leaves an unused media id behind.
    const result = await this.json<{ id?: string }>("media", this.url(`${this.options.phoneNumberId}/media`), {
      method: "POST",
      body: form,
      idempotent: true,
    });
    if (!result.id) throw new WhatsAppApiError("media", 200, undefined, "WhatsApp accepted the upload but returned no media id");
    return result.id;
  }

  /** GET /{media-id}: where inbound media can be downloaded, its type and declared size. */
  async mediaInfo(mediaId: string, signal?: AbortSignal): Promise<{ url: string; mime?: string; size?: number }> {
    if (!/^[A-Za-z0-9_.-]+$/.test(mediaId)) throw new WhatsAppApiError("media.get", 0, undefined, "not a WhatsApp media id");
    const info = await this.json<{ url?: string; mime_type?: string; file_size?: string | number }>("media.get", this.url(mediaId), {
      method: "GET",
      idempotent: true,
      ...(signal ? { signal } : {}),
    });
    if (!info.url) throw new WhatsAppApiError("media.get", 200, undefined, "WhatsApp returned no download URL for the media");
    // The Cloud API sends file_size as a string; some SDKs type it a number. Both are read.
    const size = Number(info.file_size);
    const result: { url: string; mime?: string; size?: number } = { url: info.url };
    if (info.mime_type) result.mime = info.mime_type;
    if (info.file_size !== undefined && info.file_size !== "" && Number.isFinite(size) && size >= 0) result.size = size;
    return result;
  }

  /** GET the media URL with the bearer token, refusing more than `cap` bytes. */
  async download(url: string, cap: number, signal?: AbortSignal): Promise<{ bytes: Uint8Array; mime: string }> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new WhatsAppApiError("media.download", 0, undefined, "WhatsApp returned a media URL that is not a URL");
    }
    const response = await this.request("media.download", target, { method: "GET", idempotent: true, ...(signal ? { signal } : {}) });
    const mime = (response.headers.get("content-type") ?? "application/octet-stream").split(";")[0]!.trim();
    return { bytes: await readCapped(response, cap), mime };
  }

  private url(path: string): URL {
    return new URL(`${this.base}/${path}`);
  }

  private async json<T>(operation: string, url: URL, options: RequestOptions): Promise<T> {
    const response = await this.request(operation, url, options);
    try {
      return (await response.json()) as T;
    } catch {
      throw new WhatsAppApiError(operation, response.status, undefined, `WhatsApp ${operation}: the answer was not JSON`);
    }
  }

  /** One call with the bearer token: rate limits waited out (capped), transient failures of idempotent calls retried. */
  private async request(operation: string, url: URL, options: RequestOptions): Promise<Response> {
    // Short waits are sat out here; a longer one goes to the outbox, which waits it out durably.
    const maxWait = this.options.maxRateLimitWaitMs ?? 5_000;
    const retries = this.options.rateLimitRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      await this.gate.wait(options.signal);
      const headers: Record<string, string> = { authorization: `Bearer ${this.options.accessToken}` };
      if (options.json) headers["content-type"] = "application/json";
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
      let response: Response;
      try {
        response = await this.fetchFn(url, {
          method: options.method,
          headers,
          ...(options.body !== undefined ? { body: options.body } : {}),
          signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (options.idempotent && attempt < 2) {
          await (this.options.sleep ?? sleep)(500 * 2 ** attempt);
          continue;
        }
        const why = timeout.aborted ? "timed out" : describeError(error);
        throw new WhatsAppApiError(operation, 0, undefined, this.clean(`WhatsApp ${operation} failed: ${why}`));
      }
      if (response.ok) return response;

      const body = (await response.json().catch(() => ({}))) as GraphErrorBody;
      const code = body.error?.code;
      const details = body.error?.error_data?.details;
      if (response.status === 429 || (code !== undefined && RATE_LIMIT_CODES.has(code))) {
        // Graph rarely says how long; without a Retry-After, back off 1 s, 2 s, 4 s.
        const wait = retryAfterMs(response.headers.get("retry-after")) ?? 1000 * 2 ** attempt;
        if (wait > maxWait || attempt >= retries) {
          throw new WhatsAppApiError(
            operation,
            response.status,
            code,
            this.clean(`WhatsApp rate limit on ${operation}: ${describe(body, response.status)}; giving up`),
            details,
            wait,
          );
        }
        this.options.log?.()?.warn("whatsapp rate limited; waiting", { operation, wait_ms: wait, code });
        this.gate.pause(wait);
        continue;
      }
      if (response.status >= 500 && options.idempotent && attempt < 2) {
        await (this.options.sleep ?? sleep)(500 * 2 ** attempt);
        continue;
      }
      throw new WhatsAppApiError(operation, response.status, code, this.clean(`WhatsApp ${operation} refused: ${describe(body, response.status)}`), details);
    }
  }

  private clean(text: string): string {
    return scrub(text, [this.options.accessToken]);
  }
}

/** "(#100) Invalid parameter — Param text['body'] … (HTTP 400)" from a Graph error body. */
function describe(body: GraphErrorBody, status: number): string {
  const message = body.error?.message ?? "no error message";
  const details = body.error?.error_data?.details;
  return `${message}${details ? ` — ${details}` : ""} (HTTP ${status})`;
}
