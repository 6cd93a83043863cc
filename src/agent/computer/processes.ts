/**
 * The desktop's processes, each started as the leader of a process group of
 * its own (a new session), so that stopping one ends everything it started
 * that stayed in its group; with `--unshare-pid` under bubblewrap
 * (./programs.ts) not even a program that left its group survives. A
 * program's output is read and kept short, for the log line that reports it
 * when it fails to start.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface GroupProcess {
  readonly pid: number;
  /** The program's name, for logs. */
  readonly name: string;
  /** Resolves with the exit code (null: killed by a signal) when the leader exits. */
  readonly exited: Promise<number | null>;
  /** Whether the leader still runs. */
  running(): boolean;
  /** The last lines it wrote (stdout and stderr together), for a log line. */
  output(): string;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves when the leader is gone. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_KEPT = 2000;

/** Start `argv` in a new session of its own, with exactly `env`. */
export function startGroup(argv: readonly string[], options: { env: Record<string, string>; cwd: string; name?: string }): GroupProcess {
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { detached: true, env: options.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      done = true;
      resolve(code);
    });
    child.once("error", (error) => {
      done = true;
      keep(Buffer.from(`${error.message}\n`));
      resolve(null);
    });
  });
  const pid = child.pid ?? -1;
  const signalGroup = (signal: NodeJS.Signals) => {
    if (pid <= 0) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  return {
    pid,
    name: options.name ?? argv[0]!,
    exited,
    running: () => !done,
    output: () => output.trim(),
    async stop(graceMs = 1000) {
      signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      // The leader is gone; anything of its group that outlived it goes too.
      signalGroup("SIGKILL");
    },
  };
}

/** Run a short command to its end with `env`; its exit code and output. Killed at `timeoutMs`. */
export async function runShort(
  argv: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: Uint8Array; stderr: string }> {
  const proc = Bun.spawn([...argv], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: timeoutMs, killSignal: "SIGKILL" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
  return { code: proc.signalCode ? null : code, stdout, stderr };
}
