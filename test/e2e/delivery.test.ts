/**
 * Delivery through faults, with the compiled binary: a platform down for a
 * while (and the daemon restarted meanwhile), a Retry-After, a reply that
 * outlives the retry horizon, a draft's edit rate-limited (its fallback waits
 * out the Retry-After), a SIGKILL while a reply streams (draft on
 * Telegram and Slack, blocks on WhatsApp — with the same answer replayed,
 * or a different one), and a model that never answers.
 * What a person would notice: one complete answer, nothing twice, nothing
 * lost without a word, and health that says what is wrong.
 */
import { expect, test } from "bun:test";
import { DISCORD_ALICE, DISCORD_DM } from "../fakes/discord.ts";
import { reply } from "../fakes/model-server.ts";
import { SIGNAL_ALICE } from "../fakes/signal.ts";
import { SLACK_ALICE, SLACK_DM, type SlackFake } from "../fakes/slack.ts";
import { ALICE } from "../fakes/telegram.ts";
import { WA_USER } from "../fakes/whatsapp.ts";
import { type RunningDaemon, startDaemon } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, discordToml, providerToml, signalToml, slackToml, telegramToml, tomlTable, whatsappFakeToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";
import { postSlackWebhook, postWhatsAppWebhook } from "../helpers/sign.ts";

const start = e2eResources();
const SLACK_SECRET = "e2e-delivery-slack-secret-0123456";
const WA_SECRET = "e2e-delivery-wa-secret-0123456789";
/**
 * After everything a test waits for has arrived, how long nothing more may:
 * a part sent twice, or a draft not taken back, would go out right after the
 * one the test saw (the retrier sends a chat's parts back to back, and a
 * replayed turn squares its answer before it sends); 1.5 s holds that on a
 * loaded machine.
 */
const NOTHING_MORE_MS = 1500;
/** The Slack outage of the first test: its reply may not reach the chat while it lasts, whatever the retrier tries. */
const OUTAGE_MS = 20_000;

async function health(
  daemon: RunningDaemon,
): Promise<{ status: string; failures: string[]; providers: Array<{ name: string; status: string }>; channels: Array<{ name: string; status: string }> }> {
  return (await (await fetch(new URL("/health/ready", daemon.url))).json()) as never;
}

/** Keep the daemon started in `home` for the rest of the test; SIGKILLed at the end if still running. */
async function daemonIn(home: TestHome): Promise<RunningDaemon> {
  const daemon = await startDaemon(home.env);
  start.defer(async () => {
    if (daemon.proc.exitCode === null) await daemon.stop("SIGKILL");
  });
  return daemon;
}

async function slackDm(slack: SlackFake, daemon: RunningDaemon, text: string): Promise<void> {
  const body = JSON.stringify(slack.events.dm(text));
  const res = await postSlackWebhook(daemon.url, body, SLACK_SECRET);
  expect(res.status).toBe(200);
}

function slackHome(modelUrl: string, slack: SlackFake, extra = ""): TestHome {
  const home = start.home();
  home.writeConfig(
    providerToml(modelUrl) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: SLACK_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
      extra,
  );
  return home;
}

const answers = (slack: SlackFake, words: string) => slack.visibleTexts(SLACK_DM).filter((t) => t.includes(words));

test("Slack answering 500 for 20 s: the reply arrives once after the outage; health says sends are failing meanwhile", async () => {
  const model = await start.model();
  const slack = start.slack();
  const daemon = await daemonIn(slackHome(model.url, slack));
  model.reply(reply.text("Here is the answer that waited out the outage."));
  const outage = slack.outage(500);
  const outageFrom = Date.now();
  await slackDm(slack, daemon, "are you there?");
  await model.waitForRequests(1);
  await until("a failed send", () => slack.requests.some((r) => r.api === "chat.postMessage" && r.status === 500));
  let report = await health(daemon);
  await until(
    "health to show the channel degraded",
    async () => {
      report = await health(daemon);
      return report.channels.find((c) => c.name === "slack")?.status === "degraded";
    },
    10_000,
  );
  expect(report.failures.join("\n")).toMatch(/channel slack: degraded: sends failing .*retrying/);
  await Bun.sleep(Math.max(0, outageFrom + OUTAGE_MS - Date.now()));
  expect(answers(slack, "waited out the outage")).toEqual([]);
  outage.end();
  await until("the reply after the outage", () => answers(slack, "waited out the outage").length > 0, 60_000);
  await Bun.sleep(NOTHING_MORE_MS);
  expect(answers(slack, "waited out the outage")).toHaveLength(1);
  expect(model.requests).toHaveLength(1);
  expect(daemon.logs()).toContain("reply part not delivered; retrying");
  expect((await health(daemon)).channels.find((c) => c.name === "slack")?.status).toBe("ready");
}, 120_000);

