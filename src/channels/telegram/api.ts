/**
 * The Telegram Bot API client: grammY's `Api`, pointed at `api_root`, plus
 * the two things grammY leaves to us — downloading a file by its path, and
 * turning its errors into messages that never carry the bot token (grammY's
 * request URLs embed it: `${apiRoot}/bot<token>/<method>`).
 *
 * grammY's web build (`grammy/web`): the same Api on the runtime's fetch. Its
 * Node build also loads node:http, node:https, node:stream and the `debug`
 * package (node:tty, node:util) for an agent Bun's fetch does not use —
 * about 3 MB of resident memory for nothing.
 */
import { Api, GrammyError, HttpError } from "grammy/web";
import { retryAfterMs } from "../../kernel/wait.ts";
import { SendFailed } from "../../message/index.ts";
import { readCapped } from "../net.ts";

/** Long uploads (50 MB documents) need more than a minute; long polls pass their own shorter signal. */
const CLIENT_TIMEOUT_SECONDS = 300;
const REDACTED = "[redacted]";

/** Which bot, and where its Bot API lives. */
export interface TelegramClientOptions {
  token: string;
  /** `https://api.telegram.org`, a self-hosted Bot API server, or a test fake; no trailing slash. */
  apiRoot: string;
  fetch?: typeof fetch;
}

/** A grammY Api bound to one bot and one API root. */
export function createTelegramApi(options: TelegramClientOptions): Api {
  return new Api(options.token, {
    apiRoot: options.apiRoot,
    timeoutSeconds: CLIENT_TIMEOUT_SECONDS,
    // Never let grammY append the underlying fetch error (it may name the URL) to its messages.
    sensitiveLogs: false,
    fetch: statusAwareFetch(options.fetch ?? fetch) as never,
  });
}

/** grammY's Node typings name the abort-controller polyfill's AbortSignal; at run time it takes the standard one. */
export type GrammySignal = NonNullable<Parameters<Api["getFile"]>[1]>;

/** A standard AbortSignal, typed the way grammY's declarations want it. */
export function grammySignal(signal: AbortSignal): GrammySignal;
export function grammySignal(signal: AbortSignal | undefined): GrammySignal | undefined;
export function grammySignal(signal: AbortSignal | undefined): GrammySignal | undefined {
  return signal as unknown as GrammySignal | undefined;
}

/** The bot's numeric id: the token's public prefix, safe to log and to key state by. */
export function botIdOf(token: string): string {
  const prefix = token.split(":")[0] ?? "";
  return /^\d+$/.test(prefix) ? prefix : "unknown";
}

/** `text` with every occurrence of the token (and of `bot<token>`) replaced. */
export function scrubToken(text: string, token: string): string {
  if (!token) return text;
  return text.split(token).join(REDACTED);
}

/** What kind of failure an API call ended in; decides retry and health. */
export type FailureKind = "unauthorized" | "conflict" | "rate_limited" | "formatting" | "server" | "network" | "rejected";

/** Classify a thrown grammY (or fetch) error. */
export function classify(error: unknown): FailureKind {
  if (error instanceof GrammyError) {
    if (error.error_code === 401) return "unauthorized";
    if (error.error_code === 409) return "conflict";
    if (error.error_code === 429) return "rate_limited";
    if (error.error_code >= 500) return "server";
    if (error.error_code === 400 && /can't parse entities|can't find end of|unsupported start tag|expected end tag/i.test(error.description)) {
      return "formatting";
    }
    return "rejected";
  }
  // HttpError: the request failed (refused, reset, timed out), or the server answered a bare HTTP error.
  const status = statusOf(error);
  if (status !== undefined) {
    if (status === 401) return "unauthorized";
    if (status === 429) return "rate_limited";
    if (status >= 500 || status === 408) return "server";
    return "rejected";
  }
  return "network";
}

/** Seconds Telegram asked us to wait, from a 429. */
export function retryAfterSeconds(error: unknown): number | undefined {
  if (!(error instanceof GrammyError)) return undefined;
  const seconds = error.parameters.retry_after;
  return typeof seconds === "number" && seconds >= 0 ? seconds : undefined;
}

