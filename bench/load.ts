/**
 * A load generator run as its own process (so it does not share the server's
 * event loop): POSTs signed Slack direct messages, each unique and signed
 * when it is sent, at a fixed concurrency, either an exact number of them or
 * for a number of seconds; prints its figures as JSON (bench/generator.ts's
 * LoadResult). The flood benchmark uses it where the count must be exact;
 * the webhook benchmark falls back to it where wrk is not installed.
 *
 *   bun bench/load.ts <url> <secret> (--requests N | --seconds S) [--concurrency C] [--sender U] [--offset I] [--distinct D] [--sent-at T]
 *
 * --offset starts the events' numbering there (several processes, no event twice);
 * --distinct D cycles through D events (1: the same event again and again);
 * --sent-at T gives the events that Slack time (Unix seconds; default: when this starts),
 * each delivery still signed when it is sent.
 */
import { parseArgs } from "node:util";
import { nowSeconds } from "../test/helpers/sign.ts";
import { STRANGER, signedDm } from "./slack-events.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: "string" },
    seconds: { type: "string" },
    concurrency: { type: "string", default: "64" },
    sender: { type: "string", default: STRANGER },
    offset: { type: "string", default: "0" },
    distinct: { type: "string" },
    "sent-at": { type: "string" },
  },
});
const [url, secret] = positionals;
if (!url || !secret || (values.requests === undefined) === (values.seconds === undefined)) {
  throw new Error(
    "usage: bun bench/load.ts <url> <secret> (--requests N | --seconds S) [--concurrency C] [--sender U] [--offset I] [--distinct D] [--sent-at T]",
  );
}
const limit = values.requests === undefined ? Number.POSITIVE_INFINITY : Number(values.requests);
const offset = Number(values.offset);
const distinct = values.distinct === undefined ? Number.POSITIVE_INFINITY : Number(values.distinct);
const sentAt = values["sent-at"] === undefined ? nowSeconds() : Number(values["sent-at"]);

const latencies: number[] = [];
let next = 0;
let failed = 0;
const started = performance.now();
const deadline = values.seconds === undefined ? Number.POSITIVE_INFINITY : started + Number(values.seconds) * 1000;
await Promise.all(
  Array.from({ length: Number(values.concurrency) }, async () => {
    while (next < limit && performance.now() < deadline) {
      const { body, headers } = signedDm(offset + (next++ % distinct), values.sender, secret, nowSeconds(), sentAt);
      const t0 = performance.now();
      try {
        const res = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
        await res.arrayBuffer();
        if (res.status !== 200) failed++;
      } catch {
        failed++;
      }
      latencies.push(performance.now() - t0);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    requests: latencies.length,
    rps: latencies.length / seconds,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    failed,
  }),
);
