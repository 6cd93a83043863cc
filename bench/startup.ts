/**
 * Footprint of the compiled binary, each figure beside a baseline from the
 * same run: cold `--version` beside `bun -e 0`; `fermix run` to the first 200
 * on /health/ready (provider and four channels configured against loopback
 * fakes) beside a bare compiled Bun.serve binary's first 200; the idle RSS
 * of that daemon beside the bare binary's.
 */
import { join } from "node:path";
import { startFixture } from "./fixture.ts";
import { BARE_SERVE, compileBare, drain, firstOk, freePort, median, printFigure, rssMiB } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const BUN = process.execPath;
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 30);
const READY_RUNS = Number(process.env.BENCH_READY_RUNS ?? 10);

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

interface Started {
  /** ms from spawn to the first 200 on `path`. */
  firstOkMs: number;
  /** RSS in MiB after the process has sat idle for `idleMs`. */
  rss: number;
}

/** Spawn `cmd` with PORT set, poll `path` to its first 200, optionally let it idle and read its RSS, then SIGTERM it. */
async function startAndMeasure(cmd: string[], env: Record<string, string>, path: string, idleMs: number): Promise<Started> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}${path}`;
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, { env: { ...env, PORT: String(port) }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const out = drain(proc.stdout);
  const err = drain(proc.stderr);
  try {
    const firstOkMs = (await firstOk(url)) - t0;
    let rss = Number.NaN;
    if (idleMs > 0) {
      // Let start-up garbage settle before reading the idle figure.
      await Bun.sleep(idleMs);
      rss = rssMiB(proc.pid);
    }
    return { firstOkMs, rss };
  } catch (error) {
    throw new Error(`${cmd.join(" ")}: ${error instanceof Error ? error.message : String(error)}\n${out()}${err()}`);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

export async function benchStartup(): Promise<void> {
  const fixture = await startFixture();
  try {
    const env = fixture.env;
    timeRuns([BINARY, "--version"], 3, env);
    timeRuns([BUN, "-e", "0"], 3, env);
    const fermix = timeRuns([BINARY, "--version"], RUNS, env);
    const bare = timeRuns([BUN, "-e", "0"], RUNS, env);
    printFigure({
      name: `cold start: dist/fermix --version (median of ${RUNS})`,
      value: fermix,
      baseline: bare,
      baselineName: "bun -e 0",
      unit: "ms",
      lowerIsBetter: true,
    });

    const bareServe = await compileBare("bare-serve", BARE_SERVE);
    // A warm-up of each, so the page cache holds both binaries before the timed runs.
    await startAndMeasure([BINARY, "run"], env, "/health/ready", 0);
    await startAndMeasure([bareServe], env, "/", 0);
    const daemonStarts: number[] = [];
    const bareStarts: number[] = [];
    for (let i = 0; i < READY_RUNS; i++) {
      daemonStarts.push((await startAndMeasure([BINARY, "run"], env, "/health/ready", 0)).firstOkMs);
      bareStarts.push((await startAndMeasure([bareServe], env, "/", 0)).firstOkMs);
    }
    printFigure({
      name: `fermix run → first 200 /health/ready, 4 channels (median of ${READY_RUNS})`,
      value: median(daemonStarts),
      baseline: median(bareStarts),
      baselineName: "bare compiled Bun.serve first 200",
      unit: "ms",
      lowerIsBetter: true,
    });

    const daemonIdle = await startAndMeasure([BINARY, "run"], env, "/health/ready", 3000);
    const bareIdle = await startAndMeasure([bareServe], env, "/", 3000);
    printFigure({
      name: "idle RSS: fermix run, Telegram+Slack+WhatsApp+ACP on fakes",
      value: daemonIdle.rss,
      baseline: bareIdle.rss,
      baselineName: "bare compiled Bun.serve",
      unit: "MiB",
      lowerIsBetter: true,
    });
  } finally {
    await fixture.stop();
  }
}
