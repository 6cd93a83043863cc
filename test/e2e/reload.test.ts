/**
 * A running daemon takes a new config without a restart: SIGHUP (or the
 * control socket's `reload`) re-reads config.toml and the secrets, starts
 * a channel that became servable, moves the agent to the new primary
 * provider, and names what only a restart applies. Owner pairing through
 * the daemon: `await_sender` answers with the next unknown sender.
 */
import { expect, test } from "bun:test";
import { reply } from "../fakes/model-server.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, TELEGRAM_OFF, telegramToml } from "../helpers/config.ts";
import { controlReload, controlRequest } from "../helpers/control.ts";
import { e2eResources, until as waitFor } from "../helpers/e2e.ts";

const start = e2eResources();

interface Health {
  status: string;
  "restart_required?": boolean;
  channels: Array<{ name: string; status: string }>;
}

async function health(d: RunningDaemon): Promise<Health> {
  return (await (await fetch(new URL("/health/ready", d.url))).json()) as Health;
}

async function until(d: RunningDaemon, done: (h: Health) => boolean, what: string): Promise<Health> {
  let h: Health | undefined;
  const holds = async () => {
    h = await health(d);
    return done(h);
  };
  await waitFor(what, holds, 8000).catch(() => {
    throw new Error(`timed out waiting for ${what}: ${JSON.stringify(h)}\n${d.logs()}`);
  });
  return h!;
}

test("SIGHUP: a channel turned on in config.toml starts, and the new primary provider answers, without a restart", async () => {
  const first = await start.model();
  const second = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(providerToml(first.url, { name: "first" }) + TELEGRAM_OFF + ACP_OFF);
  const d = await start.daemon(home);
  expect((await health(d)).status).toBe("ready");

  home.writeConfig(
    providerToml(second.url, { name: "second" }) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF,
  );
  d.proc.kill("SIGHUP");
  // Telegram was ready before the signal too: the log line says the reload has happened, then health is read.
  await waitFor("the reload's log line", () => d.logs().includes('msg="config reloaded"'));
  const after = await until(d, (h) => h.channels.find((c) => c.name === "telegram")?.status === "ready", "telegram ready");
  expect(after.status).toBe("ready");
  expect(after["restart_required?"]).toBe(false);

  second.reply(reply.text("answered by the second provider"));
  telegram.pushMessage(telegram.message.text("hello after the reload"));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.length > 0, 10_000);
  expect(texts.join("\n")).toContain("answered by the second provider");
  expect(first.requests).toHaveLength(0);
  expect(d.proc.exitCode).toBeNull();
  expect(await d.stop()).toBe(0);
}, 30_000);

test("the control socket's reload answers with what changed; a new bind address is flagged as needing a restart; a bad config changes nothing", async () => {
  const model = await start.model();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + TELEGRAM_OFF + ACP_OFF);
  const d = await start.daemon(home);

  // PORT=0 in the daemon's environment wins over the file's port; the bind address comes from the file.
  home.writeConfig(`${providerToml(model.url)}${TELEGRAM_OFF}${ACP_OFF}\n[fermix_core.http]\nbind = "127.0.0.2"\nport = 4999\n`);
  const moved = await controlReload(home.home);
  expect(moved.ok).toBe(true);
  expect(moved.restart_required).toEqual(["listen on 127.0.0.2:0 (now 127.0.0.1:0)"]);
  expect(moved.health["restart_required?"]).toBe(true);
  expect((await health(d))["restart_required?"]).toBe(true);

  home.writeConfig(`${providerToml(model.url)}\n[fermix_channels.telegram]\nstreaming = "sometimes"\n`);
  const bad = await controlReload(home.home);
  expect(bad.ok).toBe(false);
  expect(bad.error).toContain('fermix_channels.telegram.streaming = "sometimes" is not valid: expected one of "off", "draft", "block"');
  expect((await health(d)).status).toBe("ready");
  expect(await d.stop()).toBe(0);
}, 30_000);

test("pairing through the daemon: await_sender answers with the next sender Telegram does not know, who still gets nothing", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF);
  const d = await start.daemon(home);
  await until(d, (h) => h.channels.find((c) => c.name === "telegram")?.status === "ready", "telegram ready");

  const waiting = controlRequest(home.home, { type: "await_sender", channel: "telegram", timeout_ms: 10_000 });
  // The daemon waits for a sender once it has read the request; a stranger's message before that is only
  // dropped. Bob writes again until one is seen, rather than the test guessing how long that read takes.
  let answered = false;
  void waiting.then(() => (answered = true));
  let nextWrite = 0;
  await waitFor(
    "the daemon to see Bob",
    () => {
      if (!answered && Date.now() >= nextWrite) {
        telegram.pushMessage(telegram.message.text("pair me", { from: BOB }));
        nextWrite = Date.now() + 250;
      }
      return answered;
    },
    10_000,
  );
  expect(await waiting).toEqual({ type: "sender", channel: "telegram", sender_id: String(BOB.id), sender_name: "Bob" });
  expect(telegram.botMessages(BOB.id)).toEqual([]);
  expect(model.requests).toHaveLength(0);

  expect(await controlRequest(home.home, { type: "await_sender", channel: "slack" })).toEqual({
    type: "error",
    message: "slack is not running in the daemon",
  });
  expect(await controlRequest(home.home, { type: "await_sender", channel: "telegram", timeout_ms: 300 })).toEqual({ type: "timeout" });
  expect(await d.stop()).toBe(0);
}, 30_000);
