/**
 * One part a platform keeps refusing must not hold a chat, with the
 * compiled binary: a code block too big for a message goes as a document
 * the Bot API answers with 500 every time (and takes every text). A new
 * question is answered within `hold_seconds` and a margin, after the code's
 * text inline — also when the daemon is restarted while the document is
 * still being retried. The same on WhatsApp (media uploads refused), Slack
 * (files.getUploadURLExternal answering 500), Discord (message creates that
 * upload a file answering 500, text creates going through) and Signal
 * (signal-cli's `send` failing with an I/O error whenever it names an
 * attachment). And an outage (every call failing) still holds everything,
 * sets nothing aside, and delivers the reply whole — the file as a file —
 * once it is over (on Telegram).
 */

import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { DISCORD_ALICE, DISCORD_DM } from "../fakes/discord.ts";
import { reply } from "../fakes/model-server.ts";
import { SIGNAL_ALICE } from "../fakes/signal.ts";
import { SLACK_ALICE, SLACK_DM } from "../fakes/slack.ts";
import { ALICE } from "../fakes/telegram.ts";
import { WA_USER } from "../fakes/whatsapp.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, discordToml, providerToml, signalToml, slackToml, telegramToml, tomlTable, whatsappFakeToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";
import { postSlackWebhook, postWhatsAppWebhook } from "../helpers/sign.ts";

const start = e2eResources();
const WA_SECRET = "e2e-held-part-wa-secret-012345678";
const SLACK_SECRET = "e2e-held-part-slack-secret-0123456";
/** Beyond hold_seconds, what a set-aside and the next answer may take: a retry's backoff, a model turn, the sends. */
const MARGIN_MS = 8000;

/** A fenced block of 300 long lines: far over any platform's message, so it goes as snippet.py. */
const FENCE = `\`\`\`python\n${Array.from({ length: 300 }, (_, i) => `print("line ${i}: a long script that cannot fit one message")`).join("\n")}\n\`\`\``;
const SCRIPT_ANSWER = `Here is the script:\n\n${FENCE}\n\nRun it with python3.`;
/** Slack takes 40,000 characters in a message: its script is 800 such lines, so that it too goes as snippet.py. */
const SLACK_FENCE = `\`\`\`python\n${Array.from({ length: 800 }, (_, i) => `print("line ${i}: a long script that cannot fit one message")`).join("\n")}\n\`\`\``;
const SLACK_SCRIPT_ANSWER = `Here is the script:\n\n${SLACK_FENCE}\n\nRun it with python3.`;
const NEXT_ANSWER = "It is noon by the harbour clock.";

/** The status the daemon's health report gives a channel. */
async function channelStatus(daemon: RunningDaemon, name: string): Promise<string | undefined> {
  const report = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { channels: Array<{ name: string; status: string }> };
  return report.channels.find((c) => c.name === name)?.status;
}

/** In the file's place, the code's text, whole, before the answer to the next question, which comes once. */
function expectInlineThenAnswer(texts: string[]): void {
  const inline = texts.filter((t) => t.includes("a long script that cannot fit"));
  expect(inline[0]).toStartWith("snippet.py:");
  expect(inline.join("\n")).toContain("line 299:");
  expect(texts.indexOf(NEXT_ANSWER)).toBeGreaterThan(texts.indexOf(inline.at(-1)!));
  expect(texts.filter((t) => t === NEXT_ANSWER)).toHaveLength(1);
}

/** Whether the home's inbox is empty: the turns it accepted are done (their replies recorded). */
function inboxDone(home: TestHome): boolean {
  const db = new Database(join(home.home, "fermix.db"), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM inbox").get() as { n: number }).n === 0;
  } finally {
    db.close();
  }
}

test("Telegram refusing documents only: after a restart, the next question is answered within hold_seconds, after the code inline", async () => {
  const hold = 6;
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      tomlTable("fermix_core.delivery", { hold_seconds: hold }) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }),
  );
  // As a third-party Bot API server does: every sendDocument gets a 500, every text goes through.
  telegram.failNext("sendDocument", { error_code: 500, description: "Internal Server Error" }, 1000);
  model.reply(reply.text(SCRIPT_ANSWER), reply.text(NEXT_ANSWER));

  const first = await start.daemon(home);
  telegram.pushMessage(telegram.message.text("give me the script"));
  await until("the refused document", () => telegram.calls("sendDocument").some((c) => c.status === 500), 20_000);
  await until("the turn to be done", () => inboxDone(home));
  // Restarted while the document is held (well inside its hold).
  expect(await first.stop("SIGTERM")).toBe(0);
  expect(telegram.visibleTexts(ALICE.id).some((t) => t.includes("snippet.py:"))).toBe(false);

  const restartedAt = Date.now();
  const second = await start.daemon(home);
  const askedAt = Date.now();
  telegram.pushMessage(telegram.message.text("what time is it?"));
  await until("the next answer", () => telegram.visibleTexts(ALICE.id).includes(NEXT_ANSWER), hold * 1000 + MARGIN_MS + 5000);
  expect(Date.now() - askedAt).toBeLessThan(hold * 1000 + MARGIN_MS);

  // The document was still being retried after the restart, and never went.
  expect(telegram.calls("sendDocument").filter((c) => c.at >= restartedAt).length).toBeGreaterThanOrEqual(1);
  expect(telegram.calls("sendDocument").every((c) => c.status === 500)).toBe(true);
  expect(second.logs()).toContain("a part the platform keeps refusing was set aside; the user is told");
  // In its place, the code's text, whole, before the answer to the next question.
  const texts = telegram.visibleTexts(ALICE.id);
  const inline = texts.filter((t) => t.includes("a long script that cannot fit"));
  expect(inline[0]).toStartWith("snippet.py:");
  expect(inline.join("\n")).toContain("line 299:");
  expect(texts.indexOf(NEXT_ANSWER)).toBeGreaterThan(texts.indexOf(inline.at(-1)!));
  expect(texts.filter((t) => t === NEXT_ANSWER)).toHaveLength(1);
  expect(model.requests).toHaveLength(2);
}, 90_000);

