/**
 * The web face in a real browser: headless Chromium (Debian's, driven by
 * playwright-core) against the compiled daemon and the platform fakes. The
 * status page follows a platform going down and coming back, its activity
 * list grows as messages are answered, and neither the page nor its event
 * stream ever carries a secret, a message or a sender id. /metrics parses as
 * Prometheus text and moves with the messages. It has a card for each
 * channel mode, failed and unconfigured ones with what fixes them, and says
 * when a reloaded change needs a restart. The setup page is closed
 * without a fresh one-time link, and with one it configures a provider and
 * Telegram: the daemon becomes ready without a restart and answers the owner.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { User } from "grammy/types";
import type { Browser, Page } from "playwright-core";
import { DISCORD_ALICE } from "../fakes/discord.ts";
import { reply } from "../fakes/model-server.ts";
import { SIGNAL_ALICE } from "../fakes/signal.ts";
import { SLACK_ALICE } from "../fakes/slack.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import { type RunningDaemon, runFermix, stdoutSoFar } from "../helpers/binary.ts";
import { DESKTOP, launchBrowser, PHONE } from "../helpers/browser.ts";
import { ACP_OFF, discordToml, providerToml, signalToml, slackToml, TELEGRAM_OFF, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { captureEvents } from "../helpers/events.ts";
import { histogramSeries, parseMetrics, sampleValue } from "../helpers/prometheus.ts";
import { untilValue } from "../helpers/wait.ts";

const start = e2eResources();
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** A page in a fresh browser context (its own cookies), closed after the test. */
async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP });
  start.defer(() => context.close());
  return context.newPage();
}

interface Health {
  status: string;
  channels: Array<{ name: string; status: string }>;
}
const health = async (d: RunningDaemon) => (await (await fetch(new URL("/health/ready", d.url))).json()) as Health;
const telegramStatus = async (d: RunningDaemon) => (await health(d)).channels.find((c) => c.name === "telegram")?.status;

/** Poll `probe` until it gives a value, and give it. */
const until = untilValue;

const SAVE = 'button[name="save"]';
const OWNER = '[name="fermix_channels.telegram.owner_user_id"]';

const metricsText = async (d: RunningDaemon) => (await fetch(new URL("/metrics", d.url))).text();
const metrics = async (d: RunningDaemon) => parseMetrics(await metricsText(d));

