/**
 * `bun run bench`: prints figures beside baselines measured in the same run.
 * Nothing here asserts; compare ratios across runs, not absolute numbers.
 */
import { benchPresent } from "./present.ts";
import { benchStartup } from "./startup.ts";
import { benchWebhook } from "./webhook.ts";

const suites: Array<[string, () => Promise<void>]> = [
  ["startup and memory", benchStartup],
  ["webhook ingress", benchWebhook],
  ["presentation: split and render", benchPresent],
];

for (const [name, run] of suites) {
  console.log(`\n== ${name}`);
  await run();
}
