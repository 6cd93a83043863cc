/**
 * Sending recorded parts in order, and the per-chat retrier behind it.
 *
 * A chat's parts go in order: the parts of one reply one after another, and
 * replies in the order they were recorded. A send that fails for a reason
 * that may heal leaves the part pending with a time to try again (the
 * platform's Retry-After, which also holds the whole chat, or a jittered
 * backoff — src/gateway/delivery/policy.ts), and the chat's retrier sends it
 * then, outside every conversation queue, with the chat's later replies
 * waiting behind it.
 *
 * Two ways out for a part that keeps failing. A part the platform refuses
 * while it takes other calls for the same chat (it is the part, not the
 * platform) is set aside `hold` after its first failure: what goes in its
 * place (a file's text inline, or one line saying what is missing) is sent,
 * and the chat's later replies follow. The retrier finds out by sending that
 * replacement, unless a call to the chat already went through since the
 * part first failed; when the replacement fails too, it is an outage, and
 * nothing is set aside. Past the retry horizon (counted from when a reply
 * was recorded) the reply is given up and the user told, when the channel
 * takes messages again. A refusal that cannot heal (401/403, a chat that is
 * gone) stops at once; a refused file is replaced the same way.
 */
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import type { Sleep } from "../../kernel/wait.ts";
import { type GatewayChannel, type ReplyPort, type ReplyTarget, SendFailed } from "../../message/index.ts";
import type { Outbox, OutboxPart } from "../../store/outbox.ts";
import type { ChannelFacts } from "../channel-facts.ts";
import { classifySendError, type SendFailure } from "../send-failure.ts";
import type { SendHealth } from "./health.ts";
import type { Notices } from "./notices.ts";
import { nextStep, type Retry } from "./policy.ts";
import type { PartSender } from "./send.ts";
import { chatKeyOf, readSetting, type SendOutcome, type Setting } from "./types.ts";

/** A notice that something could not be delivered waits this long for its channel to come back. */
const NOTICE_HORIZON_MS = 24 * 60 * 60_000;

export interface RetrierDeps {
  outbox: Outbox;
  sender: PartSender;
  health: SendHealth;
  notices: Notices;
  /** Whether a channel exists only while a client is connected: nothing is retried through it later. */
  channels: (channel: GatewayChannel) => Pick<ChannelFacts, "sessionOnly">;
  /** The channel's port for a target; undefined when the channel is not running. */
  rawPort: (channel: GatewayChannel, target: ReplyTarget) => ReplyPort | undefined;
  /** How long a reply may wait for its platform before the user is told instead (ms). */
  horizonMs: Setting;
  /** How long a part the platform refuses while taking other calls holds its chat (ms). */
  holdMs: Setting;
  telemetry: Telemetry;
  log: Logger;
  now: () => number;
  sleep: Sleep;
  random: () => number;
}

export class Retrier {
  /** One retry loop per chat with a backlog; a chat's later replies wait behind it. */
  private readonly loops = new Map<string, Promise<void>>();
  /** Per chat: no send before this time (epoch ms), set by a platform's Retry-After. */
  private readonly gates = new Map<string, number>();
  private readonly closing = new AbortController();

  constructor(private readonly deps: RetrierDeps) {}

  /**
   * Send parts in order now, or hand them to the chat's retrier when it has a
   * backlog (or the channel is failing right now): they wait their turn
   * behind it, in the background — the caller does not wait for an outage.
   */
  submit(parts: OutboxPart[], port?: ReplyPort, signal?: AbortSignal): Promise<SendOutcome> {
    const first = parts[0];
    if (!first) return Promise.resolve("sent");
    if (signal?.aborted) return Promise.resolve(this.cancel(first.replyKey, "stopped before it was sent"));
    if (this.busy(first.channel, first.target) || (this.deps.health.isFailing(first.channel) && !this.deps.channels(first.channel).sessionOnly)) {
      this.retry(first);
      return Promise.resolve("deferred");
    }
    return this.sendInOrder(parts, port, signal);
  }

