/**
 * The Slack Web API as the Slack adapter uses it: a @slack/web-api WebClient
 * pointed at `api_url`, with the few calls replies need, errors turned into
 * one typed error with the token scrubbed out, and 429s honoured with a
 * capped wait. Private-file downloads (url_private) are plain fetches with
 * the bot token, sent only to Slack's own hosts or the configured API host.
 */
import {
  LogLevel,
  type RetryOptions,
  type Logger as SlackLogger,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
} from "@slack/web-api";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { retryAfterMs, type Sleep, sleep } from "../../kernel/wait.ts";
import { SendFailed, transientStatus } from "../../message/index.ts";
import { RateGate, readCapped, scrub } from "../net.ts";

/**
 * Transient failures (network, 5xx) are retried by the client: a few quick
 * attempts suit a chat reply better than the library's default of ten over
 * half an hour. 429s are not its job here (see `SlackApi.call`).
 */
/**
 * The Web API client's own retries: one quick one for a blip. Anything longer is the outbox's to retry — durably, with
 * backoff up to the retry horizon — not a wait hidden inside one send, which a crash would turn into "maybe sent".
 */
export const SLACK_RETRY_POLICY: RetryOptions = { retries: 1, factor: 2, minTimeout: 500, maxTimeout: 1_000, randomize: true };

/** What a Slack call failed with: Slack's own error code (`msg_too_long`, `channel_not_found`…) or ours (`ratelimited`, `http_502`, `network`). */
export class SlackApiError extends SendFailed {
  override name = "SlackApiError";
  constructor(
    readonly method: string,
    readonly code: string,
    message: string,
    retryAfterMs?: number,
  ) {
    const status = /^http_(\d{3})$/.exec(code)?.[1];
    const transient = code === "ratelimited" || code === "network" || (status !== undefined && transientStatus(Number(status)));
    super(message, transient, status !== undefined ? Number(status) : code === "ratelimited" ? 429 : undefined, retryAfterMs);
  }
}

export interface SlackApiOptions {
  token: string;
  /** Base of the Web API, e.g. https://slack.com/api/ (a trailing slash is added when missing). */
  apiUrl: string;
  retryConfig?: RetryOptions;
  /** The longest Retry-After we wait out; a longer one fails the call at once (default 30 s). */
  maxRateLimitWaitMs?: number;
  /** How many 429s in a row one call sits out before giving up (default 3). */
  rateLimitRetries?: number;
  /** Per-request timeout (default 120 s: an upload of 100 MB must fit). */
  timeoutMs?: number;
  sleep?: Sleep;
  fetch?: typeof fetch;
  /** Where the client's own log lines go; read on every line, so the adapter can attach one at start. */
  log?: () => Logger | undefined;
}

/** Hosts Slack serves private files from; the token is never sent anywhere else (bar the configured API host). */
const SLACK_FILE_HOST = /(^|\.)slack(-edge)?\.com$/i;

export class SlackApi {
  readonly client: WebClient;
  private readonly gate: RateGate;
  private readonly maxWait: number;
  private readonly retries: number;
  private readonly fetchFn: typeof fetch;
  private readonly apiHost: string;

  constructor(private readonly options: SlackApiOptions) {
    const slackApiUrl = options.apiUrl.endsWith("/") ? options.apiUrl : `${options.apiUrl}/`;
    this.apiHost = new URL(slackApiUrl).host;
    this.gate = new RateGate(options.sleep ?? sleep);
    this.maxWait = options.maxRateLimitWaitMs ?? 5_000;
    this.retries = options.rateLimitRetries ?? 3;
    this.fetchFn = options.fetch ?? fetch;
    this.client = new WebClient(options.token, {
      slackApiUrl,
      retryConfig: options.retryConfig ?? SLACK_RETRY_POLICY,
      // The client's own 429 handling would sleep for whatever Retry-After
      // says, however long, with no cap: we take 429s and wait them out ourselves.
      rejectRateLimitedCalls: true,
      timeout: options.timeoutMs ?? 120_000,
      logger: bridgeLogger(() => options.log?.()),
      // A method name that is an absolute URL must not take the token elsewhere.
      allowAbsoluteUrls: false,
    });
  }

  /** auth.test: whether Slack accepts the bot token; returns the bot's user id. */
  async authTest(): Promise<string> {
    const result = await this.call("auth.test", () => this.client.auth.test());
    return result.user_id ?? "";
  }

  /** chat.postMessage; returns the message ts. */
  async postMessage(args: { channel: string; text: string; thread_ts?: string; mrkdwn: boolean }): Promise<string> {
    const result = await this.call("chat.postMessage", () => this.client.chat.postMessage({ ...args, unfurl_links: false, unfurl_media: false }));
    if (!result.ts) throw new SlackApiError("chat.postMessage", "no_ts", "Slack accepted the message but returned no ts");
    return result.ts;
  }

  /** chat.update: replace a message's text. */
  async update(channel: string, ts: string, text: string): Promise<void> {
    await this.call("chat.update", () => this.client.chat.update({ channel, ts, text }));
  }

  /** chat.delete. */
  async delete(channel: string, ts: string): Promise<void> {
    await this.call("chat.delete", () => this.client.chat.delete({ channel, ts }));
  }

  /** reactions.add with a shortcode name (no colons); a reaction already there counts as done. */
  async addReaction(channel: string, timestamp: string, name: string): Promise<void> {
    try {
      await this.call("reactions.add", () => this.client.reactions.add({ channel, timestamp, name }));
    } catch (error) {
      if (error instanceof SlackApiError && error.code === "already_reacted") return;
      throw error;
    }
  }

