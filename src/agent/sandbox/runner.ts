/**
 * Runs one command inside the OS sandbox and brings back what it printed:
 * bubblewrap on Linux, sandbox-exec on macOS. The command's environment is
 * the policy's and nothing else (the daemon's own never reaches it). It is
 * killed at its timeout or when the turn stops, and its output is kept
 * within a limit per stream — the start and the end, the middle cut out —
 * so a chatty command cannot flood the model or the daemon's memory.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapArgs, dataFiles, type SystemLayout } from "./bwrap.ts";
import { hostEtc, hostLayout, hostNetworkPaths, hostUser, type SandboxBackend } from "./detect.ts";
import type { EtcEntry } from "./etc.ts";
import { openDataFiles } from "./fds.ts";
import { type SandboxIdentity, sandboxIdentity } from "./identity.ts";
import type { SandboxPolicy } from "./policy.ts";
import { sandboxExecArgv, seatbeltProfile } from "./seatbelt.ts";

export interface RunRequest {
  policy: SandboxPolicy;
  argv: readonly string[];
  /** Real path, inside the workspace or a grant. */
  cwd: string;
  timeoutMs: number;
  /** Bytes kept per stream (half from the start, half from the end). */
  outputLimit: number;
  signal: AbortSignal;
}

/** One stream's output as kept. */
export interface Captured {
  text: string;
  /** Bytes the command wrote in all. */
  bytes: number;
  /** Bytes cut out of the middle. */
  cut: number;
}

export interface RunResult {
  /** Null when the command was killed. */
  exitCode: number | null;
  timedOut: boolean;
  /** The turn was stopped while it ran. */
  stopped: boolean;
  stdout: Captured;
  stderr: Captured;
  durationMs: number;
}

/** After the command ends, how long its output may still trickle in (a child it left behind) before reading stops. */
const DRAIN_GRACE_MS = 1000;

export interface RunnerOptions {
  layout?: SystemLayout;
  networkPaths?: string[];
  etc?: EtcEntry[];
  /** Who commands run as; by default, decided from the daemon's own user (identity.ts). */
  identity?: SandboxIdentity;
}

/** How a command is started: its argv and environment, and the descriptors bubblewrap reads its data from. */
interface Launch {
  argv: string[];
  env: Record<string, string>;
  extraFds: number[];
}

export class SandboxRunner {
  private readonly layout: SystemLayout;
  private readonly networkPaths: string[];
  private readonly etc: EtcEntry[];
  private readonly identity: SandboxIdentity;

  constructor(
    readonly backend: SandboxBackend,
    options: RunnerOptions = {},
  ) {
    const bwrap = backend.kind === "bwrap";
    this.layout = options.layout ?? (bwrap ? hostLayout() : {});
    this.networkPaths = options.networkPaths ?? (bwrap ? hostNetworkPaths() : []);
    this.etc = options.etc ?? (bwrap ? hostEtc() : []);
    this.identity = options.identity ?? sandboxIdentity(hostUser());
  }

  async run(request: RunRequest): Promise<RunResult> {
    const started = performance.now();
    const { policy } = request;
    if (this.backend.kind === "bwrap") {
      const data = openDataFiles(dataFiles(this.identity, policy.env.HOME ?? policy.workspace));
      try {
        const args = bwrapArgs({
          policy,
          cwd: request.cwd,
          argv: request.argv,
          layout: this.layout,
          networkPaths: this.networkPaths,
          etc: this.etc,
          identity: this.identity,
          fds: data.fds,
        });
        return await this.spawn({ argv: [this.backend.path, ...args], env: policy.env, extraFds: data.stdio }, request, started, data.close);
      } finally {
        data.close();
      }
    }
    // No private /tmp on macOS: each command gets a fresh directory of its own as TMPDIR instead.
    // The real path: /var is a link to /private/var on macOS, and the profile matches real paths only.
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), "fermix-cmd-")));
    try {
      const argv = sandboxExecArgv(this.backend.path, seatbeltProfile(policy, tmp), request.argv);
      return await this.spawn({ argv, env: { ...policy.env, TMPDIR: tmp }, extraFds: [] }, request, started);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  /** `spawned` runs once the child holds its descriptors (the caller's copies may be closed then). */
  private async spawn(launch: Launch, request: RunRequest, started: number, spawned?: () => void): Promise<RunResult> {
    const proc = Bun.spawn(launch.argv, {
      // bwrap changes into request.cwd inside the sandbox; sandbox-exec runs the command where it starts.
      cwd: this.backend.kind === "bwrap" ? "/" : request.cwd,
      env: launch.env,
      stdio: ["ignore", "pipe", "pipe", ...launch.extraFds],
    });
    spawned?.();
    let timedOut = false;
    let stopped = false;
    const kill = () => {
      try {
        proc.kill("SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, request.timeoutMs);
    const onAbort = () => {
      stopped = true;
      kill();
    };
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener("abort", onAbort, { once: true });
    const stdout = new Capture(request.outputLimit);
    const stderr = new Capture(request.outputLimit);
    const reading = Promise.all([stdout.read(proc.stdout), stderr.read(proc.stderr)]);
    try {
      const exitCode = await proc.exited;
      await Promise.race([reading, Bun.sleep(DRAIN_GRACE_MS)]);
      stdout.stop();
      stderr.stop();
      return {
        exitCode: timedOut || stopped || proc.signalCode ? null : exitCode,
        timedOut,
        stopped,
        stdout: stdout.result(),
        stderr: stderr.result(),
        durationMs: performance.now() - started,
      };
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", onAbort);
    }
  }
}

/** Keeps the first and last `limit / 2` bytes of a stream, and counts the rest. */
export class Capture {
  private readonly half: number;
  private readonly head: Uint8Array[] = [];
  private headBytes = 0;
  private tail: Uint8Array[] = [];
  private tailBytes = 0;
  private total = 0;
  private cancel: (() => void) | undefined;

  constructor(limit: number) {
    this.half = Math.max(1, Math.floor(limit / 2));
  }

  async read(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    this.cancel = () => void reader.cancel().catch(() => {});
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        this.push(value);
      }
    } catch {
      // cancelled by stop(): what arrived is kept
    }
  }

  /** Stop reading (the command is over; a child it left behind may still hold the pipe). */
  stop(): void {
    this.cancel?.();
  }

  push(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    let rest = chunk;
    if (this.headBytes < this.half) {
      const take = Math.min(this.half - this.headBytes, rest.byteLength);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.byteLength === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.byteLength;
    while (this.tailBytes > this.half) {
      const first = this.tail[0]!;
      const excess = this.tailBytes - this.half;
      if (first.byteLength <= excess) {
        this.tail.shift();
        this.tailBytes -= first.byteLength;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  result(): Captured {
    const decode = (parts: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(parts));
    const cut = this.total - this.headBytes - this.tailBytes;
    if (cut === 0) return { text: decode([...this.head, ...this.tail]), bytes: this.total, cut: 0 };
    return { text: `${decode(this.head)}\n[… ${cut} bytes cut …]\n${decode(this.tail)}`, bytes: this.total, cut };
  }
}
