/**
 * The daemon's control socket (`<home>/control.sock`, 0600): `fermix ask`
 * and `fermix chat` send turns through it, so they share the daemon's store
 * and queues. The socket's file mode is the authorization: the local user is
 * the operator.
 */
import type { Socket, UnixSocketListener } from "bun";
import { conversationKey } from "../../message/index.ts";
import type { Gateway } from "../../gateway/ingest.ts";
import type { ConversationQueue } from "../../gateway/queue.ts";
import type { Logger } from "../../kernel/log.ts";
import { drainPending, lineWriter, listenUnix, type Writer } from "../../kernel/unix-socket.ts";
import { type ClientEvent, encodeEvent, LineDecoder } from "./protocol.ts";
import { CLI_CHAT_ID, runCliTurn } from "./turn.ts";

interface Connection {
  decoder: LineDecoder;
  pending: { queue: Uint8Array[] };
  write: Writer;
  closed: boolean;
  /** Turns this connection started that have not finished. */
  running: number;
}

export interface ControlServerDeps {
  path: string;
  gateway: Gateway;
  queue: ConversationQueue;
  log: Logger;
}

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
    conn.write(encodeEvent({ type: "error", message: "unknown request" }));
  };

  return listenUnix<Connection>(deps.path, {
    open(socket) {
      const pending = { queue: [] as Uint8Array[] };
      socket.data = { decoder: new LineDecoder(), pending, write: lineWriter(socket, pending), closed: false, running: 0 };
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
      // A client that goes away mid-turn (Ctrl-C on ask, a closed terminal) takes its turn with it.
      if (socket.data.running > 0) deps.queue.stop(cliConversation);
    },
    error(_socket, error) {
      deps.log.warn("control socket error", { error: error.message });
    },
  });
}
