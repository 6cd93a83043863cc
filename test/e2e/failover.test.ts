/**
 * Failover with the compiled binary: the primary (Anthropic's API) and a
 * fallback (the Responses API) on two fake model servers, Telegram on its
 * fake. A primary that refuses connections, or never answers, hands the turn
 * to the fallback within its connect timeout plus a margin: the owner sees
 * one answer, health shows the primary failing beside the fallback ready,
 * the dashboard which provider answered; with the primary back, the next
 * turn is its. An answer that broke after it started is not sent again by
 * the fallback.
 */
import { expect, test } from "bun:test";
import { type FakeModel, reply, startFakeModel } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();
/** The primary's connect timeout: short, so a test waits little for it. */
const CONNECT_TIMEOUT_MS = 1500;
/** What a turn may take beyond the connect timeout on a loaded machine: the fallback's answer, Telegram's fake, the daemon's queue. */
const MARGIN_MS = 6000;
/**
 * After the answer arrived, how long nothing more may: a second answer (the
 * fallback repeating what the primary began) would follow at once; 1.5 s
 * holds that on a loaded machine.
 */
const NOTHING_MORE_MS = 1500;

interface Health {
  status: string;
  failures: string[];
  providers: Array<{ name: string; status: string; auth_mode: string; primary: boolean }>;
}
const health = async (d: RunningDaemon) => (await (await fetch(new URL("/health/ready", d.url))).json()) as Health;
const dashboard = async (d: RunningDaemon) => (await fetch(new URL("/", d.url))).text();

/** A port nothing listens on: a fake started and stopped (the primary "comes back" by starting there again). */
async function closedPort(): Promise<number> {
  const probe = await startFakeModel();
  const port = probe.port;
  await probe.stop();
  return port;
}

async function setup(primaryUrl: string) {
  const standby = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    tomlTable("fermix_core", { fallback: ["standby"] }) +
      providerToml(primaryUrl, { name: "claude", api: "anthropic", apiKey: "sk-ant-test-0000", primary: true, connectTimeoutMs: CONNECT_TIMEOUT_MS }) +
      providerToml(standby.url, { name: "standby", api: "responses", apiKey: "sk-test-0000" }) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }),
  );
  const daemon = await start.daemon(home);
  return { standby, telegram, daemon };
}

test("a primary that refuses connections: the fallback answers once, within the connect timeout; health and the dashboard say so; the primary back takes the next turn", async () => {
  const port = await closedPort();
  const { standby, telegram, daemon } = await setup(`http://127.0.0.1:${port}/v1`);
  const answer = "Standing in: the tide is high at 12:40.";
  standby.reply(reply.text(answer));

  const sent = performance.now();
  telegram.pushMessage(telegram.message.text("when is high tide?"));
  await until("the fallback's answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("12:40")), CONNECT_TIMEOUT_MS + MARGIN_MS);
  expect(performance.now() - sent).toBeLessThan(CONNECT_TIMEOUT_MS + MARGIN_MS);
  await Bun.sleep(NOTHING_MORE_MS);
  const texts = telegram.visibleTexts(ALICE.id);
  expect(texts.filter((t) => t.includes("12:40"))).toHaveLength(1);
  expect(texts.some((t) => t.includes("⚠️"))).toBe(false);
  expect(standby.requests).toHaveLength(1);
  expect(standby.requests[0]!.body.model).toBe("fake-model");

  const failing = await health(daemon);
  expect(failing.status).toBe("degraded");
  expect(failing.providers).toEqual([
    { name: "claude", status: "degraded", auth_mode: "api_key", primary: true },
    { name: "standby", status: "ready", auth_mode: "api_key", primary: false },
  ]);
  expect(failing.failures).toEqual(["provider claude: could not be reached"]);
  expect(daemon.logs()).toMatch(
    /msg="model provider failed before answering; the next one takes the request"[^\n]*provider=claude[^\n]*next=standby[^\n]*fault=unreachable/,
  );
  const page = await dashboard(daemon);
  expect(page).toContain('answered by <b class="answered-by">standby</b>');

  // The primary is back on its port: the next turn is its, and health is ready again.
  const back: FakeModel = await startFakeModel({ port });
  start.defer(() => back.stop());
  back.reply(reply.text("The primary again: low tide at 18:55."));
  telegram.pushMessage(telegram.message.text("and low tide?"));
  await until("the primary's answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("18:55")), CONNECT_TIMEOUT_MS + MARGIN_MS);
  expect(back.requests).toHaveLength(1);
  expect(back.requests[0]!.api).toBe("anthropic");
  expect(back.requests[0]!.headers["x-api-key"]).toBe("sk-ant-test-0000");
  expect(standby.requests).toHaveLength(1);
  await until("health ready", async () => (await health(daemon)).status === "ready");
  expect((await health(daemon)).failures).toEqual([]);
  expect(await dashboard(daemon)).toContain('answered by <b class="answered-by">claude</b>');
});

test("a primary that accepts the connection but never answers: the fallback answers after the connect timeout, not after retries", async () => {
  const silent = await start.model();
  silent.fallback(reply.stall());
  const { standby, telegram, daemon } = await setup(silent.url);
  standby.reply(reply.text("Answered by the standby."));
  const sent = performance.now();
  telegram.pushMessage(telegram.message.text("are you there?"));
  await until("the answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Answered by the standby.")), CONNECT_TIMEOUT_MS + MARGIN_MS);
  expect(performance.now() - sent).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS);
  // One attempt at the primary: with a fallback waiting, its connect timeout is not retried.
  expect(silent.requests).toHaveLength(1);
  expect((await health(daemon)).failures).toEqual(["provider claude: could not be reached"]);
});

test("an answer that broke after it started is not sent again by the fallback: the reader keeps what came, marked cut off, once", async () => {
  const primary = await start.model();
  const { standby, telegram, daemon } = await setup(primary.url);
  const partial = ["The first half of the answer, ", "written slowly, "];
  primary.reply(reply.stream({ text: partial, delayMs: 200, end: "drop" }));
  standby.reply(reply.text("A second answer that must never be sent."));
  telegram.pushMessage(telegram.message.text("tell me slowly"));
  await until("the cut-off line", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("cut off before it finished")), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const texts = telegram.visibleTexts(ALICE.id);
  expect(texts.filter((t) => t.includes("The first half of the answer"))).toHaveLength(1);
  expect(texts.some((t) => t.includes("must never be sent"))).toBe(false);
  expect(standby.requests).toHaveLength(0);
  expect(daemon.logs()).toMatch(/turn failed: the model request failed[^\n]*provider=claude[^\n]*fault=cut_off/);
});
