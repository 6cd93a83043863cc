/**
 * Web streams over one Bun socket, the shape the ACP SDK's `ndJsonStream`
 * reads and writes, with back-pressure both ways: a write resolves only once
 * the kernel took every byte (so a slow editor slows the agent, not our
 * memory), and reading pauses while the input queue is full.
 */
import type { Socket } from "bun";

/** Queue at most this much unread input before pausing the socket. */
const INPUT_HIGH_WATER = 1 << 20;

/** A write to, or a read from, a socket whose peer has gone. */
export class SocketClosed extends Error {
  override name = "SocketClosed";
  constructor() {
    super("the ACP client disconnected");
  }
}

/** The two streams plus the socket events that feed them; call the `on*` methods from the socket handler. */
export interface SocketPipe {
  readonly input: ReadableStream<Uint8Array>;
  readonly output: WritableStream<Uint8Array>;
  onData(chunk: Uint8Array): void;
  onDrain(): void;
  onClose(): void;
  /** Whether a write is still waiting for the socket to take it. */
  readonly writing: boolean;
}

interface PendingWrite {
  bytes: Uint8Array;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Bridge a connected socket to a readable (what it receives) and a writable (what it sends). */
export function socketPipe<Data>(socket: Socket<Data>): SocketPipe {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let paused = false;
  let closed = false;
  let pending: PendingWrite | undefined;

  const input = new ReadableStream<Uint8Array>(
    {
      start: (c) => {
        controller = c;
      },
      pull: () => {
        if (paused && !closed) {
          paused = false;
          socket.resume();
        }
      },
      cancel: () => {
        closed = true;
        socket.end();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: INPUT_HIGH_WATER }),
  );

  // Writes as much of the pending chunk as the socket takes; settles it once all is out.
  const flush = () => {
    if (!pending) return;
    if (closed) {
      const { reject } = pending;
      pending = undefined;
      reject(new SocketClosed());
      return;
    }
    const written = socket.write(pending.bytes);
    if (written < 0) {
      closed = true;
      return flush();
    }
    if (written < pending.bytes.byteLength) {
      pending.bytes = pending.bytes.subarray(written);
      return;
    }
    const { resolve } = pending;
    pending = undefined;
    resolve();
  };

  const output = new WritableStream<Uint8Array>({
    // The stream calls write() one chunk at a time, so a single pending slot is enough.
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        if (closed) return reject(new SocketClosed());
        pending = { bytes: chunk, resolve, reject };
        flush();
      }),
    close: () => {
      if (!closed) socket.end();
    },
    abort: () => {
      if (!closed) socket.end();
    },
  });

  return {
    input,
    output,
    get writing() {
      return pending !== undefined;
    },
    onData(chunk) {
      if (closed || !controller) return;
      // Bun may reuse the chunk's memory after the handler returns: keep a copy.
      controller.enqueue(new Uint8Array(chunk));
      if ((controller.desiredSize ?? 1) <= 0 && !paused) {
        paused = true;
        socket.pause();
      }
    },
    onDrain() {
      flush();
    },
    onClose() {
      closed = true;
      flush();
      try {
        controller?.close();
      } catch {
        // already closed, or cancelled by the reader
      }
    },
  };
}
