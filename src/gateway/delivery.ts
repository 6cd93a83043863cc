/**
 * Every outbound message leaves through here: recorded in the durable outbox,
 * marked `sending`, sent through the channel's port (resent once as plain
 * text if the platform rejects its formatting), then marked with the
 * platform's id. The final reply, streaming, command replies, background
 * results and tool media all use this one path.
 *
 * A send that fails for a reason that may heal (network, 5xx, 429) is not
 * given up: the part stays pending with a time to try again (the platform's
 * Retry-After, whatever its length, or a jittered backoff), and the chat's
 * retrier sends it then — outside every conversation queue, with the chat's
 * later replies waiting behind it so they keep their order. Past the retry
 * horizon the user is told instead, when the channel takes messages again. A
 * refusal that cannot heal (401/403, a chat that is gone) stops at once and
 * is logged. Parts pending at a crash are picked up at the next start.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Fault, faultLine, statusFault } from "../kernel/fault-line.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { type Sleep, sleep as realSleep } from "../kernel/wait.ts";
import {
  FormattingRejected,
  type GatewayChannel,
  type OutboundMedia,
  type OutboundText,
  type ReplyButton,
  type ReplyPort,
  type ReplyTarget,
  SendFailed,
  type SentMessage,
} from "../message/index.ts";
import type { Outbox, OutboxPart, OutboxPayload } from "../store/outbox.ts";
import { classifySendError, retryDelay, type SendFailure } from "./send-failure.ts";
import type { ChannelFacts } from "./channel-facts.ts";

/** A reply rendered for one channel: its messages, the plain fallback of each, and oversized code blocks as files. */
export interface RenderedReply {
  parts: OutboundText[];
  attachments: TextFile[];
  /** Part `index` again as plain text (one or more messages), for a platform that rejected its formatting. */
  fallback(index: number): OutboundText[];
}

/** A text file sent after a reply: a code block too big for a message, or a whole answer too long for messages. */
export interface TextFile {
  filename: string;
  mime: string;
  content: string;
  /** false: if the file cannot be delivered, say so rather than send its text as messages (a whole long answer). */
  inline?: boolean;
}

export interface Presenter {
  /** Split → render → measure, for one channel. */
  render(markdown: string, channel: GatewayChannel): RenderedReply;
  /** Raw text as plain messages within the channel's limit (a code block whose file could not be sent). */
  plain(text: string, channel: GatewayChannel): OutboundText[];
}

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
  /** How long a reply may wait for its platform before the user is told instead (retry_horizon_minutes); default 15 min. */
  horizonMs?: number;
  /** Over this many messages a reply is its first part and the whole answer as a file (max_reply_parts); default 12. */
  maxParts?: number;
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
}

/** How a send ended for now: delivered, waiting for a retry, given up, or stopped. */
export type SendOutcome = "sent" | "deferred" | "failed" | "cancelled";

export const DEFAULT_HORIZON_MS = 15 * 60_000;
export const DEFAULT_MAX_PARTS = 12;
/** A notice that a reply could not be delivered waits this long for its channel to come back. */
const NOTICE_HORIZON_MS = 24 * 60 * 60_000;
const NOTICE_SUFFIX = ":undelivered";

const chatKeyOf = (part: { channel: GatewayChannel; target: ReplyTarget }) => `${part.channel}:${part.target.chatId}`;

export class Delivery {
  /** One retry loop per chat with a backlog; a chat's later replies wait behind it. */
  private readonly retrying = new Map<string, Promise<void>>();
  /** Per chat: no send before this time (epoch ms), set by a platform's Retry-After. */
  private readonly gates = new Map<string, number>();
  /** Channels whose sends are failing right now, with the fault's class and status (the platform's words are in the log): health shows it. */
  private readonly failing = new Map<GatewayChannel, { since: number; fault: Fault }>();
  private readonly closing = new AbortController();
  private readonly now: () => number;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly horizonMs: number;
  private readonly maxParts: number;

  constructor(private readonly deps: DeliveryDeps) {
    this.now = deps.now ?? Date.now;
    this.sleep = deps.sleep ?? realSleep;
    this.random = deps.random ?? Math.random;
    this.horizonMs = deps.horizonMs ?? DEFAULT_HORIZON_MS;
    this.maxParts = deps.maxParts ?? DEFAULT_MAX_PARTS;
  }