/**
 * A one-line description of a failure, token-free: the API's code and
 * description, or the network error's name and message (which for Bun's
 * fetch can include the request URL — hence the scrub).
 */
export function describeError(error: unknown, token: string): string {
  let text: string;
  const status = statusOf(error);
  if (error instanceof GrammyError) text = `${error.method}: ${error.error_code} ${error.description}`;
  else if (status !== undefined && error instanceof HttpError) text = `${error.message.match(/'(\w+)'/)?.[1] ?? "call"}: HTTP ${status}`;
  else if (error instanceof HttpError) {
    const cause = error.error instanceof Error ? `${error.error.name}: ${error.error.message}` : String(error.error);
    text = `${error.message} (${cause})`;
  } else if (error instanceof Error) text = `${error.name}: ${error.message}`;
  else text = String(error);
  return scrubToken(text, token);
}

/** A Bot API call failed; the message names the method and Telegram's reason, never the token. */
export class TelegramApiError extends SendFailed {
  override name = "TelegramApiError";
  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly code?: number,
    retryAfterMs?: number,
  ) {
    super(message, kind === "server" || kind === "network" || kind === "rate_limited", code, retryAfterMs);
  }
}

/**
 * A Bot API server answered with an error that is not a Bot API error body
 * (an HTML 502 from a proxy, an emulator's bare 500): grammY would describe
 * it from fields the body lacks, so the status travels in this instead.
 */
export class TelegramHttpStatus extends Error {
  override name = "TelegramHttpStatus";
  constructor(
    readonly status: number,
    readonly retryAfterMs?: number,
  ) {
    super(`HTTP ${status}`);
  }
}

/** fetch for grammY: a non-2xx answer without a Bot API error body becomes a TelegramHttpStatus. */
export function statusAwareFetch(base: typeof fetch = fetch): typeof fetch {
  const wrapped = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const response = await base(input, init);
    if (response.ok) return response;
    const body = await response.text();
    let apiError = false;
    try {
      const json = JSON.parse(body) as { ok?: unknown; error_code?: unknown };
      apiError = json.ok === false && typeof json.error_code === "number";
    } catch {
      // not JSON: told by its status below
    }
    if (!apiError) throw new TelegramHttpStatus(response.status, retryAfterMs(response.headers.get("retry-after")));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return wrapped as typeof fetch;
}

/** The HTTP status of a failure, when the server answered: Bot API errors and bare HTTP errors alike. */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof GrammyError) return typeof error.error_code === "number" ? error.error_code : undefined;
  if (error instanceof HttpError && error.error instanceof TelegramHttpStatus) return error.error.status;
  if (error instanceof TelegramHttpStatus) return error.status;
  return undefined;
}

/** Wrap any failure as a token-free TelegramApiError. */
export function toApiError(error: unknown, token: string): TelegramApiError {
  if (error instanceof TelegramApiError) return error;
  const wait = retryAfterSeconds(error);
  const bare = error instanceof HttpError && error.error instanceof TelegramHttpStatus ? error.error.retryAfterMs : undefined;
  return new TelegramApiError(`telegram ${describeError(error, token)}`, classify(error), statusOf(error), wait !== undefined ? wait * 1000 : bare);
}

/** Download a file `getFile` described: `${apiRoot}/file/bot<token>/<file_path>`. */
export async function downloadFile(
  options: TelegramClientOptions & { filePath: string; maxBytes: number; signal?: AbortSignal },
): Promise<{ bytes: Uint8Array; contentType?: string }> {
  const path = options.filePath.split("/").map(encodeURIComponent).join("/");
  const url = `${options.apiRoot}/file/bot${options.token}/${path}`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, options.signal ? { signal: options.signal } : {});
  } catch (error) {
    throw new TelegramApiError(`telegram file download failed: ${describeError(error, options.token)}`, "network");
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new TelegramApiError(`telegram file download failed: HTTP ${response.status}`, response.status >= 500 ? "server" : "rejected", response.status);
  }
  // Over the cap (declared length first, then as it streams): MediaTooLarge, never read past it.
  const bytes = await readCapped(response, options.maxBytes);
  const contentType = response.headers.get("content-type")?.split(";")[0]?.trim();
  return contentType ? { bytes, contentType } : { bytes };
}
