/**
 * Signed Slack webhook throughput of the compiled daemon, with the durable
 * inbox on, beside a bare Bun.serve answering 200 — both driven by the same
 * load generator in its own process. Also the daemon's RSS before and after.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printFigure } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const LOAD = join(import.meta.dir, "load.ts");
const SECRET = "bench-signing-secret";
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}

async function load(url: string): Promise<LoadResult> {
  const proc = Bun.spawn([process.execPath, LOAD, url, SECRET, String(REQUESTS), String(CONCURRENCY)], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("load generator failed");
  return JSON.parse(out) as LoadResult;
}

function rssMiB(pid: number): number {
  return Number(Bun.spawnSync(["ps", "-o", "rss=", "-p", String(pid)]).stdout.toString().trim()) / 1024;
}

async function waitForLine(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<RegExpExecArray> {
  const reader = stream.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process ended before printing ${pattern}:\n${text}`);
    text += new TextDecoder().decode(value);
    const match = pattern.exec(text);
    if (match) {
      // Keep draining so the child never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done) {}
      })();
      return match;
    }
  }
}

async function waitForHttp(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not answer`);
}

export async function benchWebhook(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "fermix-bench-webhook-"));
  const fermixHome = join(home, ".fermix");
  mkdirSync(fermixHome, { mode: 0o700 });
  // The sender is not on the allowlist: each request is verified, parsed, committed to the inbox
  // with its key, handed off, then dropped by the gateway — the whole ingress path, no model call.
  writeFileSync(
    join(fermixHome, "config.toml"),
    `[fermix_core.providers.openai]\nmodel = "m"\napi_key = "sk-bench-000000"\nbase_url = "http://127.0.0.1:9/v1"\n[fermix_channels.telegram]\nenabled = false\n[fermix_channels.acp]\nenabled = false\n[fermix_channels.slack]\nenabled = true\nbot_token = "xoxb-bench"\nsigning_secret = "${SECRET}"\nowner_user_id = "UOWNER"\n`,
  );
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const env = { PATH: process.env.PATH ?? "", HOME: home, FERMIX_HOME: fermixHome, FERMIX_SECRET_STORE: "file", PORT: String(port), FERMIX_LOG_LEVEL: "warn" };
  const bare = Bun.spawn(
    [process.execPath, "-e", "const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (r) => { await r.arrayBuffer(); return new Response('{\"ok\":true}'); } }); console.log(s.url.href)"],
    { stdout: "pipe", stderr: "inherit" },
  );
  const daemon = Bun.spawn([BINARY, "run"], { env, stdout: "ignore", stderr: "inherit" });
  try {
    const bareUrl = (await waitForLine(bare.stdout, /(http:\/\/\S+)/))[1]!;
    const daemonUrl = `http://127.0.0.1:${port}/`;
    await waitForHttp(new URL("/health/live", daemonUrl).href);
    // Warm both up first (JIT, caches, connection buffers), so "before" is a warm daemon at rest.
    await load(new URL("/x", bareUrl).href);
    await load(new URL("/webhook/slack", daemonUrl).href);
    await Bun.sleep(5000);
    const rssBefore = rssMiB(daemon.pid);
    const baseline = await load(new URL("/x", bareUrl).href);
    const fermix = await load(new URL("/webhook/slack", daemonUrl).href);
    if (fermix.failed > 0) console.log(`  (${fermix.failed} of ${REQUESTS} webhook requests were not answered 200)`);
    printFigure({ name: `signed Slack webhooks/s (${CONCURRENCY} conns, inbox on)`, value: fermix.rps, baseline: baseline.rps, baselineName: "bare Bun.serve 200", unit: "req/s", lowerIsBetter: false });
    printFigure({ name: "p99 latency, signed Slack webhook", value: fermix.p99, baseline: baseline.p99, baselineName: "bare Bun.serve 200", unit: "ms", lowerIsBetter: true });
    // Memory must come back down, not grow with the number of requests: a second run of the same
    // size must leave the settled RSS where the first left it.
    await Bun.sleep(5000);
    const rssAfterFirst = rssMiB(daemon.pid);
    await load(new URL("/webhook/slack", daemonUrl).href);
    await Bun.sleep(5000);
    const rssAfterSecond = rssMiB(daemon.pid);
    printFigure({ name: `daemon RSS settled after ${REQUESTS} more webhooks`, value: rssAfterFirst, baseline: rssBefore, baselineName: "warm, before", unit: "MiB", lowerIsBetter: true });
    printFigure({ name: `daemon RSS settled after ${2 * REQUESTS} webhooks`, value: rssAfterSecond, baseline: rssAfterFirst, baselineName: `after ${REQUESTS}`, unit: "MiB", lowerIsBetter: true });
  } finally {
    bare.kill();
    daemon.kill("SIGTERM");
    await Promise.all([bare.exited, daemon.exited]);
    rmSync(home, { recursive: true, force: true });
  }
}
