/**
 * Owner pairing, once for both faces of setup (the terminal wizard and the
 * web page): wait for the next private message to the bot and take its
 * sender as the owner, for a channel whose profile offers it (its setup's
 * `pairing`). When a daemon already polls that token, it is asked for the
 * next message from a sender it does not know (two pollers on one token
 * conflict); when it cannot answer for that token, the platform is polled
 * directly. Each face says how to reach the daemon: the terminal over the
 * control socket, the web page, served by the daemon itself, in process.
 */
import type { OwnerPairing, PairingResult } from "../channels/setup.ts";

export type { PairingResult } from "../channels/setup.ts";

/** What a daemon said when asked for the next unknown sender. */
export type DaemonPairing =
  | { kind: "sender"; id: string; name?: string }
  | { kind: "timeout" }
  /** The daemon does not poll this token (or cannot be asked): pair directly. */
  | { kind: "unavailable"; why: string };

export interface PairingOptions {
  /** The API root the token belongs to. */
  apiRoot: string;
  /** How long to wait for the message, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** Ask the daemon that polls this token; leave out when none does. */
  throughDaemon?: (timeoutMs: number, signal?: AbortSignal) => Promise<DaemonPairing>;
}

/**
 * The sender of the next private message to the bot, or a timeout. Throws
 * the channel's SetupCheckError when the platform refuses the direct poll
 * (a bad token, another poller).
 */
export async function pairOwner(pairing: OwnerPairing, token: string, options: PairingOptions): Promise<PairingResult> {
  if (options.throughDaemon) {
    const answer = await options.throughDaemon(options.timeoutMs, options.signal);
    if (answer.kind === "sender") return { kind: "sender", sender: { id: answer.id, name: answer.name ?? answer.id }, via: "daemon" };
    if (answer.kind === "timeout") return { kind: "timeout" };
  }
  const sender = await pairing.awaitOwner(token, {
    apiRoot: options.apiRoot,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return sender ? { kind: "sender", sender, via: "platform" } : { kind: "timeout" };
}
