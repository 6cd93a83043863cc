/**
 * Owner pairing through a running daemon: `fermix setup` asks (over the
 * control socket) for the next message from a sender the channel does not
 * know yet, and the gateway's unauthorized-drop path reports each such
 * message here. The wizard cannot poll Telegram itself while the daemon
 * does: two pollers on one token get 409 Conflict.
 */
import type { UnknownSender } from "../channels/cli/protocol.ts";
import type { InboundMessage } from "../message/index.ts";

interface Waiter {
  channel: string;
  resolve(sender: UnknownSender): void;
}

export class UnknownSenderWatch {
  private readonly waiters = new Set<Waiter>();

  /** The gateway dropped `message`: hand its sender to everyone waiting on that channel. */
  notify(message: InboundMessage): void {
    for (const waiter of this.waiters) {
      if (waiter.channel !== message.channel) continue;
      this.waiters.delete(waiter);
      waiter.resolve({
        channel: message.channel,
        senderId: message.senderId,
        ...(message.senderName ? { senderName: message.senderName } : {}),
      });
    }
  }

  /** The next unknown sender on `channel`; rejects with the signal's reason when it aborts first. */
  next(channel: string, signal: AbortSignal): Promise<UnknownSender> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const waiter: Waiter = {
        channel,
        resolve: (sender) => {
          signal.removeEventListener("abort", onAbort);
          resolve(sender);
        },
      };
      const onAbort = () => {
        this.waiters.delete(waiter);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }
}
