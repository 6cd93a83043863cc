/**
 * Keeps one signal-cli jsonRpc child running for the adapter's lifetime, and
 * says how it is doing. The child is started, probed with a `version`
 * request (answered: ready), and started again with exponential backoff
 * whenever it exits. A signal-cli that is missing or not executable is not
 * started at all: health shows why, one error is logged, and the lookup is
 * only repeated at the longest backoff, so installing it later brings the
 * channel up without a restart and without a crash loop meanwhile.
 *
 * Requests made while the child is starting or restarting wait for it to be
 * ready, within their own timeout, instead of failing at once; one that runs
 * out of time before a child was ready was never sent, and fails as
 * SignalUnavailable (worth retrying), not SignalTimeout.
 */

import { describeError } from "../../kernel/errors.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import { sleep as defaultSleep } from "../../kernel/wait.ts";
import type { CliLookup } from "./files.ts";
import { SignalRpc, SignalUnavailable } from "./rpc.ts";

export interface Backoff {
  /** First wait after an exit, ms (default 1000). */
  initialMs: number;
  /** Longest wait, ms (default 60,000); also how often a missing signal-cli is looked for again. */
  maxMs: number;
}

export interface SignalProcessOptions {
  /** Find the executable; asked before every start, so a fixed install is picked up. */
  lookup(): CliLookup;
  /** Arguments after the executable (`-a ACCOUNT jsonRpc`). */
  args: string[];
  env?: Record<string, string | undefined>;
  log: Logger;
  /** A notification from signal-cli, in arrival order. */
  onNotification(method: string, params: unknown): void;
  backoff?: Backoff;
  /** How long a fresh child has to answer the `version` probe (a JVM start), ms (default 120,000). */
  probeTimeoutMs?: number;
  /** How long a stopped child has after SIGTERM before SIGKILL, ms (default 5000). */
  stopGraceMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 60_000 };
/** A child that stayed ready this long has its failure count forgotten: the next exit waits the shortest backoff again. */
const STABLE_MS = 60_000;
/** How many of signal-cli's last stderr lines are kept to explain an exit. */
const STDERR_TAIL = 5;

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be waiting when it is rejected (a stop with no request in flight).
  promise.catch(() => {});
  return { promise, resolve, reject };
}

export class SignalProcess {
  private status: ChannelRuntimeState = { status: "starting", process_alive: false, detail: "not started" };
  private controller: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private child: SignalRpc | undefined;
  private ready = deferred<SignalRpc>();
  private failures = 0;
  private readonly stderrTail: string[] = [];

  constructor(private readonly options: SignalProcessOptions) {}

  /** What health reports; `process_alive` is whether a child is running right now. */
  state(): ChannelRuntimeState {
    return { ...this.status, process_alive: this.child?.alive ?? false };
  }

  /** The running child's pid, for tests and logs. */
  get pid(): number | undefined {
    return this.child?.alive ? this.child.pid : undefined;
  }

  /** Start supervising (idempotent); returns at once. */
  start(): void {
    if (this.loop) return;
    this.controller = new AbortController();
    this.status = { status: "starting", process_alive: false };
    this.loop = this.supervise(this.controller.signal);
  }

  /** Stop the child and the loop; pending and later requests fail with SignalUnavailable. */
  async stop(): Promise<void> {
    this.controller?.abort();
    this.ready.reject(new SignalUnavailable("the Signal channel is stopped"));
    await this.child?.stop(this.options.stopGraceMs);
    await this.loop;
    this.status = { status: "failed", process_alive: false, detail: "stopped" };
  }

