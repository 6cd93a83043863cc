/**
 * Every outbound message leaves through here: recorded in the durable outbox,
 * marked `sending`, sent through the channel's port, then marked with the
 * platform's id. The final reply, streaming, command replies, background
 * results, scheduled jobs and tool media all use this one path.
 *
 * This is the façade; each job is a module of src/gateway/delivery/:
 * recording and spooling parts (record.ts), sending one part (send.ts), the
 * per-chat retrier with its Retry-After gates and the rule for a part that
 * keeps failing (retrier.ts, policy.ts), channel health from sends
 * (health.ts), and what the user is told when something cannot be delivered
 * (notices.ts). Each row says what it is for (a purpose: src/store/outbox.ts);
 * a reply key is only an identity.
 */
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { sleep as realSleep, type Sleep } from "../kernel/wait.ts";
import { type GatewayChannel, type ReplyButton, type ReplyPort, type ReplyTarget, SendFailed, type SentMessage } from "../message/index.ts";
import type { Outbox, OutboxPart, OutboxPayload, OutboxPurpose } from "../store/outbox.ts";
import type { ChannelFacts } from "./channel-facts.ts";
import { SendHealth, watchedPort } from "./delivery/health.ts";
import { Notices } from "./delivery/notices.ts";
import { DEFAULT_MAX_PARTS, Recorder } from "./delivery/record.ts";
import { Retrier } from "./delivery/retrier.ts";
import { PartSender } from "./delivery/send.ts";
import type { Presenter, SendOutcome, Setting, TextFile } from "./delivery/types.ts";

export type { Presenter, RenderedReply, SendOutcome, Setting, TextFile } from "./delivery/types.ts";

export interface DeliveryDeps {
  outbox: Outbox;
  presenter: Presenter;
  /** Each channel's name in a sentence and whether it exists only while a client is connected (its profile). */
  channels: (channel: GatewayChannel) => Pick<ChannelFacts, "displayName" | "sessionOnly">;
  /** The channel's raw port for a target; undefined when the channel is not running. */
  rawPort: (channel: GatewayChannel, target: ReplyTarget) => ReplyPort | undefined;
  spoolDir: string;
  telemetry: Telemetry;
  log: Logger;
  /** How long a reply may wait for its platform before the user is told instead (retry_horizon_minutes, in ms); default 15 min. */
  horizonMs?: Setting;
  /**
   * How long a part the platform keeps refusing, while it takes other calls
   * for the same chat, holds that chat (hold_seconds, in ms); default 60 s.
   */
  holdMs?: Setting;
  /** Over this many messages a reply is its first part and the whole answer as a file (max_reply_parts); default 12. */
  maxParts?: Setting;
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
}

export const DEFAULT_HORIZON_MS = 15 * 60_000;
const DEFAULT_HOLD_MS = 60_000;

