/**
 * One `signal-cli -a ACCOUNT jsonRpc` child and the JSON-RPC 2.0 session over
 * its stdin/stdout: requests go in one JSON object per line, responses and
 * `receive` notifications come out the same way (signal-cli-jsonrpc(5)).
 *
 * The protocol state (ids, pending requests, per-request timeouts, telling a
 * response from a notification) is the `json-rpc-2.0` library's; what is
 * ours is only the framing, because that library leaves the transport to its
 * caller: each line of stdout is parsed and handed to it, each outgoing
 * message is written as one line. stderr is signal-cli's log, passed on line
 * by line. Once the child is gone every pending request fails at once with
 * SignalUnavailable; nothing is retried here.
 */
import type { Subprocess } from "bun";
import { createJSONRPCErrorResponse, JSONRPCClient, JSONRPCErrorException, JSONRPCServer, JSONRPCServerAndClient } from "json-rpc-2.0";
import { SendFailed } from "../../message/index.ts";

/** signal-cli answered a request with a JSON-RPC error (its `code`: -1 user error, -3 I/O, -5 rate limit, …). */
export class SignalRpcError extends SendFailed {
  override name = "SignalRpcError";
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    // -3 (I/O, the Signal servers unreachable) and -5 (rate limited) heal; the rest (unknown recipient…) do not.
    super(`signal-cli ${method} failed (${code}): ${message}`, code === -3 || code === -5);
  }
}

/** No answer within the request's timeout; signal-cli may still act on it, so it is not tried again (never twice). */
export class SignalTimeout extends SendFailed {
  override name = "SignalTimeout";
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`signal-cli did not answer ${method} within ${timeoutMs} ms`, false);
  }
}

/** signal-cli is not running (not started yet, restarting, or gone mid-request): the send is tried again later. */
export class SignalUnavailable extends SendFailed {
  override name = "SignalUnavailable";
  constructor(message: string) {
    super(message, true);
  }
}

/** An error code of our own for the library's timeout, so a timeout is told apart from signal-cli's errors. */
const TIMEOUT_CODE = -32_099;
/** A stdout line longer than this is not JSON-RPC we asked for: dropped, not buffered without end. */
const MAX_LINE_CHARS = 16 * 1024 * 1024;

export interface SignalRpcOptions {
  /** The full command: executable first. */
  command: string[];
  env?: Record<string, string | undefined>;
  /** A notification from signal-cli (`receive`, …); called in the order they arrive. */
  onNotification(method: string, params: unknown): void;
  /** One line signal-cli wrote to stderr. */
  onStderr(line: string): void;
  /** A stdout line that is not JSON-RPC (reported, then ignored). */
  onGarbage(line: string): void;
}

/** A running child and its session. */
export class SignalRpc {
  /** Resolves once the child has exited and its output has been read to the end, saying how ("code 1", "signal SIGKILL"). */
  readonly exited: Promise<string>;
  private readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly session: JSONRPCServerAndClient;
  private gone = false;

  constructor(private readonly options: SignalRpcOptions) {
    this.proc = Bun.spawn(options.command, {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      ...(options.env ? { env: options.env as Record<string, string> } : {}),
    });
    const server = new JSONRPCServer();
    const client = new JSONRPCClient((payload: unknown) => this.write(payload));
    this.session = new JSONRPCServerAndClient(server, client, { errorListener: () => {} });
    // Notifications carry no id: the library calls the method and sends nothing back.
    for (const method of ["receive"]) {
      server.addMethod(method, (params: unknown) => {
        options.onNotification(method, params);
      });
    }
    const stdout = readLines(this.proc.stdout, (line) => this.onLine(line));
    const stderr = readLines(this.proc.stderr, (line) => options.onStderr(line));
    this.exited = Promise.all([this.proc.exited, stdout, stderr]).then(([code]) => {
      this.gone = true;
      this.session.rejectAllPendingRequests("signal-cli exited");
      return this.proc.signalCode ? `signal ${this.proc.signalCode}` : `code ${code}`;
    });
  }

  /** The child's process id. */
  get pid(): number {
    return this.proc.pid;
  }

  /** Whether the child is still running. */
  get alive(): boolean {
    return !this.gone && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Send one request and wait for its result, at most `timeoutMs`. */
  async request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    if (!this.alive) throw new SignalUnavailable(`signal-cli is not running; ${method} not sent`);
    try {
      return await this.session.client.timeout(timeoutMs, (id) => createJSONRPCErrorResponse(id, TIMEOUT_CODE, "timeout")).request(method, params);
    } catch (error) {
      if (error instanceof JSONRPCErrorException && error.code === TIMEOUT_CODE) throw new SignalTimeout(method, timeoutMs);
      if (this.gone || !this.alive) throw new SignalUnavailable(`signal-cli exited before answering ${method}`);
      if (error instanceof JSONRPCErrorException) throw new SignalRpcError(method, error.code, error.message);
      throw error;
    }
  }

  /**
   * Stop the child: close its stdin (signal-cli's jsonRpc ends at end of
   * input), ask with SIGTERM, and SIGKILL what is left after `graceMs`.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.alive) {
      try {
        this.proc.stdin.end();
      } catch {
        // Already closed: the child is on its way out.
      }
      this.proc.kill("SIGTERM");
      const timer = setTimeout(() => this.proc.kill("SIGKILL"), graceMs);
      await this.proc.exited;
      clearTimeout(timer);
    }
    await this.exited;
  }

  private write(payload: unknown): void {
    if (!this.alive) throw new SignalUnavailable("signal-cli is not running");
    this.proc.stdin.write(`${JSON.stringify(payload)}\n`);
    this.proc.stdin.flush();
  }

  private onLine(line: string): void {
    let payload: unknown;
    try {
      payload = JSON.parse(line);
    } catch {
      this.options.onGarbage(line);
      return;
    }
    // The library reads fields off whatever it is given: hand it objects only.
    if (payload === null || typeof payload !== "object") {
      this.options.onGarbage(line);
      return;
    }
    this.session.receiveAndSend(payload, undefined, undefined).catch(() => this.options.onGarbage(line));
  }
}

/** Call `onLine` for each non-empty line of a byte stream (UTF-8), the last one too if it has no newline. */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  const emit = (line: string) => {
    const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (trimmed.trim() !== "") onLine(trimmed);
  };
  try {
    for await (const chunk of stream) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        emit(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
      if (buffer.length > MAX_LINE_CHARS) buffer = "";
    }
  } catch {
    // The pipe broke with the child: what was read is all there is.
  }
  emit(buffer + decoder.decode());
}
