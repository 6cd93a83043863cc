/**
 * Unix sockets for the local surfaces (ACP, control): created 0600 inside the
 * 0700 home with no window in which another user could connect, a stale
 * socket from a crashed run replaced, and refused when a live daemon owns it.
 */
import { chmodSync, existsSync, rmSync } from "node:fs";
import type { Socket, SocketHandler, UnixSocketListener } from "bun";

export class SocketInUse extends Error {
  override name = "SocketInUse";
}

/** Whether something accepts connections on the socket path. */
export async function socketAnswers(path: string, timeoutMs = 500): Promise<boolean> {
  if (!existsSync(path)) return false;
  try {
    const socket = await Promise.race([Bun.connect({ unix: path, socket: { data() {} } }), Bun.sleep(timeoutMs).then(() => null)]);
    if (!socket) return false;
    socket.end();
    return true;
  } catch {
    return false;
  }
}

/** Listen on `path` with mode 0600, replacing a stale socket; throws SocketInUse when a live one answers. */
export async function listenUnix<Data>(path: string, handler: SocketHandler<Data>): Promise<UnixSocketListener<Data>> {
  if (existsSync(path)) {
    if (await socketAnswers(path)) throw new SocketInUse(`${path} is in use: is another fermix daemon running?`);
    rmSync(path, { force: true });
  }
  // The umask makes the socket 0600 from the moment it exists; chmod makes sure of it.
  const previous = process.umask(0o177);
  try {
    const listener = Bun.listen<Data>({ unix: path, socket: handler });
    chmodSync(path, 0o600);
    return listener;
  } finally {
    process.umask(previous);
  }
}

/** Write a whole buffer to a Bun socket, waiting for drain when the kernel buffer is full. */
export type Writer = (chunk: string | Uint8Array) => void;

export function lineWriter<Data>(socket: Socket<Data>, pending: { queue: Uint8Array[] }): Writer {
  const encoder = new TextEncoder();
  return (chunk) => {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    if (pending.queue.length > 0) {
      pending.queue.push(bytes);
      return;
    }
    const written = socket.write(bytes);
    if (written < bytes.byteLength) pending.queue.push(bytes.subarray(written));
  };
}

/** Flush what a writer queued; call from the socket's drain handler. */
export function drainPending<Data>(socket: Socket<Data>, pending: { queue: Uint8Array[] }): void {
  while (pending.queue.length > 0) {
    const head = pending.queue[0]!;
    const written = socket.write(head);
    if (written < head.byteLength) {
      pending.queue[0] = head.subarray(written);
      return;
    }
    pending.queue.shift();
  }
}
