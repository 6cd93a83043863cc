/**
 * The Signal channel adapter: one long-lived `signal-cli -a ACCOUNT jsonRpc`
 * child (process.ts keeps it up), whose `receive` notifications become
 * inbound messages and whose requests carry the replies (outbound.ts).
 *
 * Durability: signal-cli acknowledges a message to Signal's servers itself,
 * before we see it, and JSON-RPC has no per-message ack to withhold. So the
 * earliest safe point is the notification: each message is committed to the
 * durable inbox (context.submit) as soon as it arrives, in arrival order, and
 * before anything is sent about it. When the daemon is at capacity the
 * message is held here and submitted again with backoff, never dropped.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import { Logger, Redactor } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { sleep } from "../../kernel/wait.ts";
import {
  type FetchedMedia,
  HandoffUnavailable,
  type InboundMedia,
  MediaTooLarge,
  type OutboundMedia,
  type ReplyPort,
  type ReplyTarget,
} from "../../message/index.ts";
import type { AdapterContext, ChannelAdapter } from "../types.ts";
import { type Env, findSignalCli, isAttachmentId, signalAttachmentsDir } from "./files.ts";
import { parseSignalReceive } from "./inbound.ts";
import { DEFAULT_TIMEOUTS, SIGNAL_CAPABILITIES, type SignalRequester, type SignalTimeouts, signalReplyPort } from "./outbound.ts";
import { type Backoff, SignalProcess } from "./process.ts";
import { signalProfile } from "./profile.ts";
import { SignalUnavailable } from "./rpc.ts";

/** Largest inbound attachment read from signal-cli's store (Signal's own attachment limit; src/channels/signal/profile.ts). */
export const SIGNAL_INBOUND_CAP = signalProfile.inboundMediaCap;

/** Knobs tests turn; production uses the defaults. */
export interface SignalAdapterOptions {
  /** The environment for PATH lookup, XDG_DATA_HOME and the child (default: this process's). */
  env?: Env;
  /** Restart backoff of the child. */
  backoff?: Backoff;
  timeouts?: SignalTimeouts;
  /** How long a fresh child has to answer its first request, ms. */
  probeTimeoutMs?: number;
  /** Backoff between attempts to hand a message to a daemon at capacity. */
  submitBackoff?: Backoff;
  /** A logger before start() hands over the daemon's. */
  log?: Logger;
}

const SUBMIT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000 };
/** Attempts for a hand-off that fails for another reason than capacity (a database error) before the message is given up. */
const SUBMIT_ATTEMPTS = 5;

/** Until start() hands us the daemon's logger, log nowhere (ports may be built before start). */
const silent = new Logger({ write: () => {} }, "error", new Redactor());

export class SignalAdapter implements ChannelAdapter {
  readonly name = "signal" as const;
  readonly capabilities = SIGNAL_CAPABILITIES;
  readonly inboundMediaCap = SIGNAL_INBOUND_CAP;
  private readonly account: string;
  private readonly cliPath: string;
  private readonly attachmentsDir: string;
  private readonly env: Env;
  private log: Logger;
  private telemetry: Telemetry | undefined;
  private process: SignalProcess | undefined;
  private stopping = new AbortController();
  /** The chain of submissions, so messages reach the inbox in the order signal-cli printed them. */
  private submissions: Promise<void> = Promise.resolve();
  private readonly requester: SignalRequester = {
    request: (method, params, timeoutMs) =>
      this.process
        ? this.process.request(method, params, timeoutMs)
        : Promise.reject(new SignalUnavailable(`the Signal channel is not started; ${method} not sent`)),
  };

  constructor(
    config: Config,
    private readonly options: SignalAdapterOptions = {},
  ) {
    const section = config.fermix_channels.signal;
    if (!section.account) throw new Error("signal: no account configured");
    this.account = section.account;
    this.cliPath = section.cli_path;
    this.env = options.env ?? process.env;
    this.attachmentsDir = signalAttachmentsDir(section.attachments_dir, this.env);
    this.log = options.log ?? silent;
  }