test("a restart during a Slack outage: the held reply is delivered once when Slack is back", async () => {
  const model = await start.model();
  const slack = start.slack();
  const home = slackHome(model.url, slack);
  const first = await daemonIn(home);
  model.reply(reply.text("Delivered across a restart."));
  const outage = slack.outage(503);
  await slackDm(slack, first, "hello across a restart");
  await model.waitForRequests(1);
  await until("the reply held for a retry", () => first.logs().includes("reply part not delivered; retrying"));
  expect(await first.stop("SIGTERM")).toBe(0);

  const second = await daemonIn(home);
  // The restarted daemon takes up the held reply while Slack is still down.
  await until("the outbox resumed after the restart", () => second.logs().includes("outbox resumed"), 10_000);
  outage.end();
  await until("the reply after the restart", () => answers(slack, "Delivered across a restart.").length > 0, 60_000);
  await Bun.sleep(NOTHING_MORE_MS);
  expect(answers(slack, "Delivered across a restart.")).toHaveLength(1);
  // The turn was done before the kill: the reply waited in the outbox, the model was not asked again.
  expect(model.requests).toHaveLength(1);
  expect(second.logs()).toContain("outbox resumed");
}, 120_000);

test("a 429 with Retry-After is waited out, not dropped; a reply past the retry horizon is replaced by a notice when the channel is back", async () => {
  const model = await start.model();
  const slack = start.slack();
  // A horizon of 12 s (0.2 min) for the test, so that a reply held longer is given up in time to watch.
  const daemon = await daemonIn(slackHome(model.url, slack, `streaming = "off"\n${tomlTable("fermix_core.delivery", { retry_horizon_minutes: 0.2 })}`));

  model.reply(reply.text("Worth the wait."));
  slack.rateLimitNext("chat.postMessage", 8);
  const sentAt = Date.now();
  await slackDm(slack, daemon, "first question");
  await until("the rate-limited reply", () => answers(slack, "Worth the wait.").length > 0, 30_000);
  expect(Date.now() - sentAt).toBeGreaterThanOrEqual(8000);
  expect(answers(slack, "Worth the wait.")).toHaveLength(1);
  // Longer than the client sits out itself: the outbox waited it out, durably.
  expect(daemon.logs()).toMatch(/reply part not delivered; retrying.*retry_after_ms=8000/);

  model.reply(reply.text("This answer will be too late to matter."));
  const outage = slack.outage(500);
  await slackDm(slack, daemon, "second question");
  await model.waitForRequests(2);
  await until("the horizon to pass", () => daemon.logs().includes("reply not delivered within the retry horizon"), 60_000);
  outage.end();
  await until("the notice", () => slack.visibleTexts(SLACK_DM).some((t) => t.includes("couldn't deliver an answer")), 60_000);
  const notice = slack.visibleTexts(SLACK_DM).find((t) => t.includes("couldn't deliver an answer"))!;
  expect(notice).toContain("This answer will be too late");
  expect(notice).toContain("Ask me again");
  await Bun.sleep(NOTHING_MORE_MS);
  expect(answers(slack, "This answer will be too late to matter.").filter((t) => !t.includes("couldn't deliver"))).toEqual([]);
}, 120_000);

