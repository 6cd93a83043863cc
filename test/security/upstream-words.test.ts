/**
 * No upstream words on any page, from outside against the compiled binary.
 * A model provider's error can echo what the user wrote (a sentence, a phone
 * number); the status pages — `/health/ready`, the dashboard `/`, its live
 * stream `/events` and `/metrics` — say only the fault's class, HTTP status
 * and the provider's name, while the log line keeps what the provider said.
 * Both ways a provider fails are covered: an HTTP error status with a body,
 * and an error event inside a 200 stream. Each test also checks that the
 * pages do show the provider degraded with its class, so a page that showed
 * nothing at all would fail it.
 */
import { expect, test } from "bun:test";
import { type RecordedRequest, type Reply, reply, userText } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import { captureEvents } from "../helpers/events.ts";

const start = e2eResources();

const PHONE = "+15551234567";
/** What the user writes; the provider's error repeats it. */
const PHRASE = "the velvet kingfisher nests under the old mill bridge";
const API_KEY = "sk-upstream-words-test-0000000000";

const page = async (daemon: RunningDaemon, path: string) => (await fetch(new URL(path, daemon.url))).text();

/** A daemon on Telegram whose provider fails every request with `failure`, the /events stream read from before the first message. */
async function failingProvider(failure: Reply) {
  const model = await start.model();
  model.fallback(failure);
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { name: "openai", apiKey: API_KEY }) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }),
  );
  const daemon = await start.daemon(home);
  const events = captureEvents(daemon.url, start.defer);
  await until("the first dashboard event", () => events.text().includes("event: dashboard"));
  telegram.pushMessage(telegram.message.text(`Tell me where ${PHRASE}, and text ${PHONE} when you know.`));
  await until("the fault line in the chat", () => telegram.visibleTexts(ALICE.id).some((t) => t.startsWith("⚠️")), 30_000);
  return { model, daemon, events };
}

/** What every page may not carry: the user's words and number, as the provider echoed them, nor the key. */
function expectNoUpstreamWords(where: string, text: string): void {
  for (const leak of [PHRASE, "velvet kingfisher", PHONE, "5551234567", API_KEY]) {
    if (text.includes(leak)) throw new Error(`${where} carries ${JSON.stringify(leak)}`);
  }
}

interface Health {
  status: string;
  failures: string[];
  providers: Array<{ name: string; status: string }>;
}

/** The pages after the failure: degraded with `line`, and none of the upstream's words. */
async function expectPagesSay(daemon: RunningDaemon, events: { text(): string }, line: string): Promise<void> {
  const healthText = await page(daemon, "/health/ready");
  const health = JSON.parse(healthText) as Health;
  expect(health.status).toBe("degraded");
  expect(health.providers).toEqual([expect.objectContaining({ name: "openai", status: "degraded" })]);
  expect(health.failures).toContain(`provider openai: ${line}`);
  expectNoUpstreamWords("/health/ready", healthText);

  const dashboard = await page(daemon, "/");
  expect(dashboard).toContain('class="card provider" data-status="degraded"');
  expect(dashboard).toContain(`The model provider “openai” is failing: ${line}.`);
  expectNoUpstreamWords("the dashboard", dashboard);

  // The live stream pushes the page again once the failure is recorded.
  await until("the failure on /events", () => events.text().includes(`is failing: ${line}`));
  expectNoUpstreamWords("/events", events.text());

  const metrics = await page(daemon, "/metrics");
  expect(metrics).toMatch(/fermix_turn_failures_total\{channel="telegram",class="server"\} 1/);
  expectNoUpstreamWords("/metrics", metrics);
}

test("a provider answering HTTP 500 with the user's words and number in its body: the pages say 'server error (HTTP 500)', the log has the rest", async () => {
  const echo = (request: RecordedRequest) => reply.status(500, `could not process "${userText(request)}" for subscriber ${PHONE}`);
  const { model, daemon, events } = await failingProvider(echo);
  // The provider really did echo the user's words: the test is not passing on an empty error.
  expect(model.requests.length).toBeGreaterThanOrEqual(1);
  expect(userText(model.requests[0]!)).toContain(PHRASE);

  await expectPagesSay(daemon, events, "server error (HTTP 500)");

  // The operator's log line has the fault, its status, and what the provider said.
  const logs = daemon.logs();
  expect(logs).toMatch(/msg="turn failed: the model request failed"[^\n]*fault=server[^\n]*status=500/);
  expect(logs).toContain(PHONE);
  expect(logs).not.toContain(API_KEY);
}, 60_000);

test("an error event inside a 200 stream, its message and code echoing the user: the pages say 'server error', the log has the rest", async () => {
  const echo = (request: RecordedRequest) => reply.error(`stream aborted while answering "${userText(request)}" (account ${PHONE})`, `echo_${PHONE.slice(1)}`);
  const { model, daemon, events } = await failingProvider(echo);
  expect(userText(model.requests[0]!)).toContain(PHRASE);

  // A 200 stream carries no error status: the class alone is shown.
  await expectPagesSay(daemon, events, "server error");
  const health = JSON.parse(await page(daemon, "/health/ready")) as Health;
  expect(health.failures.filter((f) => f.startsWith("provider openai:"))).toEqual(["provider openai: server error"]);

  const logs = daemon.logs();
  expect(logs).toMatch(/msg="turn failed: the model request failed"[^\n]*fault=server/);
  expect(logs).toContain(PHONE);
}, 60_000);