  /** Render a Markdown reply and record its parts; returns them to be sent with `send`. */
  record(channel: GatewayChannel, target: ReplyTarget, replyKey: string, markdown: string, firstPart?: number, buttons?: ReplyButton[]): OutboxPart[] {
    const rendered = this.deps.presenter.render(markdown, channel);
    let payloads: OutboxPayload[];
    if (rendered.parts.length > this.maxParts) {
      // Hundreds of messages help nobody: the first part, a line saying so, and the whole answer as a file.
      const note = this.deps.presenter.render(
        `_The whole answer is long (${rendered.parts.length} messages), so it is attached as a file: answer.md._`,
        channel,
      ).parts[0]!;
      payloads = [
        { kind: "text", message: rendered.parts[0]!, fallback: rendered.fallback(0) },
        { kind: "text", message: { ...note, notify: false } },
        this.spool(replyKey, 0, { filename: "answer.md", mime: "text/markdown", content: markdown, inline: false }),
      ];
    } else {
      payloads = rendered.parts.map((message, i) => ({ kind: "text", message, fallback: rendered.fallback(i) }));
      rendered.attachments.forEach((file, i) => payloads.push(this.spool(replyKey, i, file)));
    }
    if (buttons?.length) withButtons(payloads, buttons);
    return this.deps.outbox.record(replyKey, channel, target, payloads, {
      ...(firstPart !== undefined ? { firstPart } : {}),
      ...this.notBefore(channel, target),
    });
  }

  /** Record text files to send after a reply (code blocks set aside while streaming). */
  recordFiles(channel: GatewayChannel, target: ReplyTarget, replyKey: string, files: readonly TextFile[]): OutboxPart[] {
    if (files.length === 0) return [];
    const payloads = files.map((file, i) => this.spool(`${replyKey}-files`, i, file));
    return this.deps.outbox.record(replyKey, channel, target, payloads, this.notBefore(channel, target));
  }

  /**
   * Send recorded parts in order. Resolves once they are all sent, or once
   * the rest has been handed to the chat's retrier ("deferred"), given up, or
   * cancelled by `signal` (a /stop: the unsent parts are cancelled, never
   * sent, retries included). Never throws for a platform's failure.
   */
  async send(parts: OutboxPart[], port?: ReplyPort, signal?: AbortSignal): Promise<SendOutcome> {
    const first = parts[0];
    if (!first) return "sent";
    if (signal?.aborted) return this.cancel(first.replyKey, "stopped before it was sent");
    // A chat with a backlog, or a channel failing right now: these parts wait their turn behind it, in
    // order, in the background — the caller (a turn) does not wait for an outage.
    if (this.retrying.has(chatKeyOf(first)) || (this.failing.has(first.channel) && !this.deps.channels(first.channel).sessionOnly)) {
      this.retry(first);
      return "deferred";
    }
    return this.sendInOrder(parts, port, signal);
  }

  /**
   * Render, record and send a Markdown message now (command replies, notices,
   * background results); `buttons` ride under its last part, on channels that
   * have buttons.
   */
  async say(channel: GatewayChannel, target: ReplyTarget, replyKey: string, markdown: string, port?: ReplyPort, buttons?: ReplyButton[]): Promise<SendOutcome> {
    // A say key names one whole message: recorded from part 0, so saying it again (a message replayed
    // after a crash between the send and its inbox entry's completion) finds the parts sent and sends nothing.
    return this.send(this.record(channel, target, replyKey, markdown, 0, buttons), port);
  }

  /** Cancel every unsent part of a reply (a /stop, a superseded attempt). */
  cancel(replyKey: string, reason: string): "cancelled" {
    this.deps.outbox.cancelPending(replyKey, reason);
    return "cancelled";
  }