  /** A request to signal-cli, waiting (within `timeoutMs`) for a ready child if it is starting or restarting. */
  async request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    if (this.controller?.signal.aborted || !this.loop) throw new SignalUnavailable(`the Signal channel is not running; ${method} not sent`);
    // Failed (missing executable, a child that never came up): waiting would only hold the turn; say why now.
    if (this.status.status === "failed") throw new SignalUnavailable(`signal-cli is not available (${this.status.detail ?? "failed"}); ${method} not sent`);
    const started = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // No child came up in time: nothing reached signal-cli, so trying again later is safe (unlike a timeout after sending).
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SignalUnavailable(`signal-cli was not ready within ${timeoutMs} ms; ${method} not sent`)), timeoutMs);
    });
    try {
      const child = await Promise.race([this.ready.promise, timeout]);
      return await child.request(method, params, Math.max(1, timeoutMs - (Date.now() - started)));
    } finally {
      clearTimeout(timer);
    }
  }

  private async supervise(signal: AbortSignal): Promise<void> {
    const sleep = this.options.sleep ?? ((ms, s) => defaultSleep(ms, s).catch(() => {}));
    const backoff = this.options.backoff ?? DEFAULT_BACKOFF;
    let missingLogged = "";
    while (!signal.aborted) {
      const found = this.options.lookup();
      if (!found.ok) {
        this.status = { status: "failed", process_alive: false, detail: found.reason };
        if (missingLogged !== found.reason) this.options.log.error("signal-cli cannot be started", { reason: found.reason });
        missingLogged = found.reason;
        await sleep(backoff.maxMs, signal);
        continue;
      }
      missingLogged = "";
      const outcome = await this.runOnce(found.path, signal);
      if (signal.aborted) return;
      this.failures = outcome.wasReadyFor >= STABLE_MS ? 1 : this.failures + 1;
      const wait = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(this.failures - 1, 30));
      // signal-cli's stderr can name numbers and quote messages: it is for the log line below, never for health.
      const why = `signal-cli exited (${outcome.exit})`;
      // Never ready in this run: it is not coming up on its own (an unregistered account, a bad flag); else a hiccup.
      this.status = {
        status: outcome.wasReadyFor > 0 ? "degraded" : "failed",
        process_alive: false,
        detail: `${why}; restarting in ${Math.round(wait / 1000)} s`,
      };
      this.options.log.warn("signal-cli exited; restarting", {
        exit: outcome.exit,
        retry_in_ms: wait,
        attempt: this.failures,
        stderr: this.stderrTail.join(" | "),
      });
      await sleep(wait, signal);
    }
  }

  /** Run one child to its end; how it ended and how long it had been ready (0: never). */
  private async runOnce(path: string, signal: AbortSignal): Promise<{ exit: string; wasReadyFor: number }> {
    const { log } = this.options;
    this.stderrTail.length = 0;
    let child: SignalRpc;
    try {
      child = new SignalRpc({
        command: [path, ...this.options.args],
        ...(this.options.env ? { env: this.options.env } : {}),
        onNotification: (method, params) => this.options.onNotification(method, params),
        onStderr: (line) => {
          this.stderrTail.push(line);
          if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift();
          log.info("signal-cli", { stderr: line });
        },
        onGarbage: (line) => log.warn("signal-cli wrote a line that is not JSON-RPC; ignored", { line: line.slice(0, 200) }),
      });
    } catch (error) {
      return { exit: `could not be started: ${describeError(error)}`, wasReadyFor: 0 };
    }
    this.child = child;
    // After an exit, health keeps saying why until the new child is ready.
    if (this.status.status !== "failed" && this.status.status !== "degraded") this.status = { status: "starting", process_alive: true };
    log.info("signal-cli started", { pid: child.pid });
    let readyAt = 0;
    const probe = child
      .request("version", {}, this.options.probeTimeoutMs ?? 120_000)
      .then((result) => {
        readyAt = Date.now();
        this.status = { status: "ready", process_alive: true };
        this.ready.resolve(child);
        log.info("signal-cli ready", { pid: child.pid, version: (result as { version?: unknown } | null)?.version ?? "unknown" });
      })
      .catch((error) => {
        if (!child.alive || signal.aborted) return;
        // Running but not answering: it counts as a failed start; stop it and let the loop restart it.
        log.warn("signal-cli did not answer its first request; restarting it", { error: describeError(error) });
        void child.stop(this.options.stopGraceMs);
      });
    const exit = await child.exited;
    await probe;
    // Requests from now on wait for the next child.
    if (readyAt > 0) this.ready = deferred<SignalRpc>();
    if (signal.aborted) this.ready.reject(new SignalUnavailable("the Signal channel is stopped"));
    return { exit, wasReadyFor: readyAt > 0 ? Math.max(1, Date.now() - readyAt) : 0 };
  }
}
