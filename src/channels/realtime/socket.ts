/**
 * The companion socket, `<home>/realtime.sock`: created 0600 inside the 0700
 * home (src/kernel/unix-socket.ts), so only the daemon's own user can
 * connect — the same trust as the ACP and control sockets: whoever opens it
 * is the owner. Each connection is one companion on the voice desk,
 * speaking the companion protocol as JSON lines (protocol.ts).
 */
import type { UnixSocketListener } from "bun";
import type { Logger } from "../../kernel/log.ts";
import { drainPending, lineWriter, listenUnix, type Writer } from "../../kernel/unix-socket.ts";
import { LineDecoder, LineTooLong } from "../lines.ts";
import type { CompanionLink, VoiceDesk } from "./desk.ts";
import { type CompanionEvent, encodeEvent, MAX_LINE, parseRequest } from "./protocol.ts";

interface Connection {
  decoder: LineDecoder;
  pending: { queue: Uint8Array[] };
  write: Writer;
  link?: CompanionLink;
  closed: boolean;
}

/** Listen on `path` for companions; throws SocketInUse when another daemon answers there. */
export function startCompanionSocket(path: string, desk: VoiceDesk, log: Logger): Promise<UnixSocketListener<Connection>> {
  return listenUnix<Connection>(path, {
    open(socket) {
      const pending = { queue: [] as Uint8Array[] };
      const conn: Connection = { decoder: new LineDecoder(MAX_LINE), pending, write: lineWriter(socket, pending), closed: false };
      socket.data = conn;
      conn.link = desk.attach({
        send: (event: CompanionEvent) => {
          if (!conn.closed) conn.write(encodeEvent(event));
        },
        close: () => socket.end(),
      });
    },
    data(socket, chunk) {
      const conn = socket.data;
      for (const line of conn.decoder.push(chunk)) {
        if (line instanceof LineTooLong) {
          conn.write(encodeEvent({ type: "error", code: "bad_request", message: line.message }));
          continue;
        }
        const request = parseRequest(line);
        if ("error" in request) conn.write(encodeEvent({ type: "error", code: "bad_request", message: request.error }));
        else conn.link?.handle(request);
      }
    },
    drain(socket) {
      drainPending(socket, socket.data.pending);
    },
    close(socket) {
      socket.data.closed = true;
      socket.data.link?.detach();
    },
    error(_socket, error) {
      log.warn("realtime socket error", { error: error.message });
    },
  });
}