  /**
   * A port for one streaming reply whose new messages go through the outbox
   * as "live" parts: what the streaming engine and the tools use. A live part
   * is never retried on its own — when one fails, the stream stops and
   * delivers the rest whole through `fallback`, which is. Edits, deletes,
   * reactions and typing change no message count and pass straight through.
   */
  durablePort(channel: GatewayChannel, target: ReplyTarget, replyKey: string, raw: ReplyPort): ReplyPort {
    const chat = chatKeyOf({ channel, target });
    const viaOutbox = async (payload: OutboxPayload): Promise<SentMessage> => {
      // Earlier replies are waiting for this chat: a live message must not overtake them.
      if (this.retrying.has(chat) || (this.gates.get(chat) ?? 0) > this.now()) {
        throw new SendFailed("earlier messages to this chat are still waiting to be delivered", true);
      }
      const [part] = this.deps.outbox.record(replyKey, channel, target, [payload], { live: true });
      try {
        return await this.sendPart(part!, raw);
      } catch (error) {
        const failure = this.noteFailure(part!, error);
        this.deps.outbox.markFailed(part!.id, `${failure.reason} (the rest of the reply is delivered whole)`);
        this.deps.log.warn("a streamed message was not delivered; the rest of the reply follows whole", {
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
          this.noteFailure({ channel, target }, error);
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
  fallback(channel: GatewayChannel, target: ReplyTarget, replyKey: string, raw: ReplyPort): (markdown: string, files: TextFile[]) => Promise<void> {
    return async (markdown, files) => {
      const parts = markdown.trim() === "" ? [] : this.record(channel, target, replyKey, markdown);
      parts.push(...this.recordFiles(channel, target, replyKey, files));
      await this.send(parts, raw);
    };
  }

  /** The parts a reply's earlier attempt delivered live (or may have: caught mid-send), in order: what a replay reconciles. */
  delivered(replyKey: string): OutboxPart[] {
    return this.deps.outbox.parts(replyKey).filter((p) => p.live && (p.state === "sent" || p.state === "unknown"));
  }

  /** Why a channel's sends are failing right now, for health; undefined while they go through. */
  trouble(channel: GatewayChannel): string | undefined {
    const failing = this.failing.get(channel);
    if (!failing) return undefined;
    const minutes = Math.max(1, Math.round((this.now() - failing.since) / 60_000));
    return `sends failing for ${minutes} min: ${faultLine(failing.fault, "the platform")}; retrying`;
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
      this.retry(part);
    }
    if (resumed > 0) this.deps.log.info("outbox resumed", { parts: resumed, chats: this.retrying.size });
    return { resumed, unknown };
  }

  /**
   * Stop the retriers (shutdown): their waits end at once, an attempt in
   * flight finishes (so it is not left "maybe sent"); what they held stays
   * pending and resumes at the next start. Resolves when they have all returned.
   */
  close(): Promise<void> {
    this.closing.abort();
    return this.idle();
  }

  /** Wait until no chat has a backlog (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.retrying.size > 0) await Promise.all([...this.retrying.values()]);
  }

  private async sendInOrder(parts: OutboxPart[], port: ReplyPort | undefined, signal: AbortSignal | undefined): Promise<SendOutcome> {
    for (const [i, part] of parts.entries()) {
      if (signal?.aborted) return this.cancel(part.replyKey, "stopped before it was sent");
      const state = this.deps.outbox.state(part.id);
      if (state === "cancelled") return "cancelled";
      if (state !== "pending") continue;
      const wait = Math.max(part.notBefore ?? 0, this.gates.get(chatKeyOf(part)) ?? 0) - this.now();
      if (wait > 0) {
        this.retry(part);
        return "deferred";
      }
      const target = port ?? this.deps.rawPort(part.channel, part.target);
      if (!target) {
        const failure: SendFailure = { transient: !this.deps.channels(part.channel).sessionOnly, reason: `channel ${part.channel} is not running` };
        return this.failed(part, parts.slice(i + 1), failure);
      }
      try {
        await this.sendPart(part, target);
      } catch (error) {
        return this.failed(part, parts.slice(i + 1), this.noteFailure(part, error));
      }
    }
    return "sent";
  }

  /** A part failed: defer it to the retrier, give the reply up past its horizon, or stop at a permanent refusal. */
  private async failed(part: OutboxPart, rest: OutboxPart[], failure: SendFailure): Promise<SendOutcome> {
    const { outbox, log, telemetry } = this.deps;
    const fields = {
      channel: part.channel,
      reply: part.replyKey,
      part: part.part,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      reason: failure.reason,
    };
    if (failure.transient) {
      const attempt = part.attempts + 1;
      const delayMs = failure.retryAfterMs ?? retryDelay(attempt, this.random);
      const at = this.now() + delayMs;
      if (at > part.createdAt + this.horizonOf(part)) {
        this.expire(part, failure);
        return "failed";
      }
      outbox.defer(part.id, failure.reason, at);
      log.warn("reply part not delivered; retrying", {
        ...fields,
        attempt,
        retry_in_ms: delayMs,
        ...(failure.retryAfterMs !== undefined ? { retry_after_ms: failure.retryAfterMs } : {}),
      });
      telemetry.emit("delivery.retry", { measurements: { attempt, delay_ms: delayMs }, metadata: { channel: part.channel, kind: part.payload.kind } });
      this.retry(part);
      return "deferred";
    }
    outbox.markFailed(part.id, failure.reason);
    telemetry.emit("delivery.failed", { measurements: { count: 1 }, metadata: { channel: part.channel, kind: part.payload.kind, reason: "refused" } });
    if (part.payload.kind === "media") {
      log.error("an attachment was refused by the platform", { ...fields, file: part.payload.media.filename });
      this.sendInstead(part);
      // The file is replaced; the reply's other parts still go.
      return rest.length > 0 ? this.sendInOrder(rest, undefined, undefined) : "failed";
    }
    for (const later of rest) if (outbox.state(later.id) === "pending") outbox.markFailed(later.id, "an earlier part was refused");
    log.error("reply part refused by the platform; not retried", fields);
    return "failed";
  }

  /** A part waited past its horizon: the reply is given up and the user told, when the channel takes messages again. */
  private expire(part: OutboxPart, failure: SendFailure): void {
    const { outbox, log, telemetry } = this.deps;
    const waited = Math.round((this.now() - part.createdAt) / 60_000);
    const unsent = outbox.parts(part.replyKey).filter((p) => p.state === "pending" || p.id === part.id);
    for (const p of unsent) outbox.markFailed(p.id, `not delivered within ${waited} min: ${failure.reason}`);
    log.error("reply not delivered within the retry horizon; the user will be told", {
      channel: part.channel,
      reply: part.replyKey,
      parts: unsent.length,
      waited_min: waited,
      reason: failure.reason,
    });
    telemetry.emit("delivery.failed", { measurements: { count: unsent.length }, metadata: { channel: part.channel, kind: part.payload.kind, reason: "horizon" } });
    if (part.replyKey.endsWith(NOTICE_SUFFIX)) return;
    const media = unsent.filter((p) => p.payload.kind === "media");
    for (const p of media) this.sendInstead(p);
    const texts = unsent.filter((p) => p.payload.kind === "text");
    if (texts.length === 0) return;
    const first = texts[0]!.payload;
    const about = first.kind === "text" ? preview(first.fallback?.[0]?.text ?? first.message.text) : "";
    const notice =
      `⚠️ I couldn't deliver an answer: ${this.deps.channels(part.channel).displayName} was not taking messages for ${Math.max(1, waited)} min.` +
      (about ? ` It began: “${about}”.` : "") +
      " Ask me again if you still need it.";
    void this.say(part.channel, part.target, `${part.replyKey}${NOTICE_SUFFIX}`, notice);
  }

  /** A file that could not be sent: its text follows inline when it has one, else a line says what is missing. */
  private sendInstead(part: OutboxPart): void {
    if (part.payload.kind !== "media") return;
    const { media, inline } = part.payload;
    const key = `${part.replyKey}:inline${part.part}`;
    if (inline !== undefined) {
      this.deps.log.error("an attachment could not be sent; its content follows inline", { channel: part.channel, reply: part.replyKey, file: media.filename });
      const messages = this.deps.presenter.plain(`${media.filename}:\n${inline}`, part.channel);
      const parts = this.deps.outbox.record(key, part.channel, part.target, messages.map((message) => ({ kind: "text", message })), { firstPart: 0 });
      void this.send(parts);
      return;
    }
    void this.say(part.channel, part.target, key, `⚠️ I couldn't send the file ${media.filename}.`);
  }

  /** Classify a send error, and note what it says about the channel (Retry-After gate, failing health). */
  private noteFailure(part: Pick<OutboxPart, "channel" | "target">, error: unknown): SendFailure {
    const failure = classifySendError(error);
    const chat = chatKeyOf(part);
    if (failure.retryAfterMs !== undefined) this.gates.set(chat, Math.max(this.gates.get(chat) ?? 0, this.now() + failure.retryAfterMs));
    if (failure.transient && !this.failing.has(part.channel)) {
      this.failing.set(part.channel, { since: this.now(), fault: { fault: statusFault(failure.status), ...(failure.status !== undefined ? { status: failure.status } : {}) } });
    }
    return failure;
  }

  /** Make sure the chat of `part` has a retrier running. */
  private retry(part: Pick<OutboxPart, "channel" | "target">): void {
    const chat = chatKeyOf(part);
    if (this.retrying.has(chat) || this.closing.signal.aborted) return;
    const loop = this.drainChat(part.channel, part.target.chatId).finally(() => this.retrying.delete(chat));
    this.retrying.set(chat, loop);
  }

  /** Send a chat's backlog, oldest reply first, each part when it is due. */
  private async drainChat(channel: GatewayChannel, chatId: string): Promise<void> {
    const chat = `${channel}:${chatId}`;
    // Let the caller that started this loop return first: the loop runs beside it, never inside it.
    await Promise.resolve();
    while (!this.closing.signal.aborted) {
      const pending = this.deps.outbox.pendingForChat(channel, chatId);
      const first = pending[0];
      if (!first) return;
      const wait = Math.max(first.notBefore ?? 0, this.gates.get(chat) ?? 0) - this.now();
      if (wait > 0) {
        try {
          await this.sleep(wait, this.closing.signal);
        } catch {
          return;
        }
        continue;
      }
      await this.sendInOrder(
        pending.filter((p) => p.replyKey === first.replyKey),
        undefined,
        undefined,
      );
    }
  }

  private async sendPart(part: OutboxPart, port: ReplyPort): Promise<SentMessage> {
    const started = performance.now();
    const channel = part.channel;
    this.deps.outbox.markSending(part.id);
    let sent: SentMessage;
    try {
      sent =
        part.payload.kind === "text"
          ? await this.sendText(part.channel, part.payload, port)
          : await port.sendMedia(part.payload.media as OutboundMedia);
    } catch (error) {
      if (part.payload.kind === "media") {
        this.deps.telemetry.emit("channel.media_send_error", {
          measurements: { count: 1 },
          metadata: { channel, kind: part.payload.media.kind, reason: error instanceof Error ? error.name : "error" },
        });
      }
      this.deps.telemetry.emit("channel.reply", {
        measurements: { duration_ms: performance.now() - started, parts: 1 },
        metadata: { channel, kind: part.payload.kind, ok: false },
      });
      throw error;
    }
    this.deps.outbox.markSent(part, sent.id);
    if (this.failing.delete(channel)) this.deps.log.info("channel takes messages again", { channel });
    this.deps.telemetry.emit("channel.message", { measurements: { count: 1 }, metadata: { channel, direction: "outbound" } });
    this.deps.telemetry.emit("channel.reply", {
      measurements: { duration_ms: performance.now() - started, parts: 1 },
      metadata: { channel, kind: part.payload.kind, ok: true },
    });
    return sent;
  }

  /**
   * Send a recorded text part; if the platform rejects its formatting, log the
   * fault and send its plain-text fallback once instead (the first message's id
   * stands for the part).
   */
  private async sendText(channel: GatewayChannel, payload: Extract<OutboxPayload, { kind: "text" }>, port: ReplyPort): Promise<SentMessage> {
    try {
      return await port.sendText(payload.message);
    } catch (error) {
      if (!(error instanceof FormattingRejected) || payload.message.plain || !payload.fallback?.length) throw error;
      this.deps.log.error("platform rejected the formatting; resending as plain text", { channel, error: error.message });
      let first: SentMessage | undefined;
      for (const message of payload.fallback) {
        const sent = await port.sendText(message);
        first ??= sent;
      }
      return first!;
    }
  }

  /** Write a text file to the spool and describe it as a media part (with its text inline, for when the file cannot go). */
  private spool(replyKey: string, index: number, file: TextFile): OutboxPayload {
    const dir = join(this.deps.spoolDir, replyKey.replace(/[^A-Za-z0-9_.-]/g, "_"));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${index}-${file.filename}`);
    writeFileSync(path, file.content, { mode: 0o600 });
    const media: OutboundMedia = { kind: "document", path, filename: file.filename, mime: file.mime, notify: false };
    return file.inline !== false ? { kind: "media", media, inline: file.content } : { kind: "media", media };
  }

  private notBefore(channel: GatewayChannel, target: ReplyTarget): { notBefore?: number } {
    const gate = this.gates.get(chatKeyOf({ channel, target })) ?? 0;
    return gate > this.now() ? { notBefore: gate } : {};
  }

  private horizonOf(part: OutboxPart): number {
    return part.replyKey.endsWith(NOTICE_SUFFIX) ? NOTICE_HORIZON_MS : this.horizonMs;
  }
}

/** Put buttons under the last text part (and under the last message of its plain-text fallback). */
function withButtons(payloads: OutboxPayload[], buttons: ReplyButton[]): void {
  const last = payloads.findLast((p) => p.kind === "text");
  if (last?.kind !== "text") return;
  last.message = { ...last.message, buttons };
  const fallback = last.fallback;
  if (fallback?.length) fallback[fallback.length - 1] = { ...fallback[fallback.length - 1]!, buttons };
}

/** The first words of a message, for saying what an undelivered answer was about. */
function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 80 ? `${flat.slice(0, 77).trimEnd()}…` : flat;
}
