/**
 * One turn's latency through the compiled daemon, beside three bare loopback
 * hops. A signed Slack DM goes to /webhook/slack; the instant fake model
 * answers at once; the reply lands on the Slack fake. Per turn:
 *
 *   inbound   webhook POST sent        → the model request arrives
 *   outbound  the model reply written  → the platform send arrives
 *   whole     webhook POST sent        → the platform send arrives
 *
 * The baseline is the same shape with nothing in it: a bare compiled
 * Bun.serve answers the webhook 200, then POSTs to a bare "model", reads its
 * answer, and POSTs to a bare "platform" — three loopback hops. Every clock is
 * this process's performance.now() (the fakes run here), so the figures need
 * no clock agreement between processes. Turns run one after another; they
 * rotate over a few DM conversations so each keeps a short, realistic history.
 *
 * BENCH_REFERENCE=<another dist/fermix> also runs that build, in alternating
 * halves with this one, and compares their p50s.
 */
import { join } from "node:path";
import { reply, userText } from "../test/fakes/model-server.ts";
import { SLACK_ALICE } from "../test/fakes/slack.ts";
import { signSlack } from "../test/helpers/sign.ts";
import { SLACK_SIGNING_SECRET, startFixture } from "./fixture.ts";
import { compileBare, drain, firstOk, freePort, printFigure, quantile, waitForLine } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const TURNS = Number(process.env.BENCH_TURNS ?? 200);
const WARMUP = 20;
const CONVERSATIONS = 10;
/**
 * Another build of dist/fermix to run in the same bench (e.g. one built from the commit those
 * figures were recorded at): the turn's p50 is then compared with it, which no machine's load skews.
 */
const REFERENCE = process.env.BENCH_REFERENCE;

interface Sample {
  inbound: number;
  outbound: number;
  whole: number;
}

const BARE_RELAY = `const model = process.env.MODEL_URL, platform = process.env.PLATFORM_URL;
const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (r) => {
  const body = await r.text();
  queueMicrotask(async () => {
    const answer = await (await fetch(model, { method: "POST", body, headers: { "content-type": "application/json" } })).text();
    await (await fetch(platform, { method: "POST", body: answer, headers: { "content-type": "application/json" } })).text();
  });
  return new Response('{"ok":true}', { headers: { "content-type": "application/json" } });
} });
console.log(s.url.href);
`;

/** The three bare hops: a relay process, and a model and a platform served here. */
async function bareHops(turns: number): Promise<Sample[]> {
  let modelArrived = 0;
  let modelWritten = 0;
  let sent: (at: number) => void = () => {};
  const model = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      modelArrived = performance.now();
      await req.text();
      const res = new Response('data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: [DONE]\n\n', { headers: { "content-type": "text/event-stream" } });
      modelWritten = performance.now();
      return res;
    },
  });
  const platform = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const at = performance.now();
      await req.text();
      sent(at);
      return Response.json({ ok: true });
    },
  });
  const relay = Bun.spawn([await compileBare("bare-relay", BARE_RELAY)], {
    env: { MODEL_URL: `http://127.0.0.1:${model.port}/v1/chat/completions`, PLATFORM_URL: `http://127.0.0.1:${platform.port}/api/chat.postMessage` },
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const url = (await waitForLine(relay.stdout, /(http:\/\/\S+)/))[1]!;
    const samples: Sample[] = [];
    for (let i = 0; i < WARMUP + turns; i++) {
      const arrived = new Promise<number>((resolve) => (sent = resolve));
      const t0 = performance.now();
      const res = await fetch(url, { method: "POST", body: JSON.stringify({ text: `turn ${i}` }), headers: { "content-type": "application/json" } });
      await res.arrayBuffer();
      const at = await arrived;
      if (i >= WARMUP) samples.push({ inbound: modelArrived - t0, outbound: at - modelWritten, whole: at - t0 });
    }
    return samples;
  } finally {
    relay.kill();
    await relay.exited;
    await Promise.all([model.stop(true), platform.stop(true)]);
  }
}

