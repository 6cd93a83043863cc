/**
 * Signed Slack webhook throughput of the compiled daemon beside a bare
 * compiled Bun.serve answering 200, both driven by the same load generator
 * in its own process (bench/generator.ts: wrk with a body set of unique
 * signed events where installed). The generator must not be the limit, or
 * the baseline is low and every ratio beside it flatters: the bare server is
 * also driven with twice the generator (threads and connections), and that
 * row should read about 1.00x or less. Each run lasts BENCH_SECONDS (≥ 8 s);
 * each round runs bare, Fermix, bare, so drift on a shared machine falls on
 * both sides; the round with the median Fermix/bare ratio is printed. Also the daemon's RSS
 * before and after. Slack's Web API is the loopback fake: nothing leaves
 * 127.0.0.1.
 */
import { join } from "node:path";
import { SLACK_ALICE } from "../test/fakes/slack.ts";
import { nowSeconds } from "../test/helpers/sign.ts";
import { SLACK_SIGNING_SECRET, startFixture } from "./fixture.ts";
import { type Capacity, chooseGenerator, type Load, type LoadResult } from "./generator.ts";
import { BARE_SERVE, compileBare, cpuSeconds, drain, firstOk, freePort, median, printFigure, rssMiB, waitForLine } from "./lib.ts";
import { STRANGER, signedDm } from "./slack-events.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const GENERATOR_PAIRS = 3;
/** The generator every figure is measured with, and twice that, to show it is not the limit. */
export const GENERATOR: Capacity = { threads: 2, connections: 128 };
const DOUBLE: Capacity = { threads: GENERATOR.threads * 2, connections: GENERATOR.connections * 2 };

interface Rounds {
  bare: number[];
  fermix: LoadResult[];
  bareP99: number[];
  /** CPU each server used while driven, in cores (1.00: one core all the time). */
  bareCores: number[];
  fermixCores: number[];
}

interface Server {
  url: string;
  pid: number;
}

/** One run against `server`, with the CPU it used meanwhile. */
async function measured(server: Server, run: (url: string) => Promise<LoadResult>): Promise<[LoadResult, number]> {
  const cpu = cpuSeconds(server.pid);
  const t0 = performance.now();
  const result = await run(server.url);
  return [result, (cpuSeconds(server.pid) - cpu) / ((performance.now() - t0) / 1000)];
}

/** ROUNDS of bare, Fermix, bare; a round's bare figure is the mean of its two runs. */
async function rounds(bare: Server, daemon: Server, run: (url: string) => Promise<LoadResult>): Promise<Rounds> {
  const result: Rounds = { bare: [], fermix: [], bareP99: [], bareCores: [], fermixCores: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const [before, beforeCores] = await measured(bare, run);
    const [fermix, fermixCores] = await measured(daemon, run);
    const [after, afterCores] = await measured(bare, run);
    result.fermix.push(fermix);
    result.fermixCores.push(fermixCores);
    result.bare.push((before.rps + after.rps) / 2);
    result.bareP99.push((before.p99 + after.p99) / 2);
    result.bareCores.push((beforeCores + afterCores) / 2);
  }
  return result;
}

/** Whether each server had a core to itself: below ~0.9 the machine (other work, the generator) was short of CPU. */
function printCores(r: Rounds): void {
  if (r.bareCores.some(Number.isNaN)) return;
  console.log(`  CPU used while driven (median): Fermix ${median(r.fermixCores).toFixed(2)} cores, bare ${median(r.bareCores).toFixed(2)} cores`);
}

/**
 * The round whose Fermix/bare ratio is the median of all rounds. A ratio per round (Fermix beside the
 * bare runs just before and after it) cancels the drift of a shared machine; medians of the absolute
 * figures taken separately would pair a fast bare run with a slow Fermix one.
 */
function medianRound(r: Rounds): { fermix: number; bare: number; ratios: string } {
  const ratios = r.fermix.map((f, i) => f.rps / r.bare[i]!);
  const order = ratios.map((_, i) => i).sort((a, b) => ratios[a]! - ratios[b]!);
  const i = order[Math.floor(order.length / 2)]!;
  return { fermix: r.fermix[i]!.rps, bare: r.bare[i]!, ratios: ratios.map((x) => x.toFixed(2)).join(", ") };
}

function failures(runs: LoadResult[]): number {
  return runs.reduce((n, r) => n + r.failed, 0);
}

