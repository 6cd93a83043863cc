/**
 * The Discord REST API as the Discord adapter uses it: plain fetch against
 * `api_base` with `Authorization: Bot <token>`, typed with discord-api-types,
 * the few routes a chat reply needs, per-route rate-limit buckets
 * (ratelimit.ts) and 429s waited out within a cap, and every failure turned
 * into one typed, token-free DiscordApiError. 401 and 403 are never retried:
 * Discord counts invalid requests and bans a client that keeps making them.
 * Attachment downloads go to Discord's CDN without the token (its URLs are
 * signed), refused past the inbound cap. Interaction callbacks are
 * authenticated by the interaction's own token in the path, not the bot's:
 * they go without the Authorization header, and that token never reaches an
 * error message or a log line.
 */
import type {
  APIInteractionResponse,
  APIMessage,
  RESTGetAPIGatewayBotResult,
  RESTPatchAPIChannelMessageJSONBody,
  RESTPostAPIChannelMessageJSONBody,
} from "discord-api-types/v10";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { type Sleep, sleep } from "../../kernel/wait.ts";
import { SendFailed } from "../../message/index.ts";
import { PROJECT_URL, VERSION } from "../../version.ts";
import { readCapped, scrub } from "../net.ts";
import { type RateLimitBody, RateLimits, routeKey } from "./ratelimit.ts";
import { RESTJSONErrorCodes, Routes } from "./wire.ts";

/** What a REST call failed with; decides whether anything retries it and what health says. */
export type DiscordFailure = "unauthorized" | "forbidden" | "not_found" | "formatting" | "rate_limited" | "rejected" | "server" | "network";

/** A REST call failed; the message names the route and Discord's reason, never the token. */
export class DiscordApiError extends SendFailed {
  override name = "DiscordApiError";
  constructor(
    message: string,
    readonly kind: DiscordFailure,
    status?: number,
    /** Discord's JSON error code (50013 Missing Permissions, 10008 Unknown Message, …). */
    readonly code?: number,
    retryAfterMs?: number,
  ) {
    super(message, kind === "server" || kind === "network" || kind === "rate_limited", status, retryAfterMs);
  }
}

export interface DiscordApiOptions {
  token: string;
  /** The API root including its version, e.g. https://discord.com/api/v10 (a trailing slash is dropped). */
  apiBase: string;
  fetch?: typeof fetch;
  sleep?: Sleep;
  now?: () => number;
  /** The longest rate-limit wait a call sits out; a longer one fails it at once (default 60 s). */
  maxRateLimitWaitMs?: number;
  /** How many 429s in a row one call sits out before giving up (default 3). */
  rateLimitRetries?: number;
  /** Per-request timeout (default 120 s: a 10 MB upload must fit). */
  timeoutMs?: number;
  /** Where rate-limit warnings go; read on every line, so the adapter can attach one at start. */
  log?: () => Logger | undefined;
}

/** One file of a multipart message. */
export interface UploadFile {
  filename: string;
  mime: string;
  bytes: Uint8Array;
}

/** Per-call knobs. */
interface CallOptions {
  json?: unknown;
  files?: UploadFile[];
  signal?: AbortSignal;
  /** Override the rate-limit wait cap for this call (typing: 0, a hint is worth nothing late). */
  maxWaitMs?: number;
  /** False: no `Authorization: Bot …` (interaction callbacks carry their own token in the path). */
  auth?: false;
  /** Credentials besides the bot token that must not appear in an error message. */
  secrets?: string[];
}

const USER_AGENT = `DiscordBot (${PROJECT_URL}, ${VERSION})`;

export class DiscordApi {
  private readonly base: string;
  private readonly limits: RateLimits;
  private readonly fetchFn: typeof fetch;
  private readonly sleepFn: Sleep;
  private readonly maxWait: number;
  private readonly retries: number;

  constructor(private readonly options: DiscordApiOptions) {
    this.base = options.apiBase.replace(/\/+$/, "");
    this.limits = new RateLimits(options.now ?? Date.now);
    this.fetchFn = options.fetch ?? fetch;
    this.sleepFn = options.sleep ?? sleep;
    // Short waits are sat out here; a longer one goes to the outbox, which waits it out durably.
    this.maxWait = options.maxRateLimitWaitMs ?? 5_000;
    this.retries = options.rateLimitRetries ?? 3;
  }