test("Telegram answering 500 to every call, then back: nothing is set aside however long past hold_seconds; the reply arrives whole, its file as a file", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      tomlTable("fermix_core.delivery", { hold_seconds: 2 }) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      `streaming = "off"\n`,
  );
  // Slow enough that the outage begins before the answer is there to send.
  model.reply(reply.slow(1500, "Here is the script:\n\n", FENCE, "\n\nRun it with python3."));
  const daemon = await start.daemon(home);
  telegram.pushMessage(telegram.message.text("give me the script"));
  await model.waitForRequests(1);
  const outage = telegram.outage(500);
  await until("a refused reply", () => daemon.logs().includes("reply part not delivered; retrying"), 20_000);
  // The outage lasts 15 s, seven times the hold: nothing may be set aside in it.
  await Bun.sleep(15_000);
  expect(daemon.logs()).not.toContain("set aside");
  expect(telegram.visibleTexts(ALICE.id)).toEqual([]);
  outage.end();

  await until("the file, after the outage", () => telegram.calls("sendDocument").some((c) => c.status === 200), 90_000);
  const texts = telegram.visibleTexts(ALICE.id);
  expect(texts.filter((t) => t.includes("Here is the script:"))).toHaveLength(1);
  expect(texts.some((t) => t.includes("snippet.py:") || t.includes("couldn't"))).toBe(false);
  expect(telegram.calls("sendDocument").filter((c) => c.status === 200)).toHaveLength(1);
  expect(daemon.logs()).not.toContain("set aside");
}, 150_000);

test("WhatsApp refusing media uploads: the next question is answered within hold_seconds, after the code inline, and the channel is not left degraded", async () => {
  const hold = 4;
  const model = await start.model();
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      tomlTable("fermix_core.delivery", { hold_seconds: hold }) +
      whatsappFakeToml(wa, { appSecret: WA_SECRET, ownerUserId: WA_USER.wa_id, verifyToken: "e2e-held-part-verify" }),
  );
  wa.failNext("media", { status: 500, code: 1, message: "(#1) An unknown error occurred" }, 1000);
  model.reply(reply.text(SCRIPT_ANSWER), reply.text(NEXT_ANSWER));
  const daemon = await start.daemon(home);
  const ask = async (text: string) => expect((await postWhatsAppWebhook(daemon.url, JSON.stringify(wa.webhook.text(text)), WA_SECRET)).status).toBe(200);

  await ask("give me the script");
  await until("the refused upload", () => wa.calls("media").some((c) => c.status === 500), 20_000);
  const askedAt = Date.now();
  await ask("what time is it?");
  await until("the next answer", () => wa.visibleTexts(WA_USER.wa_id).includes(NEXT_ANSWER), hold * 1000 + MARGIN_MS + 5000);
  expect(Date.now() - askedAt).toBeLessThan(hold * 1000 + MARGIN_MS);

  expect(wa.calls("media").length).toBeGreaterThan(1);
  expect(daemon.logs()).toContain("a part the platform keeps refusing was set aside; the user is told");
  const texts = wa.visibleTexts(WA_USER.wa_id);
  const inline = texts.filter((t) => t.includes("a long script that cannot fit"));
  expect(inline[0]).toStartWith("snippet.py:");
  expect(inline.join("\n")).toContain("line 299:");
  expect(texts.indexOf(NEXT_ANSWER)).toBeGreaterThan(texts.indexOf(inline.at(-1)!));
  // The channel takes messages: health does not say its sends are failing.
  const report = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { channels: Array<{ name: string; status: string }> };
  expect(report.channels.find((c) => c.name === "whatsapp")?.status).toBe("ready");
}, 90_000);

