/**
 * Footprint of the compiled binary, each figure beside a baseline from the
 * same run: cold `--version` beside `bun -e 0`; `fermix run` to the first 200
 * on /health/ready (a provider and four, then six channels configured
 * against loopback fakes) beside a bare compiled Bun.serve binary's first
 * 200, started alternately; the idle RSS of the daemon with six channels,
 * then with an MCP server, realtime voice and computer use configured but
 * idle, beside the bare binary's.
 */
import { join } from "node:path";
import { FOUR_CHANNELS, SIX_CHANNELS, startFixture } from "./fixture.ts";
import { BARE_SERVE, compileBare, drain, firstOk, freePort, median, printFigure, rssMiB } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const BUN = process.execPath;
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 30);
const READY_RUNS = Number(process.env.BENCH_READY_RUNS ?? 10);
const RSS_RUNS = Number(process.env.BENCH_RSS_RUNS ?? 3);
/** How long a started daemon idles before its RSS is read: start-up garbage collected, MCP servers connected. */
const IDLE_MS = 3000;

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

/** The median idle RSS of RSS_RUNS starts of `cmd`, each left IDLE_MS after its first 200. */
async function idleRss(cmd: string[], env: Record<string, string>, path: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RSS_RUNS; i++) samples.push((await startAndMeasure(cmd, env, path, IDLE_MS)).rss);
  return median(samples);
}

/** Median time to the first 200 of the daemon in `env` and of the bare server, started alternately READY_RUNS times. */
async function readyTimes(env: Record<string, string>, bareServe: string): Promise<{ daemon: number; bare: number }> {
  const daemonStarts: number[] = [];
  const bareStarts: number[] = [];
  for (let i = 0; i < READY_RUNS; i++) {
    daemonStarts.push((await startAndMeasure([BINARY, "run"], env, "/health/ready", 0)).firstOkMs);
    bareStarts.push((await startAndMeasure([bareServe], env, "/", 0)).firstOkMs);
  }
  return { daemon: median(daemonStarts), bare: median(bareStarts) };
}

export async function benchStartup(): Promise<void> {
  const four = await startFixture({ channels: FOUR_CHANNELS });
  const six = await startFixture({ channels: SIX_CHANNELS });
  const featured = await startFixture({ channels: SIX_CHANNELS, features: ["mcp", "realtime", "computer"] });
  try {
    const env = four.env;
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
    const readyFour = await readyTimes(four.env, bareServe);
    printFigure({
      name: `fermix run → first 200 /health/ready, 4 channels (median of ${READY_RUNS})`,
      value: readyFour.daemon,
      baseline: readyFour.bare,
      baselineName: "bare compiled Bun.serve first 200",
      unit: "ms",
      lowerIsBetter: true,
      target: { bound: 3 },
    });
    // Discord's gateway handshake and the start of signal-cli (here the fake, itself a Bun process) are part of being ready.
    const readySix = await readyTimes(six.env, bareServe);
    printFigure({
      name: "  the same, 6 channels (Discord, Signal's fake signal-cli added)",
      value: readySix.daemon,
      baseline: readySix.bare,
      baselineName: "bare compiled Bun.serve first 200",
      unit: "ms",
      lowerIsBetter: true,
    });

    // The daemon's own RSS: signal-cli and an MCP server are child processes, not counted here.
    const bareIdle = await idleRss([bareServe], env, "/");
    printFigure({
      name: `idle RSS: 6 channels on fakes (median of ${RSS_RUNS})`,
      value: await idleRss([BINARY, "run"], six.env, "/health/ready"),
      baseline: bareIdle,
      baselineName: "bare compiled Bun.serve",
      unit: "MiB",
      lowerIsBetter: true,
      target: { bound: 2 },
    });
    printFigure({
      name: "idle RSS: 6 channels + an MCP server, realtime, computer use idle",
      value: await idleRss([BINARY, "run"], featured.env, "/health/ready"),
      baseline: bareIdle,
      baselineName: "bare compiled Bun.serve",
      unit: "MiB",
      lowerIsBetter: true,
      target: { bound: 2.2 },
    });
  } finally {
    await Promise.all([four.stop(), six.stop(), featured.stop()]);
  }
}