test("the status page follows Telegram down and back within 2 s, lists each answered message, and never shows a secret or a message; /metrics moves with them", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  const apiKey = "sk-dashboard-secret-0123456789";
  home.writeConfig(
    providerToml(model.url, { apiKey }) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF,
  );
  const d = await start.daemon(home);
  await until("telegram ready", async () => (await telegramStatus(d)) === "ready");
  const events = captureEvents(d.url, start.defer);
  const before = await metrics(d);
  expect(sampleValue(before, "fermix_messages_total", { channel: "telegram", direction: "inbound" })).toBe(0);

  const page = await newPage();
  await page.goto(new URL("/", d.url).href);
  await page.waitForSelector("#conn.live", { timeout: 5000 });
  const card = (status: string) => `article.channel[data-channel="telegram"][data-status="${status}"]`;
  expect(await page.isVisible(card("ready"))).toBe(true);
  expect(await page.textContent('article.channel[data-channel="telegram"]')).toContain("long polling");

  // A message answered: the activity list grows, without a reload.
  const question = "what time is the tide at the harbour";
  const answer = "High water is at 12:40 today.";
  const listed = await page.locator("ol.activity li").count();
  model.reply(reply.text(answer));
  telegram.pushMessage(telegram.message.text(question));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes("12:40")), 10_000);
  await page.locator("ol.activity li").nth(listed).waitFor({ timeout: 2000 });
  await page.waitForSelector('ol.activity li[data-event="turn.done"]', { timeout: 2000 });
  await page.locator('article.channel[data-channel="telegram"]', { hasText: "1 in · 1 out" }).waitFor({ timeout: 2000 });
  expect(await page.textContent("article.provider")).toContain("fake-model");

  // Telegram goes down: once health says degraded, the card says so within 2 s; and back.
  const outage = telegram.outage();
  await until("telegram degraded in health", async () => (await telegramStatus(d)) === "degraded");
  await page.waitForSelector(card("degraded"), { timeout: 2000 });
  expect(await page.textContent('article.channel[data-channel="telegram"]')).toMatch(/polling failed/);
  outage.end();
  await until("telegram ready again in health", async () => (await telegramStatus(d)) === "ready", 20_000);
  await page.waitForSelector(card("ready"), { timeout: 2000 });
  expect(await page.textContent('article.channel[data-channel="telegram"]')).toMatch(/Last error at .*polling failed/);

  // On a phone nothing runs off the side of the screen.
  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
  expect(overflow).toBeLessThanOrEqual(0);

  // Nothing secret or private in the page or in anything the stream sent.
  const html = await page.content();
  for (const leak of [telegram.token, apiKey, question, answer, String(ALICE.id), "Alice"]) {
    expect(html).not.toContain(leak);
    expect(events.text()).not.toContain(leak);
  }
  expect(events.text()).toContain("event: dashboard");

  // /metrics parses as Prometheus text and counted what flowed; a refused webhook is counted by its reason.
  await fetch(new URL("/webhook/slack", d.url), { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
  const after = await metrics(d);
  expect(sampleValue(after, "fermix_messages_total", { channel: "telegram", direction: "inbound" })).toBe(1);
  expect(sampleValue(after, "fermix_messages_total", { channel: "telegram", direction: "outbound" })).toBeGreaterThanOrEqual(1);
  expect(histogramSeries(await metricsText(d), "fermix_turn_duration_seconds", { channel: "telegram", outcome: "ok" })?.count).toBe("1");
  expect(sampleValue(after, "fermix_webhook_requests_total", { channel: "slack", outcome: "not_configured" })).toBe(1);
  expect(sampleValue(after, "fermix_channel_status", { channel: "telegram", status: "ready" })).toBe(1);
  expect(sampleValue(after, "fermix_queue_running_turns")).toBe(0);
  expect(after.find((f) => f.name === "fermix_turn_duration_seconds")?.type).toBe("HISTOGRAM");
  for (const name of ["fermix_outbox_pending", "fermix_stream_phases_total", "fermix_transcription_attempts_total", "fermix_queue_waiting_messages"]) {
    expect(after.some((f) => f.name === name)).toBe(true);
  }
  expect(sampleValue(after, "fermix_stream_phases_total", { channel: "telegram" })).toBeGreaterThanOrEqual(0);
}, 60_000);

