/** Footprint of the compiled binary: cold start of `--version` and idle RSS of `run`, each beside a bare bun process. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, printFigure } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const BUN = process.execPath;

function timeRuns(cmd: string[], runs: number, env: Record<string, string>): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const r = Bun.spawnSync(cmd, { env, stdout: "ignore", stderr: "ignore" });
    samples.push(performance.now() - start);
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}`);
  }
  return median(samples);
}

/** Resident set size of a process in MiB, from ps (works on Linux and macOS). */
function rssMiB(pid: number): number {
  const out = Bun.spawnSync(["ps", "-o", "rss=", "-p", String(pid)]).stdout.toString().trim();
  return Number(out) / 1024;
}

async function idleRss(cmd: string[], env: Record<string, string>, ready: (stderr: string) => boolean): Promise<number> {
  const proc = Bun.spawn(cmd, { env, stdout: "ignore", stderr: "pipe" });
  const reader = proc.stderr.getReader();
  let log = "";
  const deadline = Date.now() + 10_000;
  while (!ready(log) && Date.now() < deadline) {
    const { value, done } = await Promise.race([
      reader.read(),
      Bun.sleep(100).then(() => ({ value: undefined, done: false })),
    ]);
    if (done) break;
    if (value) log += new TextDecoder().decode(value);
  }
  // Let start-up garbage settle before reading the idle figure.
  await Bun.sleep(1500);
  const rss = rssMiB(proc.pid);
  proc.kill("SIGTERM");
  await proc.exited;
  return rss;
}

export async function benchStartup(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "fermix-bench-"));
  const env = { PATH: process.env.PATH ?? "", HOME: home, FERMIX_HOME: join(home, ".fermix"), FERMIX_SECRET_STORE: "file", PORT: "0" };
  try {
    const runs = 30;
    timeRuns([BINARY, "--version"], 3, env);
    const fermix = timeRuns([BINARY, "--version"], runs, env);
    const bare = timeRuns([BUN, "-e", "0"], runs, env);
    printFigure({ name: "cold start: dist/fermix --version (median of 30)", value: fermix, baseline: bare, baselineName: "bun -e 0", unit: "ms", lowerIsBetter: true });

    const daemon = await idleRss([BINARY, "run"], env, (log) => log.includes("fermix listening"));
    const bareServer = await idleRss(
      [BUN, "-e", "Bun.serve({ port: 0, fetch: () => new Response('ok') }); console.error('listening')"],
      env,
      (log) => log.includes("listening"),
    );
    printFigure({ name: "idle RSS: dist/fermix run (fresh home)", value: daemon, baseline: bareServer, baselineName: "bare Bun.serve", unit: "MiB", lowerIsBetter: true });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