test("a draft on Slack whose edit gets a 429 with Retry-After: the rest of the reply is not posted before the wait is over, and arrives once", async () => {
  const model = await start.model();
  const slack = start.slack();
  const daemon = await daemonIn(slackHome(model.url, slack));
  const sentences = Array.from({ length: 8 }, (_, i) => `Sentence ${i + 1} tells a little more about the lighthouse and its keeper. `);
  model.reply(reply.slow(300, ...sentences, "And these are the last words of the answer."));
  // Longer than the Slack client sits out by itself (5 s): the edit fails, and the stream gives up.
  slack.rateLimitNext("chat.update", 8);
  await slackDm(slack, daemon, "tell me about the lighthouse");
  await until("the rate-limited edit", () => slack.calls("chat.update").some((r) => r.status === 429), 15_000);
  const limitedAt = slack.calls("chat.update").find((r) => r.status === 429)!.at;
  await until("the complete answer", () => answers(slack, "the last words of the answer").length > 0, 30_000);
  await Bun.sleep(NOTHING_MORE_MS);
  // Nothing was posted while Slack asked to wait; the whole answer came after it.
  const posts = slack.calls("chat.postMessage");
  expect(posts.filter((r) => r.at > limitedAt && r.at < limitedAt + 8000)).toEqual([]);
  const complete = posts.filter((r) => String(r.body.text ?? "").includes("the last words of the answer"));
  expect(complete).toHaveLength(1);
  expect(complete[0]!.at).toBeGreaterThanOrEqual(limitedAt + 8000);
  // Once: one message with the answer on screen, no sentence twice.
  expect(answers(slack, "the last words of the answer")).toHaveLength(1);
  const visible = slack.visibleTexts(SLACK_DM).join("\n");
  for (let n = 1; n <= 8; n++) expect(visible.split(`Sentence ${n} tells`).length - 1).toBe(1);
  expect(model.requests).toHaveLength(1);
}, 60_000);

test("SIGKILL while a draft streams on Telegram: after restart the partial draft is gone and one complete answer is visible", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + ACP_OFF + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }));
  const paragraphs = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1}: a few words about the sea, the wind and the long way home.\n\n`);
  model.reply(reply.slow(400, ...paragraphs), reply.text(paragraphs.join("")));
  const first = await daemonIn(home);
  telegram.pushMessage(telegram.message.text("tell me about the sea"));
  await until("a partial draft", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Paragraph 2")), 15_000);
  expect(await first.stop("SIGKILL")).not.toBe(0);
  const partial = telegram.botMessages(ALICE.id).filter((e) => !e.deleted);
  expect(partial.some((e) => (e.text ?? "").includes("Paragraph 8"))).toBe(false);

  await daemonIn(home);
  await until("the complete answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Paragraph 8")), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const visible = telegram.visibleTexts(ALICE.id).join("\n");
  for (let n = 1; n <= 8; n++) expect(visible.split(`Paragraph ${n}:`).length - 1).toBe(1);
  expect(model.requests).toHaveLength(2);
}, 90_000);

test("SIGKILL while a draft streams on Slack: after restart the partial draft is gone and one complete answer is visible", async () => {
  const model = await start.model();
  const slack = start.slack();
  const home = slackHome(model.url, slack);
  const paragraphs = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1}: a few words about rivers, bridges and the town beyond them.\n\n`);
  model.reply(reply.slow(400, ...paragraphs), reply.text(paragraphs.join("")));
  const first = await daemonIn(home);
  await slackDm(slack, first, "tell me about rivers");
  await until("a partial draft", () => slack.visibleTexts(SLACK_DM).some((t) => t.includes("Paragraph 3")), 15_000);
  expect(await first.stop("SIGKILL")).not.toBe(0);

  await daemonIn(home);
  await until("the complete answer", () => slack.visibleTexts(SLACK_DM).some((t) => t.includes("Paragraph 8")), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const visible = slack.visibleTexts(SLACK_DM).join("\n");
  for (let n = 1; n <= 8; n++) expect(visible.split(`Paragraph ${n}:`).length - 1).toBe(1);
}, 90_000);