  /** GET /gateway/bot: the gateway URL and the session start limit. */
  async getGatewayBot(signal?: AbortSignal): Promise<RESTGetAPIGatewayBotResult> {
    return (await this.call("GET", Routes.gatewayBot(), signal ? { signal } : {})) as RESTGetAPIGatewayBotResult;
  }

  /** POST /channels/{c}/messages, as JSON, or multipart (`payload_json` + `files[n]`) when there are files. */
  async createMessage(channelId: string, body: RESTPostAPIChannelMessageJSONBody, files: UploadFile[] = []): Promise<APIMessage> {
    const options: CallOptions = files.length > 0 ? { json: body, files } : { json: body };
    return (await this.call("POST", Routes.channelMessages(channelId), options)) as APIMessage;
  }

  /** PATCH /channels/{c}/messages/{m}. */
  async editMessage(channelId: string, messageId: string, body: RESTPatchAPIChannelMessageJSONBody): Promise<APIMessage> {
    return (await this.call("PATCH", Routes.channelMessage(channelId, messageId), { json: body })) as APIMessage;
  }

  /** DELETE /channels/{c}/messages/{m}; a message already gone counts as deleted. */
  async deleteMessage(channelId: string, messageId: string): Promise<void> {
    try {
      await this.call("DELETE", Routes.channelMessage(channelId, messageId), {});
    } catch (error) {
      if (error instanceof DiscordApiError && error.code === RESTJSONErrorCodes.UnknownMessage) return;
      throw error;
    }
  }

  /** PUT /channels/{c}/messages/{m}/reactions/{emoji}/@me (the emoji URL-encoded here, as Routes leaves it to us). */
  async addReaction(channelId: string, messageId: string, emoji: string): Promise<void> {
    await this.call("PUT", Routes.channelMessageOwnReaction(channelId, messageId, encodeURIComponent(emoji)), {});
  }

  /** POST /channels/{c}/typing: "typing…" for about ten seconds. Never waits for a rate limit. */
  async triggerTyping(channelId: string): Promise<void> {
    await this.call("POST", Routes.channelTyping(channelId), { maxWaitMs: 0 });
  }

  /**
   * POST /interactions/{id}/{token}/callback: acknowledge a button press
   * (within three seconds of it, or Discord shows the presser a failure).
   */
  async interactionCallback(interaction: { id: string; token: string }, body: APIInteractionResponse): Promise<void> {
    await this.call("POST", Routes.interactionCallback(interaction.id, interaction.token), { json: body, auth: false, secrets: [interaction.token] });
  }

