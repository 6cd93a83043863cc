/**
 * `bun run bench`: prints figures beside baselines measured in the same run.
 * Nothing here asserts; compare ratios across runs, not absolute numbers.
 * Nothing leaves 127.0.0.1: every platform and the model are loopback fakes.
 *
 *   bun bench/index.ts [suite …]   only the named suites: startup, webhook, flood, turn, size, present
 *   BENCH_PROVIDER_API=anthropic bun bench/index.ts startup turn
 *                                  the daemon's provider speaks that API (default chat)
 *
 * Each row with a target (docs/performance.md) says whether it is met, and
 * the run ends with the list of them.
 */
import { benchFlood } from "./flood.ts";
import { printTargets } from "./lib.ts";
import { benchPresent } from "./present.ts";
import { benchSize } from "./size.ts";
import { benchStartup } from "./startup.ts";
import { benchTurn } from "./turn.ts";
import { benchWebhook } from "./webhook.ts";

const suites: Array<[string, string, () => Promise<void>]> = [
  ["startup", "startup and memory", benchStartup],
  ["webhook", "webhook ingress", benchWebhook],
  ["flood", "a flood of strangers: the owner's latency, and what it leaves behind", benchFlood],
  ["turn", "one turn: webhook in → model → platform send", benchTurn],
  ["size", "download size", benchSize],
  ["present", "presentation: split and render", benchPresent],
];

const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!suites.some(([key]) => key === name)) throw new Error(`unknown suite "${name}"; known: ${suites.map(([key]) => key).join(", ")}`);
}
for (const [key, title, run] of suites) {
  if (chosen.length > 0 && !chosen.includes(key)) continue;
  console.log(`\n== ${title}`);
  await run();
}
printTargets();