test("the status page has a card for each channel mode (webhooks, gateway, signal-cli, socket), one for a channel that failed with what fixes it, and one for a channel turned on but not configured", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const slack = start.slack();
  const discord = start.discord();
  const signal = start.signal();
  const home = start.home();
  const wrongToken = "7000000009:AAnotTheTokenTelegramKnows00000000";
  home.writeConfig(
    providerToml(model.url) +
      // Telegram refuses this token: failed. WhatsApp is turned on with nothing set: unconfigured. ACP is on by default.
      telegramToml({ botToken: wrongToken, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      slackToml({ botToken: slack.token, signingSecret: "e2e-slack-signing-secret-0123456789", ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
      discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase }) +
      signalToml({ account: signal.account, cliPath: signal.cliPath, attachmentsDir: signal.attachmentsDir, ownerUserId: SIGNAL_ALICE.number }) +
      tomlTable("fermix_channels.whatsapp", { enabled: true }),
  );
  const d = await start.daemon(home);
  const expected: Record<string, string> = { slack: "ready", discord: "ready", signal: "ready", acp: "ready", telegram: "failed", whatsapp: "unconfigured" };
  await until("every channel settled", async () => {
    const { channels } = await health(d);
    return Object.entries(expected).every(([name, status]) => channels.find((c) => c.name === name)?.status === status) || undefined;
  });

  const page = await newPage();
  await page.goto(new URL("/", d.url).href);
  await page.waitForSelector("#conn.live", { timeout: 5000 });
  const card = (name: string) => page.locator(`article.channel[data-channel="${name}"]`);
  for (const [name, status] of Object.entries(expected)) expect(await card(name).getAttribute("data-status")).toBe(status);
  const mode = async (name: string) => /Mode\s*(.*?)\s*Connected/s.exec((await card(name).textContent()) ?? "")?.[1];
  expect(await mode("slack")).toBe("webhooks");
  expect(await mode("discord")).toBe("gateway socket");
  expect(await mode("signal")).toBe("signal-cli");
  expect(await mode("acp")).toBe("local socket");
  expect(await mode("whatsapp")).toBe("webhooks");
  for (const name of ["slack", "discord", "signal", "acp"]) expect(await card(name).textContent()).toMatch(/Connected\s*\d\d:\d\d:\d\d/);
  expect(await card("telegram").textContent()).toMatch(
    /Telegram refused the bot token: bot token rejected by Telegram \(.*401.*\); fix bot_token and restart\./,
  );
  expect(await card("telegram").textContent()).toContain("not connected");
  expect(await card("whatsapp").textContent()).toContain("Not configured");

  // The attention box: each failure in plain words with what fixes it.
  const attention = (await page.textContent("section.why")) ?? "";
  expect(attention).toContain("Telegram refused the bot token");
  expect(attention).toContain("Fix: set fermix_channels.telegram.bot_token or run fermix setup --web");
  expect(attention).toContain("WhatsApp is turned on but");
  expect(attention).toContain("set fermix_channels.whatsapp.access_token");
  expect(await page.textContent(".status")).toContain("Degraded");
  expect(await page.content()).not.toContain(wrongToken);
}, 60_000);

test("a new bind address in config.toml, reloaded under the running daemon: the open status page says a restart is needed", async () => {
  const model = await start.model();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + TELEGRAM_OFF + ACP_OFF);
  const d = await start.daemon(home);
  const page = await newPage();
  await page.goto(new URL("/", d.url).href);
  await page.waitForSelector("#conn.live", { timeout: 5000 });
  expect(await page.textContent("main")).not.toContain("only after a restart");

  home.writeConfig(providerToml(model.url) + TELEGRAM_OFF + ACP_OFF + tomlTable("fermix_core.http", { bind: "127.0.0.2" }));
  d.proc.kill("SIGHUP");
  await until(
    "health flags the restart",
    async () => ((await (await fetch(new URL("/health/ready", d.url))).json()) as Record<string, unknown>)["restart_required?"] === true || undefined,
  );
  // Without a reload of the page: the live update brings the notice.
  const notice = page.locator(".banner.warn", { hasText: "Some configuration changes take effect only after a restart" });
  await notice.waitFor({ timeout: 2000 });
  expect(await notice.textContent()).toContain("restart fermix run");
  expect(d.proc.exitCode).toBeNull();
}, 60_000);