  /** Cancel every unsent part of a reply (a /stop, a superseded attempt). */
  cancel(replyKey: string, reason: string): "cancelled" {
    this.deps.outbox.cancelPending(replyKey, reason);
    return "cancelled";
  }

  /** Whether the chat has a backlog its retrier is working through. */
  busy(channel: GatewayChannel, target: ReplyTarget): boolean {
    return this.loops.has(chatKeyOf({ channel, target }));
  }

  /** The time before which the platform asked that nothing be sent to the chat (epoch ms); 0: none. */
  gate(channel: GatewayChannel, target: ReplyTarget): number {
    return this.gates.get(chatKeyOf({ channel, target })) ?? 0;
  }

  /** Classify a send error, and note what it says about the chat and channel (a Retry-After gate, failing health). */
  noteFailure(part: { channel: GatewayChannel; target: ReplyTarget }, error: unknown): SendFailure {
    const failure = classifySendError(error);
    const chat = chatKeyOf(part);
    if (failure.retryAfterMs !== undefined) this.gates.set(chat, Math.max(this.gates.get(chat) ?? 0, this.deps.now() + failure.retryAfterMs));
    this.deps.health.failed(part.channel, failure);
    return failure;
  }

  /** Make sure the chat of `part` has a retrier running. */
  retry(part: { channel: GatewayChannel; target: ReplyTarget }): void {
    const chat = chatKeyOf(part);
    if (this.loops.has(chat) || this.closing.signal.aborted) return;
    const loop = this.drainChat(part.channel, part.target.chatId).finally(() => this.loops.delete(chat));
    this.loops.set(chat, loop);
  }

  /** Number of chats with a backlog. */
  get chats(): number {
    return this.loops.size;
  }

  /** Stop the retriers: their waits end at once, an attempt in flight finishes; what they held stays pending. */
  close(): Promise<void> {
    this.closing.abort();
    return this.idle();
  }

  /** Wait until no chat has a backlog. */
  async idle(): Promise<void> {
    while (this.loops.size > 0) await Promise.all([...this.loops.values()]);
  }

  /** Send parts in order, each when it is due; stops at the first that is deferred, given up or cancelled. */
  async sendInOrder(parts: OutboxPart[], port?: ReplyPort, signal?: AbortSignal): Promise<SendOutcome> {
    const { outbox } = this.deps;
    for (const [i, part] of parts.entries()) {
      if (signal?.aborted) return this.cancel(part.replyKey, "stopped before it was sent");
      const state = outbox.state(part.id);
      if (state === "cancelled") return "cancelled";
      if (state !== "pending") continue;
      const wait = Math.max(part.notBefore ?? 0, this.gate(part.channel, part.target)) - this.deps.now();
      if (wait > 0) {
        this.retry(part);
        return "deferred";
      }
      const target = port ?? this.deps.rawPort(part.channel, part.target);
      const rest = parts.slice(i + 1);
      if (!target)
        return this.failed(part, rest, { transient: !this.deps.channels(part.channel).sessionOnly, reason: `channel ${part.channel} is not running` }, port);
      try {
        await this.deps.sender.send(part, target);
      } catch (error) {
        return this.failed(part, rest, this.noteFailure(part, error), port);
      }
    }
    return "sent";
  }

  /** A part failed: retry it later, set it aside, give the reply up past its horizon, or stop at a permanent refusal. */
  private async failed(part: OutboxPart, rest: OutboxPart[], failure: SendFailure, port: ReplyPort | undefined): Promise<SendOutcome> {
    if (!failure.transient) return this.refused(part, rest, failure, port);
    const now = this.deps.now();
    const firstFailedAt = part.firstFailedAt ?? now;
    const step = nextStep({
      now,
      createdAt: part.createdAt,
      firstFailedAt,
      attempt: part.attempts + 1,
      ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
      horizonMs: part.purpose === "undelivered_notice" ? NOTICE_HORIZON_MS : readSetting(this.deps.horizonMs),
      holdMs: readSetting(this.deps.holdMs),
      random: this.deps.random,
    });
    if (step.kind !== "set_aside") return this.later(part, failure, step, firstFailedAt);
    return (await this.setAside(part, rest, failure, firstFailedAt, port)) ?? this.later(part, failure, step.otherwise, firstFailedAt);
  }