test("Slack refusing file uploads: the next question is answered within hold_seconds, after the code inline, and the channel is not left degraded", async () => {
  const hold = 4;
  const model = await start.model();
  const slack = start.slack();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      tomlTable("fermix_core.delivery", { hold_seconds: hold }) +
      slackToml({ botToken: slack.token, signingSecret: SLACK_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
  );
  // Every upload's first step answers 500, as a Slack server in trouble does; messages go through.
  slack.serverErrorNext("files.getUploadURLExternal", 500, 1000);
  model.reply(reply.text(SLACK_SCRIPT_ANSWER), reply.text(NEXT_ANSWER));
  const daemon = await start.daemon(home);
  const ask = async (text: string) => expect((await postSlackWebhook(daemon.url, JSON.stringify(slack.events.dm(text)), SLACK_SECRET)).status).toBe(200);

  await ask("give me the script");
  await until("the refused upload", () => slack.calls("files.getUploadURLExternal").some((c) => c.status === 500), 20_000);
  const askedAt = Date.now();
  await ask("what time is it?");
  await until("the next answer", () => slack.visibleTexts(SLACK_DM).includes(NEXT_ANSWER), hold * 1000 + MARGIN_MS + 5000);
  expect(Date.now() - askedAt).toBeLessThan(hold * 1000 + MARGIN_MS);

  expect(slack.calls("files.getUploadURLExternal").length).toBeGreaterThan(1);
  expect(slack.calls("files.getUploadURLExternal").every((c) => c.status === 500)).toBe(true);
  expect(slack.calls("files.completeUploadExternal")).toHaveLength(0);
  expect(daemon.logs()).toContain("a part the platform keeps refusing was set aside; the user is told");
  expectInlineThenAnswer(slack.visibleTexts(SLACK_DM));
  // The channel takes messages: health does not say its sends are failing.
  expect(await channelStatus(daemon, "slack")).toBe("ready");
}, 90_000);

test("Discord refusing file uploads: the next question is answered within hold_seconds, after the code inline, and the channel is not left degraded", async () => {
  const hold = 4;
  const model = await start.model();
  const discord = start.discord();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      tomlTable("fermix_core.delivery", { hold_seconds: hold }) +
      discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase }),
  );
  // Every message create carrying a file answers 500; those with text only go through.
  discord.rest.failUploadsNext("messages.create", 1000);
  model.reply(reply.text(SCRIPT_ANSWER), reply.text(NEXT_ANSWER));
  const daemon = await start.daemon(home);
  await discord.gateway.waitForLive(15_000);
  const uploads = () => discord.calls("messages.create").filter((c) => c.files.length > 0);

  discord.userMessage("give me the script");
  await until("the refused upload", () => uploads().some((c) => c.status === 500), 20_000);
  const askedAt = Date.now();
  discord.userMessage("what time is it?");
  await until("the next answer", () => discord.visibleTexts(DISCORD_DM).includes(NEXT_ANSWER), hold * 1000 + MARGIN_MS + 5000);
  expect(Date.now() - askedAt).toBeLessThan(hold * 1000 + MARGIN_MS);

  expect(uploads().length).toBeGreaterThan(1);
  expect(uploads().every((c) => c.status === 500)).toBe(true);
  expect(daemon.logs()).toContain("a part the platform keeps refusing was set aside; the user is told");
  expectInlineThenAnswer(discord.visibleTexts(DISCORD_DM));
  // The channel takes messages: health does not say its sends are failing.
  expect(await channelStatus(daemon, "discord")).toBe("ready");
}, 90_000);

test("Signal refusing attachments: the next question is answered within hold_seconds, after the code inline, and the channel is not left degraded", async () => {
  const hold = 4;
  const model = await start.model();
  const signal = start.signal();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      tomlTable("fermix_core.delivery", { hold_seconds: hold }) +
      signalToml({ account: signal.account, cliPath: signal.cliPath, attachmentsDir: signal.attachmentsDir, ownerUserId: SIGNAL_ALICE.number }),
  );
  model.reply(reply.text(SCRIPT_ANSWER), reply.text(NEXT_ANSWER));
  const daemon = await start.daemon(home);
  // signal-cli's I/O error (-3) for every send that names an attachment; text-only sends go through.
  await signal.failAttachmentSends({ code: -3, message: "Failed to send message due to a network error" }, 1000);
  const uploads = () => signal.calls("send").filter((c) => (c.files?.length ?? 0) > 0);
  const texts = () => signal.visible(SIGNAL_ALICE.uuid).map((m) => m.text);

  await signal.receive(signal.envelope.text("give me the script"));
  await until("the refused attachment", () => uploads().some((c) => c.response?.error !== undefined), 20_000);
  const askedAt = Date.now();
  await signal.receive(signal.envelope.text("what time is it?"));
  await until("the next answer", () => texts().includes(NEXT_ANSWER), hold * 1000 + MARGIN_MS + 5000);
  expect(Date.now() - askedAt).toBeLessThan(hold * 1000 + MARGIN_MS);

  expect(uploads().length).toBeGreaterThan(1);
  expect(uploads().every((c) => c.response?.error?.code === -3)).toBe(true);
  expect(daemon.logs()).toContain("a part the platform keeps refusing was set aside; the user is told");
  expectInlineThenAnswer(texts());
  // The channel takes messages: health does not say its sends are failing.
  expect(await channelStatus(daemon, "signal")).toBe("ready");
}, 90_000);
