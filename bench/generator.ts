/**
 * The load generator the webhook and flood benchmarks drive servers with.
 * `wrk` where it is installed: written in C, it saturates a bare Bun.serve
 * on two cores where a Bun process making fetch calls does not (a baseline
 * that is not saturated flatters every ratio beside it). wrk cannot sign, so
 * a set of unique signed deliveries is written just before each run and
 * bench/wrk-bodies.lua cycles through it. Without wrk, Bun processes running
 * bench/load.ts stand in, and every row says which generator it came from.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nowSeconds } from "../test/helpers/sign.ts";
import { signedDm } from "./slack-events.ts";

const WRK_SCRIPT = join(import.meta.dir, "wrk-bodies.lua");
const LOAD = join(import.meta.dir, "load.ts");
/** Unique signed deliveries per wrk run; a run cycles through them (enough that no event repeats within a second at bare speed). */
const BODIES = Number(process.env.BENCH_BODIES ?? 50_000);

export interface LoadResult {
  requests: number;
  rps: number;
  /** Latencies in ms. */
  p50: number;
  p99: number;
  /** Requests not answered 200, and socket errors. */
  failed: number;
}

/** How much generator: wrk threads (or Bun processes) and connections in all. */
export interface Capacity {
  threads: number;
  connections: number;
}

export interface Generator {
  /** "wrk" or "bun bench/load.ts", as the rows print it. */
  name: string;
  /** Why this generator, when it is the fallback. */
  note?: string;
  describe(capacity: Capacity): string;
  /** POST signed Slack DMs to `url` for `seconds`, as fast as the capacity allows. */
  run(url: string, load: Load): Promise<LoadResult>;
}

export interface Load {
  secret: string;
  /** The Slack user every message is from. */
  sender: string;
  seconds: number;
  capacity: Capacity;
  /** How many distinct events to cycle through (default: a fresh one per request, as far as the body set goes); 1 sends one event again and again. */
  distinct?: number;
  /** The events' own time (their Slack `ts`), to send again an event delivered before; default: when the run starts. */
  sentAt?: number;
}

/** wrk's path, if it is on PATH. */
export function findWrk(): string | null {
  return Bun.which("wrk");
}

/** wrk with the Lua body set where installed, else Bun generator processes. */
export function chooseGenerator(): Generator {
  const wrk = findWrk();
  return wrk ? wrkGenerator(wrk) : bunGenerator("wrk is not installed (apt install wrk): Bun fetch processes may not saturate the bare server");
}

function wrkGenerator(wrk: string): Generator {
  return {
    name: "wrk",
    describe: (c) => `wrk ${c.threads} thread${c.threads === 1 ? "" : "s"}, ${c.connections} conns`,
    async run(url, { secret, sender, seconds, capacity, distinct = BODIES, sentAt }) {
      const dir = mkdtempSync(join(tmpdir(), "fermix-bench-wrk-"));
      try {
        const file = join(dir, "bodies.tsv");
        // Signed now, so every timestamp is well inside Slack's five-minute window for the whole run.
        const now = nowSeconds();
        const lines: string[] = [];
        for (let i = 0; i < Math.min(distinct, BODIES); i++) {
          const { body, headers } = signedDm(i, sender, secret, now, sentAt ?? now);
          lines.push(`${headers["x-slack-request-timestamp"]}\t${headers["x-slack-signature"]}\t${body}`);
        }
        writeFileSync(file, `${lines.join("\n")}\n`);
        const proc = Bun.spawn(
          [
            wrk,
            `-t${capacity.threads}`,
            `-c${capacity.connections}`,
            `-d${seconds}s`,
            "--timeout",
            "5s",
            "-s",
            WRK_SCRIPT,
            url,
            "--",
            file,
            String(capacity.threads),
          ],
          { stdout: "pipe", stderr: "pipe" },
        );
        const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
        const line = /WRK_JSON (\{.*\})/.exec(out);
        if ((await proc.exited) !== 0 || !line) throw new Error(`wrk failed:\n${out}${err}`);
        const r = JSON.parse(line[1]!) as Record<string, number>;
        const failed = r.connect! + r.read! + r.write! + r.status! + r.timeout!;
        return { requests: r.requests!, rps: r.requests! / (r.duration_us! / 1e6), p50: r.p50_us! / 1000, p99: r.p99_us! / 1000, failed };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Bun processes running bench/load.ts, one per "thread", the connections shared among them. */
export function bunGenerator(note?: string): Generator {
  return {
    name: "bun bench/load.ts",
    ...(note ? { note } : {}),
    describe: (c) => `${c.threads} Bun generator process${c.threads === 1 ? "" : "es"}, ${c.connections} conns`,
    async run(url, { secret, sender, seconds, capacity, distinct, sentAt }) {
      const each = Math.max(1, Math.round(capacity.connections / capacity.threads));
      const runs = await Promise.all(
        Array.from({ length: capacity.threads }, (_, i) =>
          runLoad([
            url,
            secret,
            "--seconds",
            String(seconds),
            "--concurrency",
            String(each),
            "--sender",
            sender,
            // Each process its own events, unless one event is to be sent again and again.
            ...(distinct === undefined ? ["--offset", String(i * 10_000_000)] : ["--distinct", String(distinct)]),
            ...(sentAt === undefined ? [] : ["--sent-at", String(sentAt)]),
          ]),
        ),
      );
      return {
        requests: runs.reduce((n, r) => n + r.requests, 0),
        rps: runs.reduce((n, r) => n + r.rps, 0),
        p50: Math.max(...runs.map((r) => r.p50)),
        p99: Math.max(...runs.map((r) => r.p99)),
        failed: runs.reduce((n, r) => n + r.failed, 0),
      };
    },
  };
}

/** Run bench/load.ts with these arguments in its own process; resolves with its figures. */
export async function runLoad(args: string[]): Promise<LoadResult> {
  const proc = Bun.spawn([process.execPath, LOAD, ...args], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`bench/load.ts ${args.join(" ")} failed`);
  return JSON.parse(out) as LoadResult;
}
