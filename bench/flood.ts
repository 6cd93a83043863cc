/**
 * A flood of strangers, measured from outside the compiled daemon (Slack on,
 * the log at info as a user runs it).
 *
 * Owner latency under the flood: the owner sends a Slack DM every 0.5 s and
 * each is timed from its webhook POST to the reply's arrival on the Slack
 * fake (instant model), first without a flood, then while a stranger floods
 * /webhook/slack with signed events at the generator's full rate
 * (bench/generator.ts), then without again; the p50 and p99 under the flood
 * are printed beside those of the two quiet phases together.
 *
 * What a flood leaves behind: the sizes of fermix.db and its WAL before and
 * after exactly 100,000 signed events from a stranger (bench/load.ts: every
 * one answered 200, each a new event), and the WAL's size some seconds later.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { reply, userText } from "../test/fakes/model-server.ts";
import { SLACK_ALICE } from "../test/fakes/slack.ts";
import { signSlack } from "../test/helpers/sign.ts";
import { type Fixture, SLACK_SIGNING_SECRET, startFixture } from "./fixture.ts";
import { type Capacity, chooseGenerator, runLoad } from "./generator.ts";
import { drain, firstOk, freePort, printFigure, quantile } from "./lib.ts";
import { STRANGER } from "./slack-events.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
/** Owner messages per phase, one every INTERVAL_MS. */
const MESSAGES = Number(process.env.BENCH_OWNER_MESSAGES ?? 60);
/**
 * One wrk thread at its full rate (~20,000 signed webhooks/s here, more than twice what a leaked app
 * was measured sending). Two threads on a 2-core machine leave the daemon, the fakes that stand in
 * for Slack and the model, and the timing itself fighting wrk for the cores: the owner's latency
 * would then measure the machine rather than Fermix.
 */
const FLOOD: Capacity = { threads: 1, connections: 64 };
const INTERVAL_MS = 500;
/** The flood runs this long before the owner's first message and after the last. */
const LEAD_MS = 1000;
const STRANGER_EVENTS = Number(process.env.BENCH_STRANGER_EVENTS ?? 100_000);
/** How long after the flood the WAL is measured again. */
const SETTLE_MS = 5000;
const CONVERSATIONS = 5;
const KB = 1024;

let sent = 0;

