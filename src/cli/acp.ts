/**
 * `fermix acp`: what an editor launches as its ACP agent. It only pipes bytes
 * between its stdin/stdout and the running daemon's `<home>/acp.sock`, with
 * back-pressure both ways, and exits when either side closes. It stays light
 * (no ACP SDK, no config load): the daemon speaks the protocol.
 */
import type { Socket } from "bun";
import { pathsFor, resolveHome } from "../config/paths.ts";
import { type CliContext, UsageError } from "./context.ts";

/** The one line `fermix acp` prints when nothing listens on the socket. */
export const DAEMON_NOT_RUNNING = "the Fermix daemon is not running; start it with `fermix run`";

type Input = NodeJS.ReadableStream & { pause(): unknown; resume(): unknown };
type Output = NodeJS.WritableStream;

/** Resolves once everything written to `output` has been handed to the OS. */
function flushed(output: Output): Promise<void> {
  return new Promise((resolve) => {
    if (!output.write("", () => resolve())) output.once("drain", () => resolve());
  });
}

/** Pipe `input` → socket and socket → `output` until one side closes; resolves with the exit code. */
export async function bridge(path: string, input: Input, output: Output, stderr: (text: string) => void, shutdown: AbortSignal): Promise<number> {
  let settle: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (settle = resolve));
  /** Bytes from stdin the socket has not taken yet; stdin is paused while there are any. */
  let backlog: Uint8Array | undefined;
  let inputEnded = false;

  const pump = (socket: Socket<undefined>) => {
    while (backlog) {
      const written = socket.write(backlog);
      if (written < 0) return;
      if (written < backlog.byteLength) {
        backlog = backlog.subarray(written);
        return;
      }
      backlog = undefined;
      if (inputEnded) socket.end();
      else input.resume();
    }
  };

  let socket: Socket<undefined>;
  try {
    socket = await Bun.connect({
      unix: path,
      socket: {
        data(socket, chunk) {
          // A copy: the stream may still hold it after this handler returns.
          if (!output.write(Buffer.from(chunk))) {
            socket.pause();
            output.once("drain", () => socket.resume());
          }
        },
        drain: pump,
        close() {
          if (!inputEnded) stderr("fermix acp: the daemon closed the connection\n");
          void flushed(output).then(() => settle(inputEnded ? 0 : 1));
        },
        error(_socket, error) {
          stderr(`fermix acp: ${error.message}\n`);
        },
      },
    });
  } catch {
    stderr(`${DAEMON_NOT_RUNNING}\n`);
    return 1;
  }

  input.on("data", (chunk: Uint8Array | string) => {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : new Uint8Array(chunk);
    backlog = bytes;
    input.pause();
    pump(socket);
  });
  input.on("end", () => {
    inputEnded = true;
    // The editor is done: let what is still queued out, then close our side.
    if (!backlog) socket.end();
  });
  input.on("error", () => socket.end());
  // The editor closed our stdout (EPIPE): nobody is left to answer.
  output.on("error", () => socket.end());
  shutdown.addEventListener("abort", () => socket.end(), { once: true });
  return done;
}

/** Bridge this process's stdio to `<home>/acp.sock`. */
export async function main(args: string[], ctx: CliContext): Promise<number> {
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`);
  const path = pathsFor(resolveHome(ctx.env)).acpSocket;
  const { input, output } = ctx.terminal();
  return bridge(path, input, output, ctx.stderr, ctx.shutdown);
}
