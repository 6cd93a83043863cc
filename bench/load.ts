/**
 * A load generator run as its own process (so it does not share the server's
 * event loop): POSTs freshly signed Slack event_callback deliveries, each
 * with a unique message, at a fixed concurrency; prints JSON figures.
 *
 *   bun bench/load.ts <url> <secret> <requests> <concurrency>
 */
export {};

const [url, secret, total = "20000", concurrency = "64"] = process.argv.slice(2);
if (!url || !secret) throw new Error("usage: bun bench/load.ts <url> <secret> <requests> <concurrency>");
const requests = Number(total);
const encoder = new TextEncoder();

function signed(i: number): { body: string; headers: Record<string, string> } {
  const ts = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    type: "event_callback",
    team_id: "T1",
    api_app_id: "A1",
    event_id: `EvBench${i}`,
    event_time: ts,
    event: { type: "message", channel: "D0BENCH", channel_type: "im", user: "UNOTALLOWED", text: `message ${i}`, ts: `${ts}.${String(i).padStart(6, "0")}` },
  });
  const signature = new Bun.CryptoHasher("sha256", secret!).update(encoder.encode(`v0:${ts}:${body}`)).digest("hex");
  return {
    body,
    headers: { "content-type": "application/json", "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${signature}` },
  };
}

const latencies: number[] = [];
let next = 0;
let failed = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    for (let i = next++; i < requests; i = next++) {
      const { body, headers } = signed(i);
      const t0 = performance.now();
      const res = await fetch(url, { method: "POST", body, headers });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status !== 200) failed++;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    rps: requests / seconds,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    failed,
  }),
);