/** One owner DM, timed from its webhook POST to the reply's arrival on the Slack fake, in ms. */
async function ownerTurn(fixture: Fixture, webhook: string): Promise<number> {
  const marker = `owner ${sent++}`;
  const channel = `D0OWNER${String(sent % CONVERSATIONS).padStart(4, "0")}`;
  const body = JSON.stringify(fixture.slack.events.dm(`${marker}: still there?`, { channel, user: SLACK_ALICE }));
  const headers = { "content-type": "application/json", ...signSlack(body, SLACK_SIGNING_SECRET, Math.floor(Date.now() / 1000)) };
  const t0 = performance.now();
  const res = await fetch(webhook, { method: "POST", body, headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`the owner's webhook was answered ${res.status}`);
  const send = await fixture.slack.waitForCall(
    "chat.postMessage",
    (r) => r.body.channel === channel && String(r.body.text ?? "").includes(`ok ${marker}`) && r.arrivedPerf > t0,
    30_000,
  );
  return send.arrivedPerf - t0;
}

/** MESSAGES owner turns, one started every INTERVAL_MS whether or not the one before is answered. */
async function ownerPhase(fixture: Fixture, webhook: string): Promise<number[]> {
  const start = performance.now();
  const turns: Array<Promise<number>> = [];
  for (let i = 0; i < MESSAGES; i++) {
    await Bun.sleep(Math.max(0, start + i * INTERVAL_MS - performance.now()));
    turns.push(ownerTurn(fixture, webhook));
  }
  return Promise.all(turns);
}

/** fermix.db and its WAL, in KiB (a file not there yet counts 0). */
function databaseKiB(home: string): { db: number; wal: number } {
  const size = (path: string) => {
    try {
      return statSync(path).size / KB;
    } catch {
      return 0;
    }
  };
  return { db: size(join(home, "fermix.db")), wal: size(join(home, "fermix.db-wal")) };
}

const lineCount = (text: string) => text.split("\n").filter((line) => line.trim() !== "").length;

export async function benchFlood(): Promise<void> {
  const generator = chooseGenerator();
  if (generator.note) console.log(`  generator: ${generator.name} — ${generator.note}`);
  const fixture = await startFixture({ channels: ["slack"], logLevel: "info" });
  // Each reply names the message it answers, so its platform send can be told apart from the others.
  fixture.model.fallback((request) => reply.text(`ok ${/owner \d+/.exec(userText(request))?.[0] ?? "?"}`));
  const port = freePort();
  const daemon = Bun.spawn([BINARY, "run"], { env: { ...fixture.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
  const logs = drain(daemon.stderr);
  try {
    const base = `http://127.0.0.1:${port}`;
    const webhook = `${base}/webhook/slack`;
    await firstOk(`${base}/health/ready`);
    // Warm-up: a few turns, and a short flood, so no phase pays for the first compilation of its path.
    for (let i = 0; i < 5; i++) await ownerTurn(fixture, webhook);
    await generator.run(webhook, { secret: SLACK_SIGNING_SECRET, sender: STRANGER, seconds: 2, capacity: FLOOD });

    const quietBefore = await ownerPhase(fixture, webhook);
    const logBefore = lineCount(logs());
    const flood = generator.run(webhook, {
      secret: SLACK_SIGNING_SECRET,
      sender: STRANGER,
      seconds: Math.ceil((2 * LEAD_MS + MESSAGES * INTERVAL_MS) / 1000),
      capacity: FLOOD,
    });
    await Bun.sleep(LEAD_MS);
    const flooded = await ownerPhase(fixture, webhook);
    const floodResult = await flood;
    const floodLogLines = lineCount(logs()) - logBefore;
    const quietAfter = await ownerPhase(fixture, webhook);
    const quiet = [...quietBefore, ...quietAfter];
    for (const [q, label] of [
      [0.5, "p50"],
      [0.99, "p99"],
    ] as const) {
      printFigure({
        name: `owner's reply end to end, ${label}, under a stranger's flood (${MESSAGES} msgs)`,
        value: quantile(flooded, q),
        baseline: quantile(quiet, q),
        baselineName: `no flood (${quiet.length} msgs)`,
        unit: "ms",
        lowerIsBetter: true,
        ...(label === "p99" ? { target: { bound: 2 } } : {}),
      });
    }
    console.log(
      `  the flood: ${Math.round(floodResult.rps)} signed stranger webhooks/s (${generator.describe(FLOOD)}), ${floodResult.requests} in all, ` +
        `${floodResult.failed} not answered 200; ${floodLogLines} log line(s) written meanwhile`,
    );

    // What 100,000 refused events leave on disk. First let the checkpoint timer catch up with the owner's turns.
    await Bun.sleep(SETTLE_MS);
    const before = databaseKiB(fixture.home);
    const strangers = await runLoad([webhook, SLACK_SIGNING_SECRET, "--requests", String(STRANGER_EVENTS), "--concurrency", "64", "--offset", "100000000"]);
    const after = databaseKiB(fixture.home);
    if (strangers.failed > 0) console.log(`  (${strangers.failed} of ${STRANGER_EVENTS} stranger events were not answered 200)`);
    printFigure({
      name: `fermix.db + WAL after ${STRANGER_EVENTS} refused stranger events`,
      value: after.db + after.wal,
      baseline: before.db + before.wal,
      baselineName: "before them",
      unit: "KiB",
      lowerIsBetter: true,
      target: { on: "growth", bound: KB },
    });
    await Bun.sleep(SETTLE_MS);
    printFigure({
      name: `WAL ${SETTLE_MS / 1000} s after the flood`,
      value: databaseKiB(fixture.home).wal,
      baseline: before.wal,
      baselineName: "before it",
      unit: "KiB",
      lowerIsBetter: true,
    });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs().slice(-4000)}`);
  } finally {
    daemon.kill("SIGTERM");
    await daemon.exited;
    await fixture.stop();
  }
}