  async start(context: AdapterContext): Promise<void> {
    if (this.process) return;
    // The account number is the operator's own phone number: it stays out of the log, signal-cli's stderr included.
    context.log.redactor.add(this.account);
    this.log = context.log;
    this.telemetry = context.telemetry;
    this.stopping = new AbortController();
    this.process = new SignalProcess({
      lookup: () => findSignalCli(this.cliPath, this.env),
      args: ["-a", this.account, "jsonRpc"],
      ...(this.options.env ? { env: this.options.env } : {}),
      log: context.log,
      onNotification: (method, params) => this.onNotification(context, method, params),
      ...(this.options.backoff ? { backoff: this.options.backoff } : {}),
      ...(this.options.probeTimeoutMs !== undefined ? { probeTimeoutMs: this.options.probeTimeoutMs } : {}),
    });
    // The child is supervised in the background: start() returns at once and never throws for signal-cli's sake.
    this.process.start();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.process?.stop();
    await this.submissions;
  }

  state(): ChannelRuntimeState {
    return this.process?.state() ?? { status: "starting", process_alive: false, detail: "not started" };
  }

  replyPort(target: ReplyTarget): ReplyPort {
    return signalReplyPort(this.requester, target, {
      timeouts: this.options.timeouts ?? DEFAULT_TIMEOUTS,
      onOverCap: (media, size) => this.overCap(media, size),
    });
  }

  /**
   * Read one received attachment from signal-cli's store, held to the
   * channel's cap or `maxBytes` (whichever is lower): refused by the size the
   * envelope declared before the file is touched, then by its size on disk,
   * and never read past the cap.
   */
  async fetchMedia(media: InboundMedia, _signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia> {
    const cap = Math.min(this.inboundMediaCap, maxBytes ?? Number.POSITIVE_INFINITY);
    if (!isAttachmentId(media.ref)) throw new Error(`not a signal-cli attachment id: ${JSON.stringify(media.ref)}`);
    if (media.declaredSize !== undefined && media.declaredSize > cap) throw new MediaTooLarge(media.declaredSize, cap);
    const path = join(this.attachmentsDir, media.ref);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new Error(
        `attachment ${media.ref} is not in signal-cli's attachment store ${this.attachmentsDir} (set attachments_dir if signal-cli uses another data directory)`,
      );
    }
    if (size > cap) throw new MediaTooLarge(size, cap);
    // One byte past the cap at most, in case the file grew since it was measured.
    const bytes = await Bun.file(path)
      .slice(0, cap + 1)
      .bytes();
    if (bytes.byteLength > cap) throw new MediaTooLarge(bytes.byteLength, cap);
    const fetched: FetchedMedia = { bytes, mime: media.mime ?? "application/octet-stream" };
    if (media.filename) fetched.filename = media.filename;
    return fetched;
  }

  private onNotification(context: AdapterContext, method: string, params: unknown): void {
    if (method !== "receive") return;
    const parsed = parseSignalReceive(params, { account: this.account, receivedAt: Date.now() });
    if (parsed.kind === "invalid") {
      this.log.warn("signal-cli sent a receive notification that is not an envelope; ignored");
      return;
    }
    if (parsed.kind === "ignored") {
      this.log.debug("signal envelope ignored", { why: parsed.why });
      return;
    }
    const submission = { key: parsed.idempotencyKey, message: parsed.message };
    this.submissions = this.submissions.then(() => this.submit(context, [submission]));
  }

  /** Commit to the inbox, waiting out a daemon at capacity; only a stop or repeated faults give a message up. */
  private async submit(context: AdapterContext, items: Parameters<AdapterContext["submit"]>[0]): Promise<void> {
    const backoff = this.options.submitBackoff ?? SUBMIT_BACKOFF;
    let faults = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        await context.submit(items);
        return;
      } catch (error) {
        const capacity = error instanceof HandoffUnavailable;
        if (!capacity) faults++;
        const detail = describeError(error);
        if (faults >= SUBMIT_ATTEMPTS || this.stopping.signal.aborted) {
          this.log.error("signal message could not be handed to the gateway; given up", { message: items[0]?.key, error: detail, attempts: attempt });
          return;
        }
        const wait = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt - 1, 30));
        this.log.warn(capacity ? "daemon at capacity; signal message held and retried" : "signal message hand-off failed; retrying", {
          error: detail,
          retry_in_ms: wait,
        });
        await sleep(wait, this.stopping.signal).catch(() => {});
      }
    }
  }

  private overCap(media: OutboundMedia, size: number): void {
    this.log.warn("file over the media cap not sent; the user was told", { kind: media.kind, bytes: size });
    this.telemetry?.emit("channel.media_send_error", { measurements: { count: 1 }, metadata: { channel: "signal", kind: media.kind, reason: "over_cap" } });
  }
}

/** The registry's factory: an adapter for the configured account. */
export function signalAdapter(config: Config): ChannelAdapter {
  return new SignalAdapter(config);
}
