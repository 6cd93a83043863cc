/**
 * Telegram owner pairing, once for both faces of setup (the terminal wizard
 * and the web page): wait for the next private message to the bot and take
 * its sender as the owner. When a daemon already polls that token, it is
 * asked for the next message from a sender it does not know (two pollers on
 * one token get 409 Conflict); when it cannot answer for that token, the
 * Bot API is polled directly (src/setup/telegram.ts). Each face says how to
 * reach the daemon: the terminal over the control socket, the web page,
 * served by the daemon itself, in process.
 */
import { pairTelegramOwner, type PairedSender } from "./telegram.ts";

/** What a daemon said when asked for the next unknown sender. */
export type DaemonPairing =
  | { kind: "sender"; id: string; name?: string }
  | { kind: "timeout" }
  /** The daemon does not poll this token (or cannot be asked): pair directly. */
  | { kind: "unavailable"; why: string };

export type PairingResult = { kind: "sender"; sender: PairedSender; via: "daemon" | "telegram" } | { kind: "timeout" };

export interface PairingOptions {
  /** The Bot API root the token belongs to. */
  apiRoot: string;
  /** How long to wait for the message, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** Ask the daemon that polls this token; leave out when none does. */
  throughDaemon?: (timeoutMs: number, signal?: AbortSignal) => Promise<DaemonPairing>;
}

/**
 * The sender of the next private message to the bot, or a timeout. Throws a
 * TelegramSetupError when Telegram refuses the direct poll (a bad token,
 * another poller).
 */
export async function pairTelegram(token: string, options: PairingOptions): Promise<PairingResult> {
  if (options.throughDaemon) {
    const answer = await options.throughDaemon(options.timeoutMs, options.signal);
    if (answer.kind === "sender") return { kind: "sender", sender: { id: answer.id, name: answer.name ?? answer.id }, via: "daemon" };
    if (answer.kind === "timeout") return { kind: "timeout" };
  }
  const sender = await pairTelegramOwner(token, {
    apiRoot: options.apiRoot,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return sender ? { kind: "sender", sender, via: "telegram" } : { kind: "timeout" };
}