test("the setup page: 403 without a link or with a spent or expired one; a fresh link configures a provider and Telegram, and the owner is answered without a restart", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home(NO_LOCAL_SERVER);
  // Setup is required (no provider); links live 2 s here so that one can be seen to expire. No local model server answers.
  const ttlMs = 2000;
  home.writeConfig(TELEGRAM_OFF + ACP_OFF + tomlTable("fermix_core.http", { token_ttl_seconds: ttlMs / 1000 }));
  const d = await start.daemon(home);
  const printed = await until("the setup link on stdout", readLine(d, /https?:\/\/\S+\/setup\?t=\S+/), 5000);
  // The link was made before it was printed: it is expired once its life is past from now.
  const seen = Date.now();
  expect(printed).toStartWith(new URL("/setup?t=", d.url).href);
  expect((await health(d)).status).toBe("setup_required");

  const refused = async (url: string) => {
    const res = await fetch(url, { redirect: "manual" });
    return res.status === 403 && (await res.text()) === "setup authorization required\n";
  };
  expect(await refused(new URL("/setup", d.url).href)).toBe(true);
  expect(await refused(new URL("/setup?t=not-a-token", d.url).href)).toBe(true);
  await until("the printed link's expiry", () => Date.now() > seen + ttlMs, ttlMs + 5000);
  expect(await refused(printed)).toBe(true);

  // `fermix setup --web` asks the running daemon for a fresh link.
  const web = await runFermix(["setup", "--web"], home.env);
  expect(web.exitCode).toBe(0);
  const link = /https?:\/\/\S+\/setup\?t=\S+/.exec(web.stdout)![0];
  const page = await newPage();
  await page.goto(link);
  expect(page.url()).toBe(new URL("/setup", d.url).href);
  expect(await refused(link)).toBe(true);

  await page.fill('[name="provider.base_url"]', model.url);
  await page.selectOption('[name="provider.api"]', "chat");
  await page.fill('[name="provider.model"]', "a-model-it-does-not-list");
  await page.fill('[name="provider.context_window"]', "32768");
  await page.click('details.channel[data-channel="telegram"] > summary');
  await page.check('[name="fermix_channels.telegram.enabled"]');
  await page.fill('[name="fermix_channels.telegram.bot_token"]', telegram.token);
  await page.fill('[name="fermix_channels.telegram.owner_user_id"]', String(ALICE.id));
  await page.click('details.channel[data-channel="telegram"] details.more > summary');
  await page.fill('[name="fermix_channels.telegram.api_root"]', telegram.url);
  expect(await page.isChecked('[name="check"]')).toBe(true);

  // The live check asks the provider for its models first: this one is not listed, so nothing is written.
  await page.click(SAVE);
  await page.locator(".field-error", { hasText: "check failed" }).waitFor({ timeout: 10_000 });
  expect(await page.textContent(".banner.bad")).toContain("Nothing was saved");
  expect(await page.inputValue('[name="fermix_channels.telegram.bot_token"]')).toBe("");
  expect(await page.content()).not.toContain(telegram.token);
  expect(telegram.calls("getMe").length).toBeGreaterThan(0);
  expect((await health(d)).status).toBe("setup_required");

  // Fixed and sent again; the bot token typed before is kept by the session (the field stays empty).
  await page.fill('[name="provider.model"]', "fake-model");
  await page.click(SAVE);
  await page.waitForSelector('[data-health="ready"]', { timeout: 10_000 });
  const done = await page.content();
  expect(done).toContain("Telegram started");
  expect(done).not.toContain(telegram.token);

  expect((await health(d)).status).toBe("ready");
  expect(d.proc.exitCode).toBeNull();
  // The session ended with the wizard.
  const again = await page.goto(new URL("/setup", d.url).href);
  expect(again?.status()).toBe(403);

  model.reply(reply.text("Set up from the browser, and answering."));
  telegram.pushMessage(telegram.message.text("hello from the owner"));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("answering")), 10_000);
  expect(texts.join("\n")).toContain("Set up from the browser");
  expect(d.logs()).not.toContain(telegram.token);
}, 60_000);

/** Every body the page was sent for /setup (the streamed ones whole), to search for what must never be in one. */
function setupBodies(page: Page): () => Promise<string[]> {
  const bodies: Array<Promise<string>> = [];
  page.on("response", (response) => {
    if (new URL(response.url()).pathname === "/setup") bodies.push(response.text().catch(() => ""));
  });
  return () => Promise.all(bodies);
}