  /** files.uploadV2 (getUploadURLExternal → upload → completeUploadExternal) into a channel or thread; returns the file id. */
  async uploadFile(args: { channel: string; thread_ts?: string; bytes: Uint8Array; filename: string; caption?: string }): Promise<string> {
    const file = Buffer.from(args.bytes.buffer, args.bytes.byteOffset, args.bytes.byteLength);
    const common = { file, filename: args.filename, title: args.filename, ...(args.caption ? { initial_comment: args.caption } : {}) };
    const result = await this.call("files.uploadV2", () =>
      this.client.filesUploadV2(args.thread_ts ? { ...common, channel_id: args.channel, thread_ts: args.thread_ts } : { ...common, channel_id: args.channel }),
    );
    const completions = (result as { files?: Array<{ files?: Array<{ id?: string }> }> }).files ?? [];
    return completions[0]?.files?.[0]?.id ?? "";
  }

  /** Download a private file (url_private) with the bot token, refusing more than `cap` bytes. */
  async download(url: string, cap: number, signal?: AbortSignal): Promise<{ bytes: Uint8Array; mime: string }> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new SlackApiError("files.download", "invalid_url", "the Slack file reference is not a URL");
    }
    if (!this.mayCarryToken(target)) {
      throw new SlackApiError("files.download", "foreign_host", `refusing to send the Slack bot token to ${target.host}`);
    }
    let withToken = true;
    for (let attempt = 0, hops = 0; ; ) {
      await this.gate.wait(signal);
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
      let response: Response;
      try {
        response = await this.fetchFn(target, {
          headers: withToken ? { authorization: `Bearer ${this.options.token}` } : {},
          // Redirects are followed by hand so the token never rides along to another host.
          redirect: "manual",
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        const why = timeout.aborted ? "timed out" : describeError(error);
        throw new SlackApiError("files.download", "network", this.clean(`downloading a Slack file failed: ${why}`));
      }
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location && hops < 3) {
        await response.body?.cancel();
        target = new URL(location, target);
        withToken = this.mayCarryToken(target);
        hops++;
        continue;
      }
      if (response.status === 429) {
        await response.body?.cancel();
        this.sitOut("files.download", retryAfterMs(response.headers.get("retry-after")) ?? 1000, attempt++);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new SlackApiError("files.download", `http_${response.status}`, `downloading a Slack file failed: HTTP ${response.status}`);
      }
      const mime = (response.headers.get("content-type") ?? "application/octet-stream").split(";")[0]!.trim();
      // Without the files:read scope Slack answers 200 with its sign-in page instead of the file.
      if (mime === "text/html" && !/\.html?$/i.test(target.pathname)) {
        await response.body?.cancel();
        throw new SlackApiError("files.download", "login_page", "Slack sent a sign-in page instead of the file: does the bot token have the files:read scope?");
      }
      return { bytes: await readCapped(response, cap), mime };
    }
  }

  /**
   * Run one Web API call: wait out any pause the workspace is under, and on a
   * 429 pause every call for its Retry-After (when that is within the cap)
   * and try again; every other failure becomes a SlackApiError.
   */
  private async call<T>(method: string, run: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      await this.gate.wait();
      try {
        return await run();
      } catch (error) {
        if (error instanceof WebAPIRateLimitedError) {
          this.sitOut(method, error.retryAfter * 1000, attempt);
          continue;
        }
        throw this.translate(method, error);
      }
    }
  }

  /** Pause the gate for a 429's Retry-After, or give up when it is too long or has happened too often. */
  private sitOut(method: string, waitMs: number, attempt: number): void {
    const seconds = Math.ceil(waitMs / 1000);
    if (waitMs > this.maxWait || attempt >= this.retries) {
      throw new SlackApiError(method, "ratelimited", `Slack rate limit on ${method}: retry after ${seconds} s, giving up`, waitMs);
    }
    this.options.log?.()?.warn("slack rate limited; waiting", { method, wait_ms: waitMs });
    // The calling loop waits at the gate before its next attempt, as every other call does.
    this.gate.pause(waitMs);
  }

  private translate(method: string, error: unknown): SlackApiError {
    if (error instanceof SlackApiError) return error;
    if (error instanceof WebAPIPlatformError) {
      const code = String(error.data.error);
      return new SlackApiError(method, code, this.clean(`Slack refused ${method}: ${code}`));
    }
    if (error instanceof WebAPIHTTPError) {
      return new SlackApiError(method, `http_${error.statusCode}`, `Slack ${method} failed: HTTP ${error.statusCode}`);
    }
    if (error instanceof WebAPIRequestError) {
      return new SlackApiError(method, "network", this.clean(`Slack ${method} failed: ${describeError(error.original)}`));
    }
    return new SlackApiError(method, "error", this.clean(`Slack ${method} failed: ${describeError(error)}`));
  }

  private mayCarryToken(url: URL): boolean {
    if (url.host === this.apiHost) return true;
    return url.protocol === "https:" && SLACK_FILE_HOST.test(url.hostname);
  }

  private clean(text: string): string {
    return scrub(text, [this.options.token]);
  }
}

/**
 * The WebClient's logger, sent to ours. Its debug lines carry whole request
 * bodies (users' messages), so they are dropped; info becomes debug.
 */
function bridgeLogger(log: () => Logger | undefined): SlackLogger {
  const line =
    (level: "debug" | "warn" | "error") =>
    (...msg: unknown[]) => {
      log()?.[level]("slack client", { detail: msg.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join(" ") });
    };
  return {
    debug: () => {},
    info: line("debug"),
    warn: line("warn"),
    error: line("error"),
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: () => {},
  };
}
