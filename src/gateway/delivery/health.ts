/**
 * What sends say about a channel and a chat. A channel whose sends fail for
 * a reason that may heal is in trouble until a message goes through again:
 * health shows it by the fault's class and status (the platform's own words,
 * which can quote the message, stay in the log). A chat is reached when any
 * call to it goes through — a message, an edit, a reaction, typing: the
 * evidence that a part the platform keeps refusing is the part's fault, not
 * the platform's.
 */
import { type Fault, faultLine, statusFault } from "../../kernel/fault-line.ts";
import type { GatewayChannel, ReplyPort, ReplyTarget } from "../../message/index.ts";
import type { SendFailure } from "../send-failure.ts";
import { chatKeyOf } from "./types.ts";

export class SendHealth {
  /** Channels whose sends are failing right now, since when and with what fault. */
  private readonly failing = new Map<GatewayChannel, { since: number; fault: Fault }>();
  /** Per chat: when a call to it last went through (epoch ms). */
  private readonly reachedAt = new Map<string, number>();

  /**
   * `onRecovered` hears a channel come out of trouble, once, whichever call went through first: a
   * recorded part (delivery/send.ts) or any call of a watched port (typing, an edit, a reaction).
   */
  constructor(
    private readonly now: () => number,
    private readonly onRecovered: (channel: GatewayChannel) => void = () => {},
  ) {}

  /** A send failed: a failure that may heal puts the channel in trouble (from its first such failure). */
  failed(channel: GatewayChannel, failure: SendFailure): void {
    if (!failure.transient || this.failing.has(channel)) return;
    const fault: Fault = { fault: statusFault(failure.status), ...(failure.status !== undefined ? { status: failure.status } : {}) };
    this.failing.set(channel, { since: this.now(), fault });
  }

  /** A message went through (sent or edited): the chat is reached and the channel out of trouble; true when it was in trouble. */
  delivered(channel: GatewayChannel, target: ReplyTarget): boolean {
    this.reached(channel, target);
    const recovered = this.failing.delete(channel);
    if (recovered) this.onRecovered(channel);
    return recovered;
  }

  /** Some call to the chat went through. */
  reached(channel: GatewayChannel, target: ReplyTarget): void {
    this.reachedAt.set(chatKeyOf({ channel, target }), this.now());
  }

  /** Whether a call to the chat went through after `since` (epoch ms) — in this process: a restart forgets. */
  reachedSince(channel: GatewayChannel, target: ReplyTarget, since: number): boolean {
    return (this.reachedAt.get(chatKeyOf({ channel, target })) ?? -Infinity) > since;
  }

  /** Whether the channel's sends are failing right now. */
  isFailing(channel: GatewayChannel): boolean {
    return this.failing.has(channel);
  }

  /** Why a channel's sends are failing right now, for health; undefined while they go through. */
  trouble(channel: GatewayChannel): string | undefined {
    const failing = this.failing.get(channel);
    if (!failing) return undefined;
    const minutes = Math.max(1, Math.round((this.now() - failing.since) / 60_000));
    return `sends failing for ${minutes} min: ${faultLine(failing.fault, "the platform")}; retrying`;
  }
}

/**
 * A channel's port whose calls that go through are told to `health`: every
 * port the gateway uses for a chat (typing, the waiting status, reactions,
 * streamed messages, recorded parts) is one of these. Failures pass through
 * untouched: whoever made the call decides what they mean.
 */
export function watchedPort(channel: GatewayChannel, target: ReplyTarget, port: ReplyPort, health: SendHealth): ReplyPort {
  const delivered = <T>(call: Promise<T>): Promise<T> =>
    call.then((result) => {
      health.delivered(channel, target);
      return result;
    });
  const reached = <T>(call: Promise<T>): Promise<T> =>
    call.then((result) => {
      health.reached(channel, target);
      return result;
    });
  return {
    capabilities: port.capabilities,
    sendText: (message) => delivered(port.sendText(message)),
    sendMedia: (media) => delivered(port.sendMedia(media)),
    editText: (sent, message) => delivered(port.editText(sent, message)),
    deleteMessage: (sent) => reached(port.deleteMessage(sent)),
    react: (messageId, emoji) => reached(port.react(messageId, emoji)),
    // A channel without typing resolves without calling its platform: that proves nothing.
    typing: () => (port.capabilities.typing ? reached(port.typing()) : port.typing()),
    ...(port.askPermission ? { askPermission: port.askPermission.bind(port) } : {}),
  };
}
