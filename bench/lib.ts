/**
 * Benchmark reporting: every figure is printed beside a baseline measured in
 * the same run, with their ratio. Benchmarks never assert; machines are noisy.
 */
import { readFileSync } from "node:fs";

export interface Target {
  /** What the bound applies to: the ratio to the baseline (default), the figure itself, or how much it grew from the baseline (both in its unit). */
  on?: "ratio" | "value" | "growth";
  /** At most this when lower is better, at least this when higher is better. */
  bound: number;
}

export interface Figure {
  /** What was measured, e.g. "cold start: dist/fermix --version". */
  name: string;
  value: number;
  baseline: number;
  /** What the baseline is, e.g. "bare bun -e ''". */
  baselineName: string;
  unit: string;
  /** When smaller is better (time, memory), the ratio reads value/baseline; else the same, and the reader knows. */
  lowerIsBetter: boolean;
  /** A target from docs/performance.md: printed beside the figure as met or not met, and again in the closing list. */
  target?: Target;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));

interface Verdict {
  name: string;
  reading: string;
  target: string;
  verdict: string;
}
/** Every target printed in this run, in order, for printTargets. */
const verdicts: Verdict[] = [];

function describeTarget(f: Figure, target: Target): string {
  const sign = f.lowerIsBetter ? "≤" : "≥";
  if (target.on === "growth") return `growth ${sign} ${fmt(target.bound)} ${f.unit}`;
  return target.on === "value" ? `${sign} ${fmt(target.bound)} ${f.unit}` : `${sign} ${target.bound.toFixed(2)}x`;
}

/** The figure a target reads, and how it is printed. */
function targetReading(f: Figure, target: Target, ratio: number): [number, string] {
  if (target.on === "growth") return [f.value - f.baseline, `+${fmt(f.value - f.baseline)} ${f.unit}`];
  if (target.on === "value") return [f.value, `${fmt(f.value)} ${f.unit}`];
  return [ratio, `${ratio.toFixed(2)}x`];
}

export function printFigure(f: Figure): void {
  const ratio = f.baseline === 0 ? Number.NaN : f.value / f.baseline;
  let targetText = "";
  if (f.target) {
    const [reading, readingText] = targetReading(f, f.target, ratio);
    const met = f.lowerIsBetter ? reading <= f.target.bound : reading >= f.target.bound;
    const verdict = Number.isNaN(reading) ? "not measured" : met ? "met" : "NOT MET";
    targetText = ` | target ${describeTarget(f, f.target)}: ${verdict}`;
    verdicts.push({
      name: f.name,
      reading: readingText,
      target: describeTarget(f, f.target),
      verdict,
    });
  }
  console.log(
    `${f.name.padEnd(66)} ${fmt(f.value).padStart(9)} ${f.unit.padEnd(7)} | ${f.baselineName}: ${fmt(f.baseline)} ${f.unit} | ratio ${ratio.toFixed(2)}x ${f.lowerIsBetter ? "(lower is better)" : "(higher is better)"}${targetText}`,
  );
}

/** The closing list: each target printed in this run, its reading and whether it was met. */
export function printTargets(): void {
  if (verdicts.length === 0) return;
  console.log("\n== targets");
  for (const v of verdicts) console.log(`${v.name.trim().padEnd(66)} ${v.reading.padStart(12)}  target ${v.target.padEnd(10)} ${v.verdict}`);
}

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A quantile (0..1) of a list of numbers. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** CPU time (user + system) a process has used so far, in seconds; NaN where /proc is not there (macOS). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process in MiB, from ps (works on Linux and macOS). */
export function rssMiB(pid: number): number {
  return (
    Number(
      Bun.spawnSync(["ps", "-o", "rss=", "-p", String(pid)])
        .stdout.toString()
        .trim(),
    ) / 1024
  );
}

/** A free loopback port (bound and released; the benchmark passes it as PORT so it can poll before the log says so). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Read `stream` until `pattern` matches, then keep draining it in the background so the child never blocks on a full pipe. */
export async function waitForLine(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<RegExpExecArray> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process ended before printing ${pattern}:\n${text}`);
    text += decoder.decode(value);
    const match = pattern.exec(text);
    if (match) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })();
      return match;
    }
  }
}

/** Drain a child's pipe so it never blocks on a full buffer; returns everything read when asked. */
export function drain(stream: ReadableStream<Uint8Array>): () => string {
  let text = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk);
  })();
  return () => text;
}

/**
 * Poll `url` every millisecond until it returns 200; resolves with
 * performance.now() at that answer. The figure's granularity is about a
 * millisecond, the same for every server polled; polling faster only takes
 * CPU from the process being measured (both share two cores).
 */
export async function firstOk(url: string, timeoutMs = 15_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now();
    } catch {}
    await Bun.sleep(1);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

const bareBinaries = new Map<string, Promise<string>>();

/**
 * A baseline program compiled into a standalone binary with the same Bun.build
 * options as dist/fermix (minified, bytecode, compiled for this machine), so
 * the baseline pays what the runtime itself costs and nothing of Fermix.
 * Built once per bench run into a temporary directory.
 */
export function compileBare(name: string, source: string): Promise<string> {
  const cached = bareBinaries.get(name);
  if (cached) return cached;
  const built = (async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), `fermix-bench-${name}-`));
    const entry = join(dir, `${name}.ts`);
    writeFileSync(entry, source);
    const outfile = join(dir, name);
    const result = await Bun.build({
      entrypoints: [entry],
      minify: true,
      bytecode: true,
      sourcemap: "none",
      compile: { target: `bun-${process.platform}-${process.arch}` as Bun.Build.CompileTarget, outfile, autoloadDotenv: false, autoloadBunfig: false },
    });
    if (!result.success) throw new Error(result.logs.map(String).join("\n"));
    return outfile;
  })();
  bareBinaries.set(name, built);
  return built;
}

/** A bare Bun.serve answering 200 to everything, on PORT (0: any), printing its URL on stdout once listening. */
export const BARE_SERVE = `const s = Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.PORT ?? 0), fetch: async (r) => { await r.arrayBuffer(); return new Response('{"ok":true}'); } });
console.log(s.url.href);
`;
