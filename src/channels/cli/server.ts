/**
 * The daemon's control socket (`<home>/control.sock`, 0600): `fermix ask`
 * and `fermix chat` send turns through it, so they share the daemon's store
 * and queues. The socket's file mode is the authorization: the local user is
 * the operator.
 */
import type { Socket, UnixSocketListener } from "bun";
import type { Gateway } from "../../gateway/ingest.ts";
import type { ConversationQueue } from "../../gateway/queue.ts";
import { describeError } from "../../kernel/errors.ts";
import type { ReloadResult } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import { drainPending, lineWriter, listenUnix, type Writer } from "../../kernel/unix-socket.ts";
import { conversationKey } from "../../message/index.ts";
import { type ClientEvent, encodeEvent, LineDecoder, type UnknownSender } from "./protocol.ts";
import { CLI_CHAT_ID, runCliTurn } from "./turn.ts";

interface Connection {
  decoder: LineDecoder;
  pending: { queue: Uint8Array[] };
  write: Writer;
  closed: boolean;
  /** Turns this connection started that have not finished. */
  running: number;
  /** Aborted when the connection closes: ends its `await_sender` waits. */
  gone: AbortController;
}

export interface ControlServerDeps {
  path: string;
  gateway: Gateway;
  queue: ConversationQueue;
  log: Logger;
  /** Re-read and apply the config (the daemon's reload); absent: `reload` is refused. */
  reload?: () => Promise<ReloadResult>;
  /** The next unknown sender on a channel; rejects at once when that channel is not running here. */
  awaitSender?: (channel: string, signal: AbortSignal) => Promise<UnknownSender>;
  /** A fresh one-time link to the web setup page; absent: `setup_link` is refused. */
  setupLink?: () => { url: string; expiresInSeconds: number };
}

/** How long an `await_sender` waits when the client names no timeout, and at most. */
const SENDER_WAIT_MS = 120_000;
const SENDER_WAIT_MAX_MS = 15 * 60_000;

export async function startControlServer(deps: ControlServerDeps): Promise<UnixSocketListener<Connection>> {
  const cliConversation = conversationKey({ channel: "cli", chatId: CLI_CHAT_ID });
  const handle = (socket: Socket<Connection>, event: ClientEvent) => {
    const conn = socket.data;
    if (event.type === "stop") {
      deps.queue.stop(cliConversation);
      return;
    }
    if (event.type === "turn" && typeof event.text === "string") {
      // Not awaited: the next request on this socket (a second message, a /stop) reaches the gateway at once.
      conn.running++;
      const id = typeof event.id === "string" ? event.id : undefined;
      void runCliTurn(deps.gateway, event.text, (out) => {
        if (!conn.closed) conn.write(encodeEvent(id === undefined ? out : { ...out, turn: id }));
      }).finally(() => conn.running--);
      return;
    }
    if (event.type === "reload") {
      if (!deps.reload) return conn.write(encodeEvent({ type: "error", message: "reload is not available" }));
      void deps.reload().then(
        (result) => conn.write(encodeEvent({ type: "reloaded", result })),
        (error) => conn.write(encodeEvent({ type: "error", message: describeError(error) })),
      );
      return;
    }
    if (event.type === "setup_link") {
      if (!deps.setupLink) return conn.write(encodeEvent({ type: "error", message: "the setup page is not available" }));
      const link = deps.setupLink();
      return conn.write(encodeEvent({ type: "setup_link", url: link.url, expires_in_seconds: link.expiresInSeconds }));
    }
    if (event.type === "await_sender" && typeof event.channel === "string") {
      if (!deps.awaitSender) return conn.write(encodeEvent({ type: "error", message: "pairing is not available" }));
      const timeoutMs = Math.min(Math.max(Number(event.timeout_ms) || SENDER_WAIT_MS, 0), SENDER_WAIT_MAX_MS);
      const timedOut = AbortSignal.timeout(timeoutMs);
      void deps.awaitSender(event.channel, AbortSignal.any([timedOut, conn.gone.signal])).then(
        (sender) =>
          conn.write(
            encodeEvent({
              type: "sender",
              channel: sender.channel,
              sender_id: sender.senderId,
              ...(sender.senderName ? { sender_name: sender.senderName } : {}),
            }),
          ),
        (error) => {
          if (conn.closed) return;
          if (timedOut.aborted) return conn.write(encodeEvent({ type: "timeout" }));
          conn.write(encodeEvent({ type: "error", message: describeError(error) }));
        },
      );
      return;
    }
    conn.write(encodeEvent({ type: "error", message: "unknown request" }));
  };

  return listenUnix<Connection>(deps.path, {
    open(socket) {
      const pending = { queue: [] as Uint8Array[] };
      socket.data = { decoder: new LineDecoder(), pending, write: lineWriter(socket, pending), closed: false, running: 0, gone: new AbortController() };
    },
    data(socket, chunk) {
      for (const line of socket.data.decoder.push(chunk)) {
        let event: ClientEvent;
        try {
          event = JSON.parse(line) as ClientEvent;
        } catch {
          socket.data.write(encodeEvent({ type: "error", message: "not JSON" }));
          continue;
        }
        handle(socket, event);
      }
    },
    drain(socket) {
      drainPending(socket, socket.data.pending);
    },
    close(socket) {
      socket.data.closed = true;
      socket.data.gone.abort();
      // A client that goes away mid-turn (Ctrl-C on ask, a closed terminal) takes its turn with it.
      if (socket.data.running > 0) deps.queue.stop(cliConversation);
    },
    error(_socket, error) {
      deps.log.warn("control socket error", { error: error.message });
    },
  });
}