/** N turns through the daemon `binary`: Slack DM in, instant model, reply out on the Slack fake. */
async function daemonTurns(binary: string, turns: number): Promise<Sample[]> {
  const fixture = await startFixture({ channels: ["slack"] });
  // Each reply names the turn it answers, so its platform send can be told apart from the others.
  fixture.model.fallback((request) => reply.text(`ok ${/turn \d+/.exec(userText(request))?.[0] ?? "?"}`));
  const port = freePort();
  const daemon = Bun.spawn([binary, "run"], { env: { ...fixture.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
  const logs = drain(daemon.stderr);
  try {
    const base = `http://127.0.0.1:${port}`;
    await firstOk(`${base}/health/ready`);
    const samples: Sample[] = [];
    for (let i = 0; i < WARMUP + turns; i++) {
      const marker = `turn ${i}`;
      const channel = `D0BENCH${String(i % CONVERSATIONS).padStart(4, "0")}`;
      const body = JSON.stringify(fixture.slack.events.dm(`${marker}: how are you?`, { channel, user: SLACK_ALICE }));
      const headers = { "content-type": "application/json", ...signSlack(body, SLACK_SIGNING_SECRET, Math.floor(Date.now() / 1000)) };
      const t0 = performance.now();
      const res = await fetch(`${base}/webhook/slack`, { method: "POST", body, headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
      const send = await fixture.slack.waitForCall(
        "chat.postMessage",
        (r) => r.body.channel === channel && String(r.body.text ?? "").includes(`ok ${marker}`) && r.arrivedPerf > t0,
        10_000,
      );
      const request = fixture.model.requests.find((r) => userText(r).includes(`${marker}:`));
      if (!request?.writtenPerf) throw new Error(`no model reply recorded for ${marker}`);
      if (i >= WARMUP) samples.push({ inbound: request.arrivedPerf - t0, outbound: send.arrivedPerf - request.writtenPerf, whole: send.arrivedPerf - t0 });
    }
    return samples;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs()}`);
  } finally {
    daemon.kill("SIGTERM");
    await daemon.exited;
    await fixture.stop();
  }
}

export async function benchTurn(): Promise<void> {
  const bare = await bareHops(TURNS);
  const fermix: Sample[] = [];
  const reference: Sample[] = [];
  if (REFERENCE) {
    // Alternate halves, so a change in the machine's load falls on both binaries.
    for (let half = 0; half < 2; half++) {
      fermix.push(...(await daemonTurns(BINARY, TURNS / 2)));
      reference.push(...(await daemonTurns(REFERENCE, TURNS / 2)));
    }
  } else {
    fermix.push(...(await daemonTurns(BINARY, TURNS)));
    // The ratio to the bare hops moves with the machine (10x one week, 17x the next for one build), so
    // "no worse than before" is only read beside an older build run here.
    console.log("  (no BENCH_REFERENCE: the turn's target, within 10% of an older build's p50, is read only beside one run in this bench)");
  }
  const pick = (samples: Sample[], key: keyof Sample, q: number) =>
    quantile(
      samples.map((s) => s[key]),
      q,
    );
  if (REFERENCE) {
    printFigure({
      name: "one turn, p50, this build beside the reference build",
      value: pick(fermix, "whole", 0.5),
      baseline: pick(reference, "whole", 0.5),
      baselineName: "the reference build (BENCH_REFERENCE)",
      unit: "ms",
      lowerIsBetter: true,
      target: { bound: 1.1 },
    });
    printFigure({
      name: "  the reference build's p50, beside the bare hops",
      value: pick(reference, "whole", 0.5),
      baseline: pick(bare, "whole", 0.5),
      baselineName: "three bare loopback hops",
      unit: "ms",
      lowerIsBetter: true,
    });
  }
  for (const [q, label] of [
    [0.5, "p50"],
    [0.9, "p90"],
  ] as const) {
    printFigure({
      name: `one turn, instant model, webhook in → Slack send, ${label}`,
      value: pick(fermix, "whole", q),
      baseline: pick(bare, "whole", q),
      baselineName: "three bare loopback hops",
      unit: "ms",
      lowerIsBetter: true,
    });
    printFigure({
      name: `  inbound: webhook in → model request, ${label}`,
      value: pick(fermix, "inbound", q),
      baseline: pick(bare, "inbound", q),
      baselineName: "bare hops 1+2",
      unit: "ms",
      lowerIsBetter: true,
    });
    printFigure({
      name: `  outbound: model done → platform send, ${label}`,
      value: pick(fermix, "outbound", q),
      baseline: pick(bare, "outbound", q),
      baselineName: "bare hop 3",
      unit: "ms",
      lowerIsBetter: true,
    });
  }
}