  /** Try the part again when `retry` says, or give its reply up. */
  private later(part: OutboxPart, failure: SendFailure, retry: Retry, firstFailedAt: number): SendOutcome {
    if (retry.kind === "expire") {
      this.expire(part, failure);
      return "failed";
    }
    const attempt = part.attempts + 1;
    this.deps.outbox.defer(part.id, failure.reason, retry.at, firstFailedAt);
    this.deps.log.warn("reply part not delivered; retrying", {
      ...this.fields(part, failure),
      attempt,
      retry_in_ms: retry.delayMs,
      ...(failure.retryAfterMs !== undefined ? { retry_after_ms: failure.retryAfterMs } : {}),
    });
    this.deps.telemetry.emit("delivery.retry", {
      measurements: { attempt, delay_ms: retry.delayMs },
      metadata: { channel: part.channel, kind: part.payload.kind },
    });
    this.retry(part);
    return "deferred";
  }

  /**
   * The hold ran out. When the chat takes other calls, the part is set
   * aside, what replaces it goes in its place, and the rest of its reply
   * follows. The replacement's own send is the test: it goes (or is refused
   * outright: the platform is there), or it fails too and the part holds —
   * an outage sets nothing aside. A part with nothing to replace it (a notice
   * about something undelivered) is set aside when another call to the chat
   * went through since it first failed. Undefined when the part holds.
   */
  private async setAside(
    part: OutboxPart,
    rest: OutboxPart[],
    failure: SendFailure,
    firstFailedAt: number,
    port: ReplyPort | undefined,
  ): Promise<SendOutcome | undefined> {
    const { outbox } = this.deps;
    const [probe, ...more] = this.deps.notices.instead(part, "set_aside");
    if (!probe) {
      if (!this.deps.health.reachedSince(part.channel, part.target, firstFailedAt)) return undefined;
      this.setAsideNow(part, failure, firstFailedAt);
      return this.andThen("failed", rest, port);
    }
    const target = port ?? this.deps.rawPort(part.channel, part.target);
    let refusal: SendFailure | undefined;
    // Pending: offered now. Sent, or caught mid-send, before a restart: the chat took it then.
    if (outbox.state(probe.id) === "pending") {
      try {
        if (!target) throw new SendFailed(`channel ${part.channel} is not running`, true);
        await this.deps.sender.send(probe, target);
      } catch (error) {
        refusal = this.noteFailure(probe, error);
        if (refusal.transient) {
          // Nothing goes through to this chat: an outage. The replacement is forgotten, the part holds.
          outbox.forget(probe.replyKey);
          return undefined;
        }
      }
    }
    this.setAsideNow(part, failure, firstFailedAt);
    // Refused outright, the replacement is given up as any refused part; else the rest of it follows.
    const replaced = refusal ? await this.refused(probe, more, refusal, port) : await this.sendInOrder(more, port);
    return this.andThen(replaced, rest, port);
  }

  private setAsideNow(part: OutboxPart, failure: SendFailure, firstFailedAt: number): void {
    const heldMs = this.deps.now() - firstFailedAt;
    this.deps.outbox.markFailed(part.id, `set aside after ${Math.round(heldMs / 1000)} s: refused while the chat took other calls: ${failure.reason}`);
    this.deps.log.warn("a part the platform keeps refusing was set aside; the user is told", {
      ...this.fields(part, failure),
      held_ms: heldMs,
      attempts: part.attempts + 1,
    });
    this.deps.telemetry.emit("delivery.failed", {
      measurements: { count: 1 },
      metadata: { channel: part.channel, kind: part.payload.kind, reason: "set_aside" },
    });
    this.logInline(part);
  }