export async function benchWebhook(): Promise<void> {
  const generator = chooseGenerator();
  if (generator.note) console.log(`  generator: ${generator.name} — ${generator.note}`);
  // Only Slack on.
  const fixture = await startFixture({ channels: ["slack"] });
  const port = freePort();
  const bare = Bun.spawn([await compileBare("bare-serve", BARE_SERVE)], { env: { PORT: "0" }, stdout: "pipe", stderr: "inherit" });
  const daemon = Bun.spawn([BINARY, "run"], { env: { ...fixture.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
  const logs = drain(daemon.stderr);
  try {
    const bareUrl = new URL("/x", (await waitForLine(bare.stdout, /(http:\/\/\S+)/))[1]!).href;
    const base = `http://127.0.0.1:${port}`;
    const webhookUrl = `${base}/webhook/slack`;
    await firstOk(`${base}/health/ready`);
    const stranger = (capacity: Capacity, seconds = SECONDS): Load => ({ secret: SLACK_SIGNING_SECRET, sender: STRANGER, seconds, capacity });
    // Warm both up first (JIT, caches, connection buffers), so "before" is a warm daemon at rest.
    await generator.run(bareUrl, stranger(GENERATOR, 2));
    await generator.run(webhookUrl, stranger(GENERATOR, 2));
    await Bun.sleep(3000);
    const rssBefore = rssMiB(daemon.pid);

    // The stranger's DMs: verified, parsed, refused before anything is recorded, answered 200 (Slack expects it).
    const bareServer = { url: bareUrl, pid: bare.pid };
    const daemonServer = { url: webhookUrl, pid: daemon.pid };
    const refused = await rounds(bareServer, daemonServer, (url) => generator.run(url, stranger(GENERATOR)));
    const refusedRound = medianRound(refused);
    // The generator's own check: the bare server driven with the generator and with twice it, alternately,
    // GENERATOR_PAIRS times; the pair with the median ratio is printed.
    const pairs: Array<{ single: number; double: number }> = [];
    for (let pair = 0; pair < GENERATOR_PAIRS; pair++) {
      const single = await generator.run(bareUrl, stranger(GENERATOR));
      const double = await generator.run(bareUrl, stranger(DOUBLE));
      pairs.push({ single: single.rps, double: double.rps });
    }
    pairs.sort((a, b) => a.double / a.single - b.double / b.single);
    const pair = pairs[Math.floor(pairs.length / 2)]!;
    printFigure({
      name: `bare Bun.serve 200 under twice the generator (${generator.describe(DOUBLE)}, median of ${GENERATOR_PAIRS} pairs)`,
      value: pair.double,
      baseline: pair.single,
      baselineName: `${generator.describe(GENERATOR)}`,
      unit: "req/s",
      lowerIsBetter: false,
    });
    console.log(`  ratio in each pair: ${pairs.map((p) => (p.double / p.single).toFixed(2)).join(", ")}`);
    if (pair.double > pair.single * 1.05) console.log("  (more generator raised the bare figure: the generator may be the limit on this machine)");
    if (failures(refused.fermix) > 0) console.log(`  (${failures(refused.fermix)} webhook requests were not answered 200 or failed)`);
    printFigure({
      name: `signed Slack webhooks/s, stranger's DMs, refused (${SECONDS} s, median of ${ROUNDS} rounds)`,
      value: refusedRound.fermix,
      baseline: refusedRound.bare,
      baselineName: "bare compiled Bun.serve 200",
      unit: "req/s",
      lowerIsBetter: false,
      target: { bound: 0.5 },
    });
    printFigure({
      name: "  p99 latency, same runs",
      value: median(refused.fermix.map((r) => r.p99)),
      baseline: median(refused.bareP99),
      baselineName: "bare compiled Bun.serve 200",
      unit: "ms",
      lowerIsBetter: true,
    });
    console.log(`  ratio in each round: ${refusedRound.ratios}`);
    printCores(refused);

    // The owner's DM delivered again and again (a platform's retries): verified, parsed, admitted and
    // found in the de-duplication keys in a group commit — the recorded path, short of a turn.
    const sentAt = nowSeconds();
    const first = signedDm(0, SLACK_ALICE, SLACK_SIGNING_SECRET, sentAt);
    const res = await fetch(webhookUrl, { method: "POST", body: first.body, headers: { "content-type": "application/json", ...first.headers } });
    if (res.status !== 200) throw new Error(`the owner's first delivery was answered ${res.status}`);
    await fixture.slack.waitForCall("chat.postMessage", undefined, 10_000);
    const redelivered = await rounds(bareServer, daemonServer, (url) =>
      generator.run(url, { secret: SLACK_SIGNING_SECRET, sender: SLACK_ALICE, seconds: SECONDS, capacity: GENERATOR, distinct: 1, sentAt }),
    );
    if (failures(redelivered.fermix) > 0) console.log(`  (${failures(redelivered.fermix)} redeliveries were not answered 200 or failed)`);
    const redeliveredRound = medianRound(redelivered);
    printFigure({
      name: `signed Slack webhooks/s, the owner's DM redelivered (de-duplicated)`,
      value: redeliveredRound.fermix,
      baseline: redeliveredRound.bare,
      baselineName: "bare compiled Bun.serve 200",
      unit: "req/s",
      lowerIsBetter: false,
    });
    console.log(`  ratio in each round: ${redeliveredRound.ratios}`);
    printCores(redelivered);
    const turns = fixture.model.requests.length;
    if (turns !== 1) console.log(`  (the model was asked ${turns} times for one owner message: a redelivery was not de-duplicated)`);

    // Memory must come back down, not grow with the number of requests: another run of the same
    // length must leave the settled RSS where the rounds left it.
    await Bun.sleep(5000);
    const rssAfterRounds = rssMiB(daemon.pid);
    const again = await generator.run(webhookUrl, stranger(GENERATOR));
    await Bun.sleep(5000);
    const rssAfterAgain = rssMiB(daemon.pid);
    const total = [...refused.fermix, ...redelivered.fermix].reduce((n, r) => n + r.requests, 0);
    printFigure({
      name: `daemon RSS settled after ${total} webhooks`,
      value: rssAfterRounds,
      baseline: rssBefore,
      baselineName: "warm, before",
      unit: "MiB",
      lowerIsBetter: true,
    });
    printFigure({
      name: `daemon RSS settled after ${again.requests} more`,
      value: rssAfterAgain,
      baseline: rssAfterRounds,
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