export class Delivery {
  private readonly health: SendHealth;
  private readonly recorder: Recorder;
  private readonly retrier: Retrier;
  private readonly sender: PartSender;
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryDeps) {
    const now = deps.now ?? Date.now;
    this.now = now;
    this.health = new SendHealth(now, (channel) => deps.log.info("channel takes messages again", { channel }));
    this.sender = new PartSender({ outbox: deps.outbox, health: this.health, telemetry: deps.telemetry, log: deps.log });
    this.retrier = new Retrier({
      outbox: deps.outbox,
      sender: this.sender,
      health: this.health,
      notices: new Notices({ outbox: deps.outbox, presenter: deps.presenter, channels: deps.channels }),
      channels: deps.channels,
      rawPort: deps.rawPort,
      horizonMs: deps.horizonMs ?? DEFAULT_HORIZON_MS,
      holdMs: deps.holdMs ?? DEFAULT_HOLD_MS,
      telemetry: deps.telemetry,
      log: deps.log,
      now,
      sleep: deps.sleep ?? realSleep,
      random: deps.random ?? Math.random,
    });
    this.recorder = new Recorder({
      outbox: deps.outbox,
      presenter: deps.presenter,
      spoolDir: deps.spoolDir,
      maxParts: deps.maxParts ?? DEFAULT_MAX_PARTS,
      gate: (channel, target) => this.retrier.gate(channel, target),
      now,
    });
  }

  /** Render a Markdown reply and record its parts; returns them to be sent with `send`. `purpose`: default `reply`. */
  record(
    channel: GatewayChannel,
    target: ReplyTarget,
    replyKey: string,
    markdown: string,
    firstPart?: number,
    buttons?: ReplyButton[],
    purpose?: OutboxPurpose,
  ): OutboxPart[] {
    return this.recorder.record(channel, target, replyKey, markdown, {
      ...(firstPart !== undefined ? { firstPart } : {}),
      ...(buttons ? { buttons } : {}),
      ...(purpose ? { purpose } : {}),
    });
  }

  /** Record text files to send after a reply (code blocks set aside while streaming). `purpose`: default `reply`. */
  recordFiles(channel: GatewayChannel, target: ReplyTarget, replyKey: string, files: readonly TextFile[], purpose?: OutboxPurpose): OutboxPart[] {
    return this.recorder.recordFiles(channel, target, replyKey, files, purpose);
  }

  /**
   * Send recorded parts in order. Resolves once they are all sent, or once
   * the rest has been handed to the chat's retrier ("deferred"), given up, or
   * cancelled by `signal` (a /stop: the unsent parts are cancelled, never
   * sent, retries included). Never throws for a platform's failure.
   */
  send(parts: OutboxPart[], port?: ReplyPort, signal?: AbortSignal): Promise<SendOutcome> {
    return this.retrier.submit(parts, port, signal);
  }

  /**
   * Render, record and send a Markdown message now (command replies, notices,
   * background results, a job's result); `buttons` ride under its last part,
   * on channels that have buttons. `purpose`: default `notice`.
   */
  say(
    channel: GatewayChannel,
    target: ReplyTarget,
    replyKey: string,
    markdown: string,
    port?: ReplyPort,
    buttons?: ReplyButton[],
    purpose: OutboxPurpose = "notice",
  ): Promise<SendOutcome> {
    // A say key names one whole message: recorded from part 0, so saying it again (a message replayed
    // after a crash between the send and its inbox entry's completion) finds the parts sent and sends nothing.
    return this.send(this.record(channel, target, replyKey, markdown, 0, buttons, purpose), port);
  }

  /** Cancel every unsent part of a reply (a /stop, a superseded attempt). */
  cancel(replyKey: string, reason: string): "cancelled" {
    return this.retrier.cancel(replyKey, reason);
  }

  /**
   * A port for one streaming reply whose new messages go through the outbox
   * as "live" parts: what the streaming engine and the tools use. A live part
   * is never retried on its own — when one fails, the stream stops and
   * delivers the rest whole through `fallback`, which is. Edits, deletes,
   * reactions and typing change no message count and pass straight through.
   * `purpose`: default `reply`.
   */
  durablePort(channel: GatewayChannel, target: ReplyTarget, replyKey: string, raw: ReplyPort, purpose?: OutboxPurpose): ReplyPort {
    const { outbox, log } = this.deps;
    const viaOutbox = async (payload: OutboxPayload): Promise<SentMessage> => {
      // Earlier replies are waiting for this chat: a live message must not overtake them.
      if (this.retrier.busy(channel, target) || this.retrier.gate(channel, target) > this.now()) {
        throw new SendFailed("earlier messages to this chat are still waiting to be delivered", true);
      }
      const [part] = outbox.record(replyKey, channel, target, [payload], { live: true, ...(purpose ? { purpose } : {}) });
      try {
        return await this.sender.send(part!, raw);
      } catch (error) {
        const failure = this.retrier.noteFailure(part!, error);
        outbox.markFailed(part!.id, `${failure.reason} (the rest of the reply is delivered whole)`);
        log.warn("a streamed message was not delivered; the rest of the reply follows whole", {
          channel,
          reply: replyKey,
          ...(failure.status !== undefined ? { status: failure.status } : {}),
          reason: failure.reason,
        });
        throw error;
      }
    };
    return {
      capabilities: raw.capabilities,
      sendText: (message) => viaOutbox({ kind: "text", message }),
      sendMedia: (media) => viaOutbox({ kind: "media", media }),
      // The streaming engine resends rejected formatting as plain text itself: pass rejections up.
      editText: (sent, message) =>
        raw.editText(sent, message).catch((error: unknown) => {
          // A failed edit says what a failed send says about the chat (a Retry-After, a failing channel); the stream sees the error.
          this.retrier.noteFailure({ channel, target }, error);
          throw error;
        }),
      deleteMessage: (sent) => raw.deleteMessage(sent),
      react: (messageId, emoji) => raw.react(messageId, emoji),
      typing: () => raw.typing(),
      ...(raw.askPermission ? { askPermission: raw.askPermission.bind(raw) } : {}),
    };
  }

  /**
   * Where a streaming reply delivers what it could not stream: recorded as
   * ordinary parts of the same reply (retried through outages, honouring the
   * Retry-After the stream was given) and sent in order.
   */
  fallback(
    channel: GatewayChannel,
    target: ReplyTarget,
    replyKey: string,
    raw: ReplyPort,
    purpose?: OutboxPurpose,
  ): (markdown: string, files: TextFile[]) => Promise<void> {
    return async (markdown, files) => {
      const parts = markdown.trim() === "" ? [] : this.record(channel, target, replyKey, markdown, undefined, undefined, purpose);
      parts.push(...this.recordFiles(channel, target, replyKey, files, purpose));
      await this.send(parts, raw);
    };
  }

  /**
   * A channel's port whose calls that go through count as the chat taking
   * calls (typing, the waiting status, reactions, edits, messages): the
   * evidence that a part it keeps refusing is the part's fault. The daemon
   * wraps every channel port it hands out in one.
   */
  watch(channel: GatewayChannel, target: ReplyTarget, port: ReplyPort): ReplyPort {
    return watchedPort(channel, target, port, this.health);
  }

  /** The parts a reply's earlier attempt delivered live (or may have: caught mid-send), in order: what a replay reconciles. */
  delivered(replyKey: string): OutboxPart[] {
    return this.deps.outbox.parts(replyKey).filter((p) => p.live && (p.state === "sent" || p.state === "unknown"));
  }

  /** Why a channel's sends are failing right now, for health; undefined while they go through. */
  trouble(channel: GatewayChannel): string | undefined {
    return this.health.trouble(channel);
  }

  /**
   * At start: parts caught mid-send are never re-sent; the rest of what was
   * waiting — never attempted, deferred by an outage, or failed for a reason
   * that may heal — is handed to each chat's retrier. Live parts of a turn
   * that is about to be replayed are cancelled: the replay delivers them.
   */
  resume(): { resumed: number; unknown: number } {
    const { resume, unknown } = this.deps.outbox.recover();
    if (unknown > 0) this.deps.log.warn("outbox parts interrupted mid-send are not re-sent", { parts: unknown });
    let resumed = 0;
    for (const part of resume) {
      if (part.live) {
        this.deps.outbox.cancelPending(part.replyKey, "superseded: its turn is replayed");
        continue;
      }
      resumed++;
      this.retrier.retry(part);
    }
    if (resumed > 0) this.deps.log.info("outbox resumed", { parts: resumed, chats: this.retrier.chats });
    return { resumed, unknown };
  }

  /**
   * Stop the retriers (shutdown): their waits end at once, an attempt in
   * flight finishes (so it is not left "maybe sent"); what they held stays
   * pending and resumes at the next start. Resolves when they have all returned.
   */
  close(): Promise<void> {
    return this.retrier.close();
  }

  /** Wait until no chat has a backlog (tests, shutdown). */
  idle(): Promise<void> {
    return this.retrier.idle();
  }
}