  /** A refusal that cannot heal: a file is replaced and the reply goes on; a text stops the reply. */
  private async refused(part: OutboxPart, rest: OutboxPart[], failure: SendFailure, port: ReplyPort | undefined): Promise<SendOutcome> {
    const { outbox, log, telemetry } = this.deps;
    outbox.markFailed(part.id, failure.reason);
    telemetry.emit("delivery.failed", { measurements: { count: 1 }, metadata: { channel: part.channel, kind: part.payload.kind, reason: "refused" } });
    if (part.payload.kind === "media") {
      log.error("an attachment was refused by the platform", this.fields(part, failure));
      return this.andThen(await this.sendInOrder(this.replace(part, "refused"), port), rest, port);
    }
    for (const later of rest) if (outbox.state(later.id) === "pending") outbox.markFailed(later.id, "an earlier part was refused");
    log.error("reply part refused by the platform; not retried", this.fields(part, failure));
    return "failed";
  }

  /**
   * After a part that will not go and what replaced it: the rest of its
   * reply. A replacement still waiting keeps the rest waiting too (the
   * chat's retrier has them).
   */
  private andThen(replaced: SendOutcome, rest: OutboxPart[], port: ReplyPort | undefined): Promise<SendOutcome> | SendOutcome {
    if (replaced === "deferred") return "deferred";
    return rest.length > 0 ? this.sendInOrder(rest, port) : "failed";
  }

  /** Record what goes in a part's place (logged when it is the file's text). */
  private replace(part: OutboxPart, why: "refused" | "set_aside"): OutboxPart[] {
    this.logInline(part);
    return this.deps.notices.instead(part, why);
  }

  /** A file whose text goes in its place says so in the log. */
  private logInline(part: OutboxPart): void {
    if (part.payload.kind !== "media" || part.payload.inline === undefined) return;
    this.deps.log.error("an attachment could not be sent; its content follows inline", {
      channel: part.channel,
      reply: part.replyKey,
      file: part.payload.media.filename,
    });
  }

  /** A part waited past its horizon: the reply is given up and the user told, when the channel takes messages again. */
  private expire(part: OutboxPart, failure: SendFailure): void {
    const { outbox, log, telemetry, notices } = this.deps;
    const waited = Math.round((this.deps.now() - part.createdAt) / 60_000);
    const unsent = outbox.parts(part.replyKey).filter((p) => p.state === "pending" || p.id === part.id);
    for (const p of unsent) outbox.markFailed(p.id, `not delivered within ${waited} min: ${failure.reason}`);
    log.error("reply not delivered within the retry horizon; the user will be told", {
      channel: part.channel,
      reply: part.replyKey,
      parts: unsent.length,
      waited_min: waited,
      reason: failure.reason,
    });
    telemetry.emit("delivery.failed", {
      measurements: { count: unsent.length },
      metadata: { channel: part.channel, kind: part.payload.kind, reason: "horizon" },
    });
    for (const p of unsent.filter((p) => p.payload.kind === "media")) void this.submit(this.replace(p, "refused"));
    const notice = notices.horizon(
      part,
      unsent.find((p) => p.payload.kind === "text"),
      waited,
    );
    void this.submit(notice);
  }

  /** Send a chat's backlog, oldest reply first, each part when it is due. */
  private async drainChat(channel: GatewayChannel, chatId: string): Promise<void> {
    const target: ReplyTarget = { chatId };
    // Let the caller that started this loop return first: the loop runs beside it, never inside it.
    await Promise.resolve();
    while (!this.closing.signal.aborted) {
      const pending = this.deps.outbox.pendingForChat(channel, chatId);
      const first = pending[0];
      if (!first) return;
      const wait = Math.max(first.notBefore ?? 0, this.gate(channel, target)) - this.deps.now();
      if (wait > 0) {
        try {
          await this.deps.sleep(wait, this.closing.signal);
        } catch {
          return;
        }
        continue;
      }
      await this.sendInOrder(pending.filter((p) => p.replyKey === first.replyKey));
    }
  }

  private fields(part: OutboxPart, failure: SendFailure) {
    return {
      channel: part.channel,
      reply: part.replyKey,
      part: part.part,
      purpose: part.purpose,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      reason: failure.reason,
      ...(part.payload.kind === "text" ? {} : { file: part.payload.media.filename }),
    };
  }
}