/** A fresh setup link from the running daemon (`fermix setup --web`), opened in a new page. */
async function openSetup(d: RunningDaemon, home: { env: Record<string, string | undefined> }): Promise<{ page: Page; bodies: () => Promise<string[]> }> {
  const web = await runFermix(["setup", "--web"], home.env);
  expect(web.exitCode).toBe(0);
  const page = await newPage();
  const bodies = setupBodies(page);
  await page.goto(/https?:\/\/\S+\/setup\?t=\S+/.exec(web.stdout)![0]);
  expect(page.url()).toBe(new URL("/setup", d.url).href);
  return { page, bodies };
}

const NO_LOCAL_SERVER = { FERMIX_SETUP_PROBES: "127.0.0.1:9" };
const MALLORY: User = { id: 444444444, is_bot: false, first_name: "Mallory" };
const ownerNote = (page: Page) => page.locator('[data-note="fermix_channels.telegram.owner_user_id"]');

test("the setup page finds the local model server and pairs the owner by a message to the bot: saved, the daemon is ready and answers them; no page carries the token", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home({ FERMIX_SETUP_PROBES: `127.0.0.1:${model.port},127.0.0.1:9` });
  home.writeConfig(TELEGRAM_OFF + ACP_OFF);
  const d = await start.daemon(home);
  expect((await health(d)).status).toBe("setup_required");
  const { page, bodies } = await openSetup(d, home);

  // Step 1 lists the server found on the probed port and its models; choosing one fills in the fields.
  const found = page.locator("[data-found-servers]");
  expect(await found.getAttribute("data-found-servers")).toBe("1");
  expect(await found.textContent()).toContain(`OpenAI-compatible server at ${model.url}: 1 model (fake-model)`);
  await page.selectOption('[name="provider.local"]', "");
  await page.fill('[name="provider.base_url"]', "https://api.openai.com/v1");
  await page.selectOption('[name="provider.local"]', `${model.url} fake-model`);
  expect(await page.inputValue('[name="provider.base_url"]')).toBe(model.url);
  expect(await page.inputValue('[name="provider.model"]')).toBe("fake-model");
  expect(await page.inputValue('[name="provider.api"]')).toBe("chat");

  // Telegram: the token, then Pair. No daemon polls this bot yet, so the page polls Telegram itself.
  await page.click('details.channel[data-channel="telegram"] > summary');
  await page.check('[name="fermix_channels.telegram.enabled"]');
  await page.fill('[name="fermix_channels.telegram.bot_token"]', telegram.token);
  await page.click('details.channel[data-channel="telegram"] details.more > summary');
  await page.fill('[name="fermix_channels.telegram.api_root"]', telegram.url);
  await page.click('button[name="pair"]');
  await page.locator('[data-pairing="waiting"]', { hasText: "@fermix_test_bot" }).waitFor({ timeout: 10_000 });
  await until("the page polling Telegram", () => telegram.calls("getUpdates").length > 0 || undefined, 10_000);
  telegram.pushMessage(telegram.message.text("it's me"));
  await ownerNote(page).filter({ hasText: "Paired with Alice Liddell (@alice)" }).waitFor({ timeout: 10_000 });
  expect(await page.inputValue(OWNER)).toBe(String(ALICE.id));
  expect(await page.isVisible('[data-pairing="waiting"]')).toBe(false);
  // The choice of server and the typed token survived the pairing (the token in the session, not the page).
  expect(await page.inputValue('[name="provider.local"]')).toBe(`${model.url} fake-model`);
  expect(await page.inputValue('[name="fermix_channels.telegram.bot_token"]')).toBe("");
  expect((await health(d)).status).toBe("setup_required");

  await page.click(SAVE);
  await page.waitForSelector('[data-health="ready"]', { timeout: 10_000 });
  expect((await health(d)).status).toBe("ready");
  const config = await Bun.file(`${home.home}/config.toml`).text();
  expect(config).toContain("[fermix_core.providers.local]");
  expect(config).toContain(`owner_user_id = "${ALICE.id}"`);

  // The paired owner is answered; the pairing message itself was not.
  model.reply(reply.text("Local model, paired owner."));
  telegram.pushMessage(telegram.message.text("hello again"));
  const texts = await telegram.waitForTexts(ALICE.id, (t) => t.some((x) => x.includes("paired owner")), 10_000);
  expect(texts).toHaveLength(1);
  for (const body of [...(await bodies()), await page.content()]) expect(body).not.toContain(telegram.token);
  expect(d.logs()).not.toContain(telegram.token);
}, 60_000);

