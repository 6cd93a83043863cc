/**
 * The control socket's protocol between `fermix ask`/`chat` and the daemon:
 * one JSON object per line each way. Small on purpose: a turn goes in,
 * the reply's messages and a `done` come back. `fermix setup` uses three
 * more: `reload` (answered `reloaded`), `await_sender` (answered
 * `sender`, `timeout` or `error`) and `setup_link` (answered `setup_link`).
 */
import type { ReloadResult } from "../../kernel/health.ts";
import { LineDecoder as SharedLineDecoder } from "../lines.ts";

export type ClientEvent =
  /**
   * Run one turn with this text (slash commands included). Several may be in
   * flight at once — a second message, a /stop — each named by its `id`,
   * which the daemon puts on every event of that turn.
   */
  | { type: "turn"; text: string; id?: string }
  /** Stop the running turn and drop the queued ones (Ctrl-C in `fermix chat`). */
  | { type: "stop" }
  /** Re-read config.toml and the secrets and apply them (what SIGHUP does), answered with what changed. */
  | { type: "reload" }
  /** Owner pairing: the next message on `channel` from a sender it does not know, within `timeout_ms`. */
  | { type: "await_sender"; channel: string; timeout_ms?: number }
  /** A one-time link to the web setup page (`fermix setup --web`). */
  | { type: "setup_link" };

/** What the daemon sends back; `turn` names the request it belongs to (absent for clients that sent none). */
export type ServerEvent =
  /** One outbound message of the reply, in Markdown. */
  (
    | { type: "message"; text: string }
    /** An attachment the reply carried, named (the file stays where it is). */
    | { type: "media"; filename: string; path: string; caption?: string }
    /** The turn is being worked on (the CLI shows a spinner). */
    | { type: "working" }
    /** The turn is over. */
    | { type: "done"; outcome: string }
    | { type: "reloaded"; result: ReloadResult }
    /** The sender an `await_sender` waited for. */
    | { type: "sender"; channel: string; sender_id: string; sender_name?: string }
    /** `await_sender` saw nobody within its timeout. */
    | { type: "timeout" }
    /** The setup page's one-time link, valid once within `expires_in_seconds`. */
    | { type: "setup_link"; url: string; expires_in_seconds: number }
    | { type: "error"; message: string }
  ) & { turn?: string };

/** Someone the channel does not know who just wrote to it (the daemon's answer to `await_sender`). */
export interface UnknownSender {
  channel: string;
  senderId: string;
  senderName?: string;
}

/** Split a byte stream into JSON lines; malformed lines are reported, not thrown. */
export class LineDecoder {
  private readonly lines = new SharedLineDecoder();

  push(chunk: Uint8Array): string[] {
    // No limit is set, so every entry is a line.
    return this.lines.push(chunk).filter((line): line is string => typeof line === "string");
  }
}

export const encodeEvent = (event: ClientEvent | ServerEvent) => `${JSON.stringify(event)}\n`;
