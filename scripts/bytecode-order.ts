/**
 * `bun run bytecode-order`: record which compiled functions Fermix uses, for
 * build.ts's profile-guided bytecode layout (Bun's `bytecodeOrder`). The
 * bytecode a recorded run used is placed together at the front of the
 * binary, so a start reads fewer pages of it: about 4 MB less resident
 * memory for an idle daemon, nothing else changed. A recording from an older
 * build still applies (functions are matched by content); one that has gone
 * stale only lays out less well. Record again after large changes.
 *
 * Recorded, most common first:
 *   scripts/bytecode-order/run.order   `fermix run` with a provider and every channel
 *                                      (Telegram, Slack, WhatsApp, Discord, Signal, ACP) on
 *                                      against the loopback fakes, to ready, one Slack turn
 *                                      answered, then SIGTERM
 *   scripts/bytecode-order/cli.order   `fermix --version`
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { SIX_CHANNELS, SLACK_SIGNING_SECRET, startFixture } from "../bench/fixture.ts";
import { drain, firstOk, freePort } from "../bench/lib.ts";
import { SLACK_ALICE } from "../test/fakes/slack.ts";
import { signSlack } from "../test/helpers/sign.ts";

const ROOT = resolve(import.meta.dir, "..");
const OUT = join(ROOT, "scripts", "bytecode-order");
const BINARY = join(ROOT, "dist", "fermix");
mkdirSync(OUT, { recursive: true });

const build = Bun.spawnSync([process.execPath, "build.ts"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
if (build.exitCode !== 0) process.exit(1);

const fixture = await startFixture({ channels: SIX_CHANNELS });
try {
  const port = freePort();
  const daemon = Bun.spawn([BINARY, "run"], {
    env: { ...fixture.env, PORT: String(port), BUN_BYTECODE_ORDER_OUT: join(OUT, "run.order") },
    stdout: "ignore",
    stderr: "pipe",
  });
  const logs = drain(daemon.stderr);
  const base = `http://127.0.0.1:${port}`;
  await firstOk(`${base}/health/ready`);
  const body = JSON.stringify(fixture.slack.events.dm("hello, what can you do?", { user: SLACK_ALICE }));
  const res = await fetch(`${base}/webhook/slack`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...signSlack(body, SLACK_SIGNING_SECRET, Math.floor(Date.now() / 1000)) },
  });
  if (res.status !== 200) throw new Error(`the webhook answered ${res.status}:\n${logs()}`);
  await fixture.slack.waitForCall("chat.postMessage", undefined, 10_000);
  daemon.kill("SIGTERM");
  if ((await daemon.exited) !== 0) throw new Error(`fermix run did not stop cleanly:\n${logs()}`);
  const version = Bun.spawnSync([BINARY, "--version"], { env: { ...fixture.env, BUN_BYTECODE_ORDER_OUT: join(OUT, "cli.order") } });
  if (version.exitCode !== 0) throw new Error("fermix --version failed");
  console.log(`recorded ${join("scripts", "bytecode-order", "run.order")} and cli.order; run \`bun run build\` to use them`);
} finally {
  await fixture.stop();
}
