/**
 * Signed Slack webhook throughput of the compiled daemon, with the durable
 * inbox on, beside a bare compiled Bun.serve answering 200 — both driven by
 * the same load generator in its own process. Also the daemon's RSS before
 * and after. Slack's Web API is the loopback fake: nothing leaves 127.0.0.1.
 */
import { join } from "node:path";
import { SLACK_SIGNING_SECRET, startFixture } from "./fixture.ts";
import { BARE_SERVE, compileBare, drain, firstOk, freePort, median, printFigure, rssMiB, waitForLine } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const LOAD = join(import.meta.dir, "load.ts");
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
/** Rounds of bare-then-daemon runs; the medians are printed (one run of 20 000 requests lasts under a second). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}

async function load(url: string): Promise<LoadResult> {
  const proc = Bun.spawn([process.execPath, LOAD, url, SLACK_SIGNING_SECRET, String(REQUESTS), String(CONCURRENCY)], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("load generator failed");
  return JSON.parse(out) as LoadResult;
}

export async function benchWebhook(): Promise<void> {
  // Only Slack on. The sender is not on the allowlist: each request is verified, parsed, committed to the
  // inbox with its key, handed off, then dropped by the gateway — the whole ingress path, no model call.
  const fixture = await startFixture({ channels: { telegram: false, whatsapp: false, acp: false } });
  const port = freePort();
  const bare = Bun.spawn([await compileBare("bare-serve", BARE_SERVE)], { env: { PORT: "0" }, stdout: "pipe", stderr: "inherit" });
  const daemon = Bun.spawn([BINARY, "run"], { env: { ...fixture.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
  const logs = drain(daemon.stderr);
  try {
    const bareUrl = (await waitForLine(bare.stdout, /(http:\/\/\S+)/))[1]!;
    const daemonUrl = `http://127.0.0.1:${port}/`;
    await firstOk(new URL("/health/ready", daemonUrl).href);
    // Warm both up first (JIT, caches, connection buffers), so "before" is a warm daemon at rest.
    await load(new URL("/x", bareUrl).href);
    await load(new URL("/webhook/slack", daemonUrl).href);
    await Bun.sleep(5000);
    const rssBefore = rssMiB(daemon.pid);
    const baseline: LoadResult[] = [];
    const fermix: LoadResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      baseline.push(await load(new URL("/x", bareUrl).href));
      fermix.push(await load(new URL("/webhook/slack", daemonUrl).href));
    }
    const failed = fermix.reduce((n, r) => n + r.failed, 0);
    if (failed > 0) console.log(`  (${failed} of ${ROUNDS * REQUESTS} webhook requests were not answered 200)`);
    const med = (runs: LoadResult[], key: "rps" | "p99") => median(runs.map((r) => r[key]));
    printFigure({
      name: `signed Slack webhooks/s (${CONCURRENCY} conns, inbox on, median of ${ROUNDS})`,
      value: med(fermix, "rps"),
      baseline: med(baseline, "rps"),
      baselineName: "bare compiled Bun.serve 200",
      unit: "req/s",
      lowerIsBetter: false,
    });
    printFigure({
      name: "p99 latency, signed Slack webhook",
      value: med(fermix, "p99"),
      baseline: med(baseline, "p99"),
      baselineName: "bare compiled Bun.serve 200",
      unit: "ms",
      lowerIsBetter: true,
    });
    // Memory must come back down, not grow with the number of requests: a second run of the same
    // size must leave the settled RSS where the first left it.
    await Bun.sleep(5000);
    const rssAfterFirst = rssMiB(daemon.pid);
    await load(new URL("/webhook/slack", daemonUrl).href);
    await Bun.sleep(5000);
    const rssAfterSecond = rssMiB(daemon.pid);
    printFigure({
      name: `daemon RSS settled after ${ROUNDS * REQUESTS} more webhooks`,
      value: rssAfterFirst,
      baseline: rssBefore,
      baselineName: "warm, before",
      unit: "MiB",
      lowerIsBetter: true,
    });
    printFigure({
      name: `daemon RSS settled after ${REQUESTS} more`,
      value: rssAfterSecond,
      baseline: rssAfterFirst,
      baselineName: "the time before",
      unit: "MiB",
      lowerIsBetter: true,
    });
    const errors = logs()
      .split("\n")
      .filter((line) => line.includes("level=error"));
    if (errors.length > 0) console.log(`  daemon logged ${errors.length} error line(s), first: ${errors[0]}`);
  } finally {
    bare.kill();
    daemon.kill("SIGTERM");
    await Promise.all([bare.exited, daemon.exited]);
    await fixture.stop();
  }
}
