/**
 * HTTP/1.1 over a bare TCP socket, for requests fetch() will not send as
 * written (a chunked body with no Content-Length, chunks of chosen sizes).
 */
import { connect } from "node:net";

/** Write `head` then each chunk to 127.0.0.1:`port`, and resolve with the status code of the first response line. */
export function rawStatus(port: number, head: string, chunks: Uint8Array[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (d) => {
      received += d.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on("error", (e) => (received ? undefined : reject(e)));
    // A server that hangs up without a status line fails the test now rather than at its timeout.
    socket.on("close", () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!m) reject(new Error(`no status line; got ${JSON.stringify(received.slice(0, 100))}`));
    });
    socket.write(head);
    for (const chunk of chunks) socket.write(chunk);
  });
}
