/** The socket ↔ web-stream bridge under the ACP connection: bytes intact, and a slow peer holds writes back. */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, UnixSocketListener } from "bun";
import { SocketClosed, type SocketPipe, socketPipe } from "../../../src/channels/acp/pipe.ts";
import { until } from "../../helpers/wait.ts";

const cleanups: Array<() => void> = [];
/** A write that did not wait for a paused peer would resolve as soon as the kernel took what it could: at once. */
const PAUSED_PEER_MS = 100;
/** One turn of the event loop, for the socket's I/O to run (no time passes on purpose). */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A listener whose accepted side is a pipe; returns the server pipe and a raw client socket. */
async function pair(onClientData: (chunk: Uint8Array) => void) {
  const dir = mkdtempSync(join(tmpdir(), "fermix-pipe-"));
  const path = join(dir, "s.sock");
  let resolveServer: (pipe: SocketPipe) => void = () => {};
  const server = new Promise<SocketPipe>((r) => (resolveServer = r));
  const listener: UnixSocketListener<SocketPipe> = Bun.listen<SocketPipe>({
    unix: path,
    socket: {
      open(s) {
        s.data = socketPipe(s);
        resolveServer(s.data);
      },
      data: (s, chunk) => s.data.onData(chunk),
      drain: (s) => s.data.onDrain(),
      close: (s) => s.data.onClose(),
    },
  });
  const client: Socket<undefined> = await Bun.connect({ unix: path, socket: { data: (_s, chunk) => onClientData(new Uint8Array(chunk)) } });
  cleanups.push(() => {
    client.end();
    listener.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });
  return { server: await server, client };
}

test("bytes in both directions arrive intact", async () => {
  const received: Uint8Array[] = [];
  const { server, client } = await pair((c) => received.push(c));
  const writer = server.output.getWriter();
  await writer.write(new TextEncoder().encode("hello client\n"));
  client.write("hello server\n");
  const reader = server.input.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toBe("hello server\n");
  await until("the client's bytes", () => received.length > 0);
  expect(new TextDecoder().decode(received[0])).toBe("hello client\n");
});

test("a write resolves only once a slow peer has taken every byte", async () => {
  let total = 0;
  const { server, client } = await pair((c) => (total += c.byteLength));
  client.pause();
  const big = new Uint8Array(16 * 1024 * 1024).fill(7);
  let done = false;
  const writer = server.output.getWriter();
  const write = writer.write(big).then(() => (done = true));
  // The kernel cannot hold 16 MB for a peer that reads nothing: the write waits. One that did not
  // would resolve as soon as the kernel took what it could, at once, well within this window.
  await Bun.sleep(PAUSED_PEER_MS);
  expect(done).toBe(false);
  client.resume();
  await write;
  await until("every byte at the client", () => total >= big.byteLength);
  expect(total).toBe(big.byteLength);
});

test("the input ends, and pending writes fail, when the peer goes away", async () => {
  const { server, client } = await pair(() => {});
  client.pause();
  const writer = server.output.getWriter();
  const write = writer.write(new Uint8Array(16 * 1024 * 1024));
  const reader = server.input.getReader();
  client.end();
  expect((await reader.read()).done).toBe(true);
  await expect(write).rejects.toBeInstanceOf(SocketClosed);
});

test("a reader that falls behind pauses the socket instead of queueing without bound", async () => {
  const { server, client } = await pair(() => {});
  const big = new Uint8Array(16 * 1024 * 1024).fill(1);
  let offset = 0;
  // Write what the kernel takes; with the server paused it soon stops taking.
  for (let i = 0; i < 200 && offset < big.byteLength; i++) {
    const n = client.write(big.subarray(offset));
    if (n > 0) offset += n;
    await ioTurn();
  }
  expect(offset).toBeLessThan(big.byteLength);
  const reader = server.input.getReader();
  let received = 0;
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      received += value.byteLength;
    }
  })();
  while (offset < big.byteLength) {
    const n = client.write(big.subarray(offset));
    if (n > 0) offset += n;
    await ioTurn();
  }
  await until("every byte at the server", () => received >= big.byteLength);
  expect(received).toBe(big.byteLength);
  client.end();
  await reading;
});