  /** Download an attachment from Discord's CDN (no token: the URL is signed), refusing more than `cap` bytes. */
  async download(url: string, cap: number, signal?: AbortSignal): Promise<{ bytes: Uint8Array; mime: string }> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new DiscordApiError("the Discord attachment reference is not a URL", "rejected");
    }
    if (target.protocol !== "https:" && target.protocol !== "http:") {
      throw new DiscordApiError(`refusing to download a Discord attachment over ${target.protocol}`, "rejected");
    }
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
    let response: Response;
    try {
      response = await this.fetchFn(target, { headers: { "user-agent": USER_AGENT }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new DiscordApiError(this.clean(`downloading a Discord attachment failed: ${timeout.aborted ? "timed out" : describeError(error)}`), "network");
    }
    if (!response.ok) {
      await response.body?.cancel();
      const kind = response.status >= 500 ? "server" : response.status === 404 ? "not_found" : "rejected";
      throw new DiscordApiError(`downloading a Discord attachment failed: HTTP ${response.status}`, kind, response.status);
    }
    const mime = (response.headers.get("content-type") ?? "application/octet-stream").split(";")[0]!.trim();
    return { bytes: await readCapped(response, cap), mime };
  }

  /**
   * One REST call: wait for the route's bucket (and any global pause), send,
   * learn the bucket from the headers; on a 429 sit out `retry_after` and
   * try again, up to the retry count and the wait cap; anything else that is
   * not 2xx becomes a DiscordApiError at once.
   */
  private async call(method: string, path: string, options: CallOptions): Promise<unknown> {
    const key = routeKey(method, path);
    const maxWait = options.maxWaitMs ?? this.maxWait;
    const label = `${method} ${key.route.slice(method.length + 1)}`;
    for (let attempt = 0; ; attempt++) {
      for (let wait = this.limits.take(key); wait > 0; wait = this.limits.take(key)) {
        if (wait > maxWait) throw this.rateLimited(label, wait);
        await this.sleepFn(wait, options.signal);
      }
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
      let response: Response;
      try {
        response = await this.fetchFn(`${this.base}${path}`, {
          method,
          headers: this.headers(options),
          ...(options.json !== undefined || options.files ? { body: this.body(options) } : {}),
          signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new DiscordApiError(this.clean(`Discord ${label} failed: ${timeout.aborted ? "timed out" : describeError(error)}`, options.secrets), "network");
      }
      if (response.status === 429) {
        const body = ((await response.json().catch(() => ({}))) ?? {}) as RateLimitBody;
        const { waitMs, global } = this.limits.limited(key, response.headers, body);
        if (attempt >= this.retries || waitMs > maxWait) throw this.rateLimited(label, waitMs);
        this.options.log?.()?.warn("discord rate limited; waiting as asked", { route: label, wait_ms: waitMs, global });
        continue;
      }
      this.limits.update(key, response.headers);
      if (!response.ok) throw await this.failure(label, response, options.secrets);
      const body = await response.text();
      if (body === "") return undefined;
      try {
        return JSON.parse(body);
      } catch {
        throw new DiscordApiError(`Discord ${label} answered ${response.status} with a body that is not JSON`, "server", response.status);
      }
    }
  }

  private headers(options: CallOptions): Record<string, string> {
    const headers: Record<string, string> = { "user-agent": USER_AGENT };
    if (options.auth !== false) headers.authorization = `Bot ${this.options.token}`;
    // Multipart sets its own content type (with the boundary) from the FormData.
    if (options.json !== undefined && !options.files) headers["content-type"] = "application/json";
    return headers;
  }

  private body(options: CallOptions): string | FormData {
    if (!options.files) return JSON.stringify(options.json);
    const form = new FormData();
    form.append("payload_json", JSON.stringify(options.json ?? {}));
    options.files.forEach((file, i) => {
      form.append(`files[${i}]`, new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mime }), file.filename);
    });
    return form;
  }

  /** A non-2xx answer as a typed error: Discord's `{message, code, errors}` when it sent one. */
  private async failure(label: string, response: Response, secrets: string[] = []): Promise<DiscordApiError> {
    const body = (await response.json().catch(() => undefined)) as { message?: unknown; code?: unknown; errors?: unknown } | undefined;
    const code = typeof body?.code === "number" ? body.code : undefined;
    const reason = typeof body?.message === "string" ? body.message : response.statusText || "error";
    const detail = fieldErrors(body?.errors);
    const message = this.clean(`Discord ${label} failed: ${response.status} ${reason}${code ? ` (${code})` : ""}${detail ? `: ${detail}` : ""}`, secrets);
    return new DiscordApiError(message, failureKind(response.status, code, body?.errors), response.status, code);
  }

  private rateLimited(label: string, waitMs: number): DiscordApiError {
    const seconds = Math.ceil(waitMs / 1000);
    return new DiscordApiError(`Discord rate limit on ${label}: retry after ${seconds} s, giving up`, "rate_limited", 429, undefined, waitMs);
  }

  private clean(text: string, secrets: string[] = []): string {
    return scrub(text, [this.options.token, ...secrets]);
  }
}

/** Which failure a status (and Discord's code) is. A 400 about the message text itself is "formatting": the sender resends it plain. */
function failureKind(status: number, code: number | undefined, errors: unknown): DiscordFailure {
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status >= 500) return "server";
  if (code === RESTJSONErrorCodes.CannotSendAnEmptyMessage) return "formatting";
  if (code === RESTJSONErrorCodes.InvalidFormBodyOrContentType && hasKey(errors, "content")) return "formatting";
  return "rejected";
}

/** The first field error of an Invalid Form Body answer, e.g. "content: Must be 2000 or fewer in length." */
function fieldErrors(errors: unknown): string {
  const found: string[] = [];
  const walk = (node: unknown, path: string[]) => {
    if (found.length > 0 || node === null || typeof node !== "object") return;
    const list = (node as { _errors?: unknown })._errors;
    if (Array.isArray(list)) {
      const first = list[0] as { message?: unknown } | undefined;
      if (typeof first?.message === "string") found.push(`${path.join(".")}: ${first.message}`);
      return;
    }
    for (const [key, value] of Object.entries(node)) walk(value, [...path, key]);
  };
  walk(errors, []);
  return found[0] ?? "";
}

function hasKey(value: unknown, key: string): boolean {
  return value !== null && typeof value === "object" && Object.hasOwn(value, key);
}