test("pairing through the running daemon: a pairing that times out leaves the owner id to type; one answered by Bob makes him the owner, and a stranger is still not answered", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home(NO_LOCAL_SERVER);
  home.writeConfig(
    providerToml(model.url) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      ACP_OFF +
      tomlTable("fermix_core.http", { pair_timeout_seconds: 3 }),
  );
  const d = await start.daemon(home);
  await until("telegram ready", async () => (await telegramStatus(d)) === "ready");
  const { page, bodies } = await openSetup(d, home);
  expect(await page.textContent("[data-found-servers]")).toContain("No model server answered");
  // The stored token names its bot on the button.
  expect(await page.textContent('button[name="pair"]')).toBe("Pair: send any message to @fermix_test_bot now");

  // Nobody writes: after 3 s the form is back, the owner field as it was and open to typing.
  await page.click('button[name="pair"]');
  await page.locator('[data-pairing="waiting"]').waitFor({ timeout: 10_000 });
  await ownerNote(page).filter({ hasText: "No message reached @fermix_test_bot in 3 s. Type the owner id by hand" }).waitFor({ timeout: 10_000 });
  expect(await page.inputValue(OWNER)).toBe(String(ALICE.id));
  expect(await page.isEditable(OWNER)).toBe(true);

  // Again, and Bob writes: the daemon's own poller hands his message over (Telegram allows one poller per token).
  await page.click('button[name="pair"]');
  await page.locator('[data-pairing="waiting"]').waitFor({ timeout: 10_000 });
  telegram.pushMessage(telegram.message.text("pair me", { from: BOB }));
  await ownerNote(page)
    .filter({ hasText: new RegExp(`Paired with Bob\\b.*, id ${BOB.id}`) })
    .waitFor({ timeout: 10_000 });
  expect(await page.inputValue(OWNER)).toBe(String(BOB.id));
  expect(telegram.botMessages(BOB.id)).toEqual([]);
  // No second poller fought the daemon's for the token (that would be 409s, and Telegram degraded).
  expect(await telegramStatus(d)).toBe("ready");

  await page.click(SAVE);
  await page.waitForSelector('[data-health="ready"]', { timeout: 10_000 });
  expect(await page.textContent("main")).toContain("Telegram restarted");

  telegram.pushMessage(telegram.message.text("and me?", { from: MALLORY }));
  model.reply(reply.text("Hello Bob, you own me now."));
  telegram.pushMessage(telegram.message.text("hello", { from: BOB }));
  expect((await telegram.waitForTexts(BOB.id, (t) => t.length > 0, 10_000)).join("\n")).toContain("Hello Bob");
  expect(telegram.botMessages(MALLORY.id)).toEqual([]);
  for (const body of [...(await bodies()), await page.content()]) expect(body).not.toContain(telegram.token);
}, 60_000);

test("fermix setup --web with no daemon running says how to start one", async () => {
  const home = start.home();
  const result = await runFermix(["setup", "--web"], home.env);
  expect(result.exitCode).toBe(1);
  expect(result.stderr).toContain("no daemon is running: start it with `fermix run`");
  expect(result.stdout).toBe("");
});

/** A probe for `until`: the first match of `pattern` in what the daemon printed on stdout so far. */
function readLine(d: RunningDaemon, pattern: RegExp): () => string | undefined {
  const printed = stdoutSoFar(d);
  return () => pattern.exec(printed())?.[0];
}
