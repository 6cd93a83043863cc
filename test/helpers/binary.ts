/**
 * The compiled binary, as integration tests use it. `dist/fermix` is rebuilt
 * when any source file is newer, so a single test file can be run on its own.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

const ROOT = resolve(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist", "fermix");

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let checked = false;
/** Build dist/fermix if it is missing or older than src/. */
export function ensureBinary(): string {
  if (checked) return BINARY;
  const stale = !existsSync(BINARY) || statSync(BINARY).mtimeMs < newestSource(join(ROOT, "src"));
  if (stale) {
    const build = Bun.spawnSync(["bun", "build.ts"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`bun build.ts failed:\n${build.stderr.toString()}`);
  }
  checked = true;
  return BINARY;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Run the binary to completion. */
export async function runFermix(args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<RunResult> {
  const proc = Bun.spawn([ensureBinary(), ...args], {
    env: env as Record<string, string>,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

export interface RunningDaemon {
  url: URL;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the daemon has written to stderr so far. */
  logs(): string;
  /** Send a signal and wait for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Start `fermix run` (PORT=0 unless given) and wait until it says where it listens. */
export async function startDaemon(env: Record<string, string | undefined>, timeoutMs = 10_000): Promise<RunningDaemon> {
  const proc = Bun.spawn([ensureBinary(), "run"], {
    env: { PORT: "0", ...env } as Record<string, string>,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let log = "";
  const decoder = new TextDecoder();
  const reader = proc.stderr.getReader();
  const url = await new Promise<URL>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start in ${timeoutMs} ms:\n${log}`)), timeoutMs);
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        log += decoder.decode(value, { stream: true });
        const match = /msg="fermix listening" url=(\S+)/.exec(log);
        if (match) {
          clearTimeout(timer);
          resolveUrl(new URL(match[1]!));
        }
      }
      clearTimeout(timer);
      reject(new Error(`daemon exited before listening (code ${await proc.exited}):\n${log}`));
    })().catch(reject);
  });
  return {
    url,
    proc,
    logs: () => log,
    async stop(signal = "SIGTERM") {
      proc.kill(signal);
      return proc.exited;
    },
  };
}

/** Everything `daemon` has printed on stdout so far, read as it comes (call once per daemon: it takes the stream). */
export function stdoutSoFar(daemon: RunningDaemon): () => string {
  let text = "";
  const reader = daemon.proc.stdout.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
    }
  })();
  return () => text;
}