test("SIGKILL while a draft streams on Discord: after restart the partial draft is gone and one complete answer is visible", async () => {
  const model = await start.model();
  const discord = start.discord();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + CHANNELS_OFF + discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase }));
  const paragraphs = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1}: a few words about mountains, passes and the valleys below.\n\n`);
  model.reply(reply.slow(400, ...paragraphs), reply.text(paragraphs.join("")));
  const first = await daemonIn(home);
  await discord.gateway.waitForLive(10_000);
  discord.userMessage("tell me about mountains");
  await until("a partial draft", () => discord.visibleTexts(DISCORD_DM).some((t) => t.includes("Paragraph 2")), 15_000);
  expect(await first.stop("SIGKILL")).not.toBe(0);
  expect(discord.visibleTexts(DISCORD_DM).some((t) => t.includes("Paragraph 8"))).toBe(false);

  await daemonIn(home);
  await until("the complete answer", () => discord.visibleTexts(DISCORD_DM).some((t) => t.includes("Paragraph 8")), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const visible = discord.visibleTexts(DISCORD_DM).join("\n");
  for (let n = 1; n <= 8; n++) expect(visible.split(`Paragraph ${n}:`).length - 1).toBe(1);
  expect(model.requests).toHaveLength(2);
}, 90_000);

test("SIGKILL after one block of two on Signal: after restart the interrupted block is taken back (Signal can delete) and the complete answer is visible once", async () => {
  const model = await start.model();
  const signal = start.signal();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      signalToml({ account: signal.account, cliPath: signal.cliPath, attachmentsDir: signal.attachmentsDir, ownerUserId: SIGNAL_ALICE.number }),
  );
  const sentence = (p: number, n: number) => `Sentence ${n} of part ${p} describes one more thing about the harbour.`;
  const part = (p: number) => `${Array.from({ length: 14 }, (_, i) => sentence(p, i + 1)).join(" ")}\n\n`;
  const answer = part(1) + part(2);
  model.reply(reply.slow(350, ...answer.match(/[\s\S]{1,120}/g)!), reply.text(answer));
  const first = await daemonIn(home);
  await signal.waitForStarts(1);
  await signal.receive(signal.envelope.text("describe the harbour"));
  const seen = () => signal.visible(SIGNAL_ALICE.uuid).map((m) => m.text);
  await until("the first block", () => seen().some((t) => t.includes(sentence(1, 14))), 20_000);
  expect(seen().some((t) => t.includes(sentence(2, 14)))).toBe(false);
  expect(await first.stop("SIGKILL")).not.toBe(0);

  const second = await daemonIn(home);
  await until("the rest of the answer", () => seen().some((t) => t.includes(sentence(2, 14))), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const all = seen().join("\n");
  for (const p of [1, 2]) for (let n = 1; n <= 14; n++) expect(all.split(sentence(p, n)).length - 1).toBe(1);
  expect(second.logs()).toContain("replayed turn removed what its interrupted attempt had shown");
  expect(signal.calls("remoteDelete")).toHaveLength(1);
}, 90_000);

/**
 * The owner asks on WhatsApp (block streaming); `streamed` comes slowly, in two blocks; once the first
 * block (ending in `shown`) has arrived, and before `notYet` has, the daemon is SIGKILLed and started
 * again, and the model answers the replayed turn with `replayed`.
 */
async function whatsappKilledAfterFirstBlock(o: { question: string; streamed: string; replayed: string; shown: string; notYet: string }) {
  const model = await start.model();
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) + CHANNELS_OFF + whatsappFakeToml(wa, { appSecret: WA_SECRET, ownerUserId: WA_USER.wa_id, verifyToken: "e2e-delivery-verify" }),
  );
  model.reply(reply.slow(350, ...o.streamed.match(/[\s\S]{1,120}/g)!), reply.text(o.replayed));
  const daemon = await daemonIn(home);
  const body = JSON.stringify(wa.webhook.text(o.question));
  await postWhatsAppWebhook(daemon.url, body, WA_SECRET);
  await until("the first block", () => wa.visibleTexts(WA_USER.wa_id).some((t) => t.includes(o.shown)), 20_000);
  expect(wa.visibleTexts(WA_USER.wa_id).some((t) => t.includes(o.notYet))).toBe(false);
  expect(await daemon.stop("SIGKILL")).not.toBe(0);
  return { model, wa, restarted: await daemonIn(home) };
}

test("SIGKILL after one block of two on WhatsApp: after restart no block's text is delivered twice", async () => {
  const sentence = (p: number, n: number) => `Sentence ${n} of part ${p} describes one more thing about the garden.`;
  const part = (p: number) => `${Array.from({ length: 14 }, (_, i) => sentence(p, i + 1)).join(" ")}\n\n`;
  const answer = part(1) + part(2);
  const { wa, restarted: second } = await whatsappKilledAfterFirstBlock({
    question: "describe the garden",
    streamed: answer,
    replayed: answer,
    shown: sentence(1, 14),
    notYet: sentence(2, 14),
  });
  await until("the rest of the answer", () => wa.visibleTexts(WA_USER.wa_id).some((t) => t.includes(sentence(2, 14))), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const all = wa.visibleTexts(WA_USER.wa_id).join("\n");
  for (const p of [1, 2]) for (let n = 1; n <= 14; n++) expect(all.split(sentence(p, n)).length - 1).toBe(1);
  expect(second.logs()).toContain("replayed answer squared with what was already delivered");
}, 90_000);

test("SIGKILL after one block of two on WhatsApp, and the replay answers differently: the block stays, then one restart line and the complete new answer", async () => {
  const before = (p: number, n: number) => `Sentence ${n} of part ${p} describes one more thing about the orchard.`;
  const after = (p: number, n: number) => `Line ${n} of section ${p} names another tree in the orchard, seen anew.`;
  const block = (line: (p: number, n: number) => string, p: number) => `${Array.from({ length: 14 }, (_, i) => line(p, i + 1)).join(" ")}\n\n`;
  const { model, wa, restarted } = await whatsappKilledAfterFirstBlock({
    question: "describe the orchard",
    streamed: block(before, 1) + block(before, 2),
    replayed: block(after, 1) + block(after, 2),
    shown: before(1, 14),
    notYet: before(2, 1),
  });
  await until("the complete new answer", () => wa.visibleTexts(WA_USER.wa_id).some((t) => t.includes(after(2, 14))), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  const texts = wa.visibleTexts(WA_USER.wa_id);
  const all = texts.join("\n");
  // What the user had read stays, once; the abandoned rest of the first answer never comes.
  for (let n = 1; n <= 14; n++) expect(all.split(before(1, n)).length - 1).toBe(1);
  for (let n = 1; n <= 14; n++) expect(all).not.toContain(before(2, n));
  // One line says why an answer comes again, then the whole new answer, each sentence once.
  expect(all.split("I was restarted while answering").length - 1).toBe(1);
  for (const p of [1, 2]) for (let n = 1; n <= 14; n++) expect(all.split(after(p, n)).length - 1).toBe(1);
  const at = (words: string) => texts.findIndex((t) => t.includes(words));
  expect(at(before(1, 14))).toBeLessThan(at("I was restarted while answering"));
  expect(at("I was restarted while answering")).toBeLessThanOrEqual(at(after(1, 1)));
  expect(all.indexOf("I was restarted while answering")).toBeLessThan(all.indexOf(after(1, 1)));
  expect(model.requests).toHaveLength(2);
  expect(restarted.logs()).toContain("replayed answer squared with what was already delivered");
}, 90_000);

test("a model that never answers: an interim status, the timeout message after the first-byte timeout, health degraded, then ready after the next answer", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      "first_byte_timeout_ms = 3000\n" +
      ACP_OFF +
      tomlTable("fermix_core.delivery", { waiting_notice_ms: 1000 }) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }),
  );
  const daemon = await daemonIn(home);
  model.reply(reply.silent(), reply.text("Back to normal."));
  const sentAt = Date.now();
  telegram.pushMessage(telegram.message.text("hello?"));
  await until("the waiting status", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Still waiting for the model")), 5000);
  await until("the timeout message", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("took too long")), 15_000);
  expect(Date.now() - sentAt).toBeGreaterThanOrEqual(3000);
  // The status went when the turn ended; the message names no host or URL.
  expect(telegram.visibleTexts(ALICE.id).some((t) => t.includes("Still waiting"))).toBe(false);
  const message = telegram.visibleTexts(ALICE.id).find((t) => t.includes("took too long"))!;
  expect(message).not.toMatch(/https?:|127\.0\.0\.1/);
  // One attempt: a model that never starts is not asked again at once.
  expect(model.requests).toHaveLength(1);
  const degraded = await health(daemon);
  expect(degraded.status).toBe("degraded");
  expect(degraded.providers[0]!.status).toBe("degraded");
  expect(degraded.failures).toContain("provider fake: no answer in time");
  expect(daemon.logs()).toMatch(/turn failed: the model request failed.*fault=timeout/);

  telegram.pushMessage(telegram.message.text("and now?"));
  await until("the next answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Back to normal.")), 15_000);
  const ready = await health(daemon);
  expect(ready.providers[0]!.status).toBe("ready");
  expect(ready.status).toBe("ready");
}, 60_000);
