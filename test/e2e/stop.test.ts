/**
 * Conversation control on every chat channel, with the compiled binary: the
 * owner starts a slow streaming answer, sends a second ordinary message, then
 * /stop. The model's request is aborted within a second of /stop reaching the
 * daemon; the second message never reaches the model; nothing of the stopped
 * answer is sent after the "Stopped" reply; the next message is answered
 * normally; and a restart replays none of what was dropped. In draft mode the
 * sealed cards stay and only the live one is deleted. /help, /whoami and
 * /tasks sent during a turn are answered without waiting for it, and a turn
 * replayed at start after a crash holds up nothing: /stop aborts it at once.
 */

import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { DISCORD_ALICE, DISCORD_DM, type DiscordFake } from "../fakes/discord.ts";
import { type FakeModel, lastInputParts, reply } from "../fakes/model-server.ts";
import { type RecordedSignalCall, SIGNAL_ALICE, type SignalFake } from "../fakes/signal.ts";
import { SLACK_ALICE, SLACK_DM, type SlackFake } from "../fakes/slack.ts";
import { ALICE, type TelegramFake } from "../fakes/telegram.ts";
import { WA_USER, type WhatsAppFake } from "../fakes/whatsapp.ts";
import { type RunningDaemon, startDaemon } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, discordToml, providerToml, signalToml, slackToml, telegramToml, whatsappFakeToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";
import { postSlackWebhook, postWhatsAppWebhook } from "../helpers/sign.ts";
import { within } from "../helpers/wait.ts";

const start = e2eResources();
const SLACK_SECRET = "e2e-stop-slack-signing-secret-0123";
const WA_SECRET = "e2e-stop-whatsapp-app-secret-0123";

/** A long answer in paragraphs, streamed slowly (~10 s): long enough to seal draft cards before /stop. */
const PARAGRAPH = (n: number) => `Paragraph ${n} of the long answer goes on about the weather, the sea and the hills for a while.`;
const LONG = Array.from({ length: 40 }, (_, i) => `${PARAGRAPH(i + 1)}\n\n`);
/**
 * After "Stopped": the model sent a paragraph every 250 ms and a draft is
 * edited at most once a second, so a stray edit or part of the stopped
 * answer would go within a second or two; 1.5 s after the reply holds that
 * on a loaded machine.
 */
const STRAY_MS = 1500;
/** After a restart: an inbox entry the restart replays would reach the model within milliseconds of the start. */
const REPLAY_MS = 1500;

/** What the test needs of a channel: send as the owner, and read what the bot sent, in order, with times. */
interface Surface {
  /** Send a text as the owner; resolves once the daemon has taken it (its ack). */
  send(text: string): Promise<number>;
  /** Every message the bot created or edited, in the order the platform received them. */
  outbound(): Array<{ at: number; text: string }>;
  /** The bot's messages as the owner sees them now. */
  visible(): string[];
  /** Bot messages deleted so far, by their last text. */
  deleted(): string[];
}

function telegramSurface(telegram: TelegramFake): Surface {
  return {
    async send(text) {
      const [update] = telegram.pushMessage(telegram.message.text(text));
      // Taken: the daemon committed it and asked for the next batch.
      await telegram.waitForRequest("getUpdates", (r) => Number(r.body.offset) > update!.update_id, 5000);
      return Date.now();
    },
    outbound: () =>
      [...telegram.calls("sendMessage"), ...telegram.calls("editMessageText")]
        .filter((c) => String(c.body.chat_id) === String(ALICE.id))
        .sort((a, b) => a.at - b.at)
        .map((c) => ({ at: c.at, text: String(c.body.text ?? "") })),
    visible: () => telegram.visibleTexts(ALICE.id),
    deleted: () =>
      telegram
        .botMessages(ALICE.id)
        .filter((e) => e.deleted)
        .map((e) => e.text ?? ""),
  };
}

function slackSurface(slack: SlackFake, daemon: () => RunningDaemon): Surface {
  return {
    async send(text) {
      const body = JSON.stringify(slack.events.dm(text));
      const res = await postSlackWebhook(daemon().url, body, SLACK_SECRET);
      expect(res.status).toBe(200);
      return Date.now();
    },
    outbound: () =>
      [...slack.calls("chat.postMessage"), ...slack.calls("chat.update")]
        .sort((a, b) => a.at - b.at)
        .map((c) => ({ at: c.at, text: String(c.body.text ?? "") })),
    visible: () => slack.visibleTexts(SLACK_DM),
    deleted: () =>
      slack
        .messages(SLACK_DM)
        .filter((m) => m.sender === "bot" && m.deleted)
        .map((m) => m.text),
  };
}

function whatsappSurface(wa: WhatsAppFake, daemon: () => RunningDaemon): Surface {
  return {
    async send(text) {
      const body = JSON.stringify(wa.webhook.text(text));
      const res = await postWhatsAppWebhook(daemon().url, body, WA_SECRET);
      expect(res.status).toBe(200);
      return Date.now();
    },
    outbound: () =>
      wa
        .calls("messages")
        .filter((c) => (c.body as { type?: string }).type === "text")
        .map((c) => ({ at: c.at, text: String((c.body as { text?: { body?: string } }).text?.body ?? "") })),
    visible: () => wa.visibleTexts(WA_USER.wa_id),
    deleted: () => [],
  };
}

/**
 * The daemon's "taken" for channels whose platform gets no ack (a gateway
 * event, a line on signal-cli's stdout): `push` the message, then wait until
 * the daemon has committed one more inbound key of `channel` to its database.
 */
function committedBy(home: TestHome, channel: string): (push: () => unknown) => Promise<number> {
  let db: Database | undefined;
  start.defer(() => db?.close());
  const count = () => {
    db ??= new Database(join(home.home, "fermix.db"), { readonly: true });
    return (db.query("SELECT count(*) AS n FROM idempotency WHERE channel = ?1 AND scope = 'inbound'").get(channel) as { n: number }).n;
  };
  return async (push) => {
    const before = count();
    await push();
    await until(`the daemon to commit the ${channel} message`, () => count() > before, 5000);
    return Date.now();
  };
}

function discordSurface(discord: DiscordFake, committed: ReturnType<typeof committedBy>): Surface {
  return {
    send: (text) => committed(() => discord.userMessage(text)),
    outbound: () =>
      discord.requests
        .filter((r) => (r.api === "messages.create" || r.api === "messages.edit") && r.path.includes(`/channels/${DISCORD_DM}/`))
        .map((r) => ({ at: r.at, text: String(r.body.content ?? "") })),
    visible: () => discord.visibleTexts(DISCORD_DM),
    deleted: () =>
      discord
        .botMessages(DISCORD_DM)
        .filter((m) => m.deleted)
        .map((m) => m.content),
  };
}

function signalSurface(signal: SignalFake, committed: ReturnType<typeof committedBy>): Surface {
  const toAlice = (c: RecordedSignalCall) => [c.request.params?.recipient].flat().map(String).includes(SIGNAL_ALICE.uuid);
  return {
    send: (text) => committed(() => signal.receive(signal.envelope.text(text))),
    // Every send the bot attempted, answered or not: signal-cli has no edits, so each part is a send.
    outbound: () =>
      signal
        .calls("send")
        .filter(toAlice)
        .map((c) => ({ at: c.at, text: String(c.request.params?.message ?? "") })),
    visible: () => signal.visible(SIGNAL_ALICE.uuid).map((m) => m.text),
    deleted: () => {
      const sent = signal.calls("send").filter((c) => c.response?.result);
      return signal
        .calls("remoteDelete")
        .filter((c) => toAlice(c) && c.response?.result)
        .map((c) => String(sent.find((s) => s.response!.result!.timestamp === c.request.params?.targetTimestamp)?.request.params?.message ?? ""));
    },
  };
}

/**
 * The scenario every channel goes through. `cards`: wait for this many
 * answer messages on screen before /stop (2 in draft mode: one sealed card,
 * one live).
 */
async function stopScenario(surface: Surface, model: FakeModel, opts: { cards: number; draft: boolean; afterStop?: () => Promise<void> }) {
  model.reply(reply.slow(250, ...LONG), reply.text("A fresh, ordinary answer."));
  await surface.send("tell me a long story");
  await model.waitForRequests(1);
  const answerOnScreen = () => surface.visible().filter((t) => t.includes("Paragraph")).length;
  await until(`${opts.cards} answer message(s) on screen`, () => answerOnScreen() >= opts.cards, 20_000);
  const aborted = model.requests[0]!.untilAborted.then(() => Date.now());

  await surface.send("and while you're at it, the second thing");
  const stopAt = await surface.send("/stop");
  const abortedAt = await within(aborted, "the model call to be aborted", 5000);
  // Aborted within a second of /stop reaching the daemon (it may even land before the ack comes back).
  expect(abortedAt - stopAt).toBeLessThan(1000);

  await until("the Stopped reply", () => surface.visible().some((t) => t.startsWith("Stopped")));
  const stopped = surface.visible().find((t) => t.startsWith("Stopped"))!;
  expect(stopped).toContain("1 running reply");
  expect(stopped).toContain("1 queued message");
  await Bun.sleep(STRAY_MS);

  // Nothing of the stopped answer arrives after "Stopped": no new message, no edit.
  const out = surface.outbound();
  const stoppedIndex = out.findIndex((o) => o.text.includes("Stopped"));
  expect(stoppedIndex).toBeGreaterThan(-1);
  expect(out.slice(stoppedIndex + 1).filter((o) => o.text.includes("Paragraph"))).toEqual([]);
  // The second message never reached the model.
  expect(model.requests).toHaveLength(1);

  if (opts.draft) {
    // The sealed card stays; only the live one went.
    expect(surface.visible().filter((t) => t.includes("Paragraph 1 "))).toHaveLength(1);
    expect(surface.deleted().filter((t) => t.includes("Paragraph"))).toHaveLength(1);
  } else {
    expect(surface.deleted()).toEqual([]);
  }

  await opts.afterStop?.();

  // The next message gets an ordinary answer.
  await surface.send("ok, something else");
  await until("the next answer", () => surface.visible().some((t) => t.includes("A fresh, ordinary answer.")));
  expect(model.requests).toHaveLength(2);
  expect(JSON.stringify(model.requests[1]!.body)).toContain("ok, something else");
  expect(JSON.stringify(model.requests[1]!.body)).not.toContain("the second thing");
}

/** A SIGKILL right after "Stopped", then a restart: nothing /stop dropped is replayed, nothing more reaches the model. */
async function restartReplaysNothing(home: TestHome, daemon: RunningDaemon, model: FakeModel): Promise<RunningDaemon> {
  await daemon.stop("SIGKILL");
  const again = await startDaemon(home.env);
  start.defer(async () => {
    if (again.proc.exitCode === null) await again.stop("SIGKILL");
  });
  await Bun.sleep(REPLAY_MS);
  expect(model.requests).toHaveLength(1);
  expect(again.logs()).not.toContain("replaying unfinished inbox entries");
  return again;
}

for (const streaming of ["draft", "block"] as const) {
  test(`Telegram (${streaming}): /stop aborts the model at once, drops the queued message, and has the last word`, async () => {
    const model = await start.model();
    const telegram = start.telegram();
    const home = start.home();
    home.writeConfig(
      providerToml(model.url) +
        ACP_OFF +
        telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
        `streaming = "${streaming}"\n`,
    );
    const daemon = await start.daemon(home);
    await stopScenario(telegramSurface(telegram), model, {
      cards: streaming === "draft" ? 2 : 1,
      draft: streaming === "draft",
      ...(streaming === "draft" ? { afterStop: async () => void (await restartReplaysNothing(home, daemon, model)) } : {}),
    });
  }, 90_000);

  test(`Slack (${streaming}): /stop aborts the model at once, drops the queued message, and has the last word`, async () => {
    const model = await start.model();
    const slack = start.slack();
    const home = start.home();
    home.writeConfig(
      providerToml(model.url) +
        CHANNELS_OFF +
        slackToml({ botToken: slack.token, signingSecret: SLACK_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
        `streaming = "${streaming}"\n`,
    );
    let daemon!: RunningDaemon;
    const surface = slackSurface(slack, () => daemon);
    daemon = await start.daemon(home);
    await stopScenario(surface, model, { cards: streaming === "draft" ? 2 : 1, draft: streaming === "draft" });
  }, 90_000);

  test(`Discord (${streaming}): /stop aborts the model at once, drops the queued message, and has the last word`, async () => {
    const model = await start.model();
    const discord = start.discord();
    const home = start.home();
    home.writeConfig(
      providerToml(model.url) + CHANNELS_OFF + discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase, streaming }),
    );
    await start.daemon(home);
    await discord.gateway.waitForLive(10_000);
    await stopScenario(discordSurface(discord, committedBy(home, "discord")), model, { cards: streaming === "draft" ? 2 : 1, draft: streaming === "draft" });
  }, 90_000);
}

test("Signal (block; it cannot edit, so no draft): /stop aborts the model at once, drops the queued message, has the last word; a restart replays nothing", async () => {
  const model = await start.model();
  const signal = start.signal();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      signalToml({ account: signal.account, cliPath: signal.cliPath, attachmentsDir: signal.attachmentsDir, ownerUserId: SIGNAL_ALICE.number }),
  );
  let daemon = await start.daemon(home);
  await signal.waitForStarts(1);
  await stopScenario(signalSurface(signal, committedBy(home, "signal")), model, {
    cards: 1,
    draft: false,
    afterStop: async () => {
      daemon = await restartReplaysNothing(home, daemon, model);
      // The new daemon's own signal-cli is the one that hears the next message.
      await signal.waitForStarts(2);
    },
  });
}, 90_000);

test("WhatsApp (block): /stop aborts the model at once, drops the queued message, has the last word; a restart replays nothing", async () => {
  const model = await start.model();
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) + CHANNELS_OFF + whatsappFakeToml(wa, { appSecret: WA_SECRET, ownerUserId: WA_USER.wa_id, verifyToken: "e2e-stop-verify" }),
  );
  let daemon!: RunningDaemon;
  const surface = whatsappSurface(wa, () => daemon);
  daemon = await start.daemon(home);
  await stopScenario(surface, model, {
    cards: 1,
    draft: false,
    afterStop: async () => {
      daemon = await restartReplaysNothing(home, daemon, model);
    },
  });
}, 90_000);

for (const channel of ["Telegram", "Slack"] as const) {
  test(`${channel}: a turn replayed at start holds nothing up: /stop aborts it at once and the next message is answered`, async () => {
    const model = await start.model();
    const home = start.home();
    let daemon!: RunningDaemon;
    let surface: Surface;
    if (channel === "Telegram") {
      const telegram = start.telegram();
      home.writeConfig(providerToml(model.url) + ACP_OFF + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }));
      surface = telegramSurface(telegram);
    } else {
      const slack = start.slack();
      home.writeConfig(
        providerToml(model.url) +
          CHANNELS_OFF +
          slackToml({ botToken: slack.token, signingSecret: SLACK_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
      );
      surface = slackSurface(slack, () => daemon);
    }
    // A turn cut by a crash: it stays in the inbox.
    model.reply(reply.hang("Let me th"));
    daemon = await start.daemon(home);
    await surface.send("please do not lose this message");
    await model.waitForRequests(1);
    await daemon.stop("SIGKILL");

    // The replayed request hangs too; the conversation must still answer.
    model.reply(reply.hang("Let me think ag"), reply.text("A fresh, ordinary answer."));
    daemon = await start.daemon(home);
    const replayed = (await model.waitForRequests(2))[1]!;
    expect(daemon.logs()).toContain("replaying unfinished inbox entries");
    expect(JSON.stringify(replayed.body)).toContain("please do not lose this message");
    const aborted = replayed.untilAborted.then(() => Date.now());

    const stopAt = await surface.send("/stop");
    const abortedAt = await within(aborted, "the replayed model call to be aborted", 5000);
    expect(abortedAt - stopAt).toBeLessThan(1000);
    await until("the Stopped reply", () => surface.visible().some((t) => t.startsWith("Stopped 1 running reply")));

    await surface.send("ok, something else");
    await until("the next answer", () => surface.visible().some((t) => t.includes("A fresh, ordinary answer.")));
    expect(model.requests).toHaveLength(3);
    expect(JSON.stringify(model.requests[2]!.body)).toContain("ok, something else");

    // The stopped replay is done with: nothing is left in the inbox for the next start.
    const db = new Database(join(home.home, "fermix.db"), { readonly: true });
    start.defer(() => db.close());
    await until("an empty inbox", () => (db.query("SELECT count(*) AS n FROM inbox").get() as { n: number }).n === 0, 5000);
  }, 60_000);
}

/** One daemon serving the owner on Telegram and on WhatsApp, both against their fakes. */
async function telegramAndWhatsApp() {
  const model = await start.model();
  const telegram = start.telegram();
  const wa = start.whatsapp();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      whatsappFakeToml(wa, { appSecret: WA_SECRET, ownerUserId: WA_USER.wa_id, verifyToken: "e2e-stop-verify" }),
  );
  const daemon = await start.daemon(home);
  return { model, telegram, wa, daemon };
}

test("/help during a slow turn is answered before the turn ends, on Telegram and WhatsApp", async () => {
  const { model, telegram, wa, daemon } = await telegramAndWhatsApp();
  for (const surface of [telegramSurface(telegram), whatsappSurface(wa, () => daemon)]) {
    model.reset();
    model.reply(reply.slow(300, ...LONG.slice(0, 20)));
    await surface.send("a slow one please");
    await model.waitForRequests(1);
    await surface.send("/help");
    await until("the /help reply", () => surface.visible().some((t) => t.includes("Commands")), 5000);
    // The slow answer is still being written: /help did not wait for it.
    expect(model.requests[0]!.aborted).toBe(false);
    expect(surface.visible().some((t) => t.includes("Paragraph 20"))).toBe(false);
    await surface.send("/stop");
    await until("stopped", () => surface.visible().some((t) => t.startsWith("Stopped")));
  }
}, 90_000);

test("/whoami and /tasks during a turn that hangs are answered while it still hangs, on Telegram and WhatsApp", async () => {
  const { model, telegram, wa, daemon } = await telegramAndWhatsApp();
  const surfaces = [
    { surface: telegramSurface(telegram), id: String(ALICE.id) },
    { surface: whatsappSurface(wa, () => daemon), id: WA_USER.wa_id },
  ];
  for (const { surface, id } of surfaces) {
    model.reset();
    // The turn never ends by itself: only an answer that does not wait for it can arrive.
    model.reply(reply.hang("Let me think about"));
    await surface.send("think hard about this");
    await model.waitForRequests(1);
    await surface.send("/whoami");
    await until("the /whoami reply", () => surface.visible().some((t) => t.includes(`Your id on`) && t.includes(id)), 5000);
    await surface.send("/tasks");
    await until("the /tasks reply", () => surface.visible().some((t) => t.includes("No background tasks and no scheduled jobs")), 5000);
    // Still hanging, and neither command reached the model.
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.aborted).toBe(false);
    await surface.send("/stop");
    await until("stopped", () => surface.visible().some((t) => t.startsWith("Stopped 1 running reply")));
  }
}, 60_000);

test("Telegram: an album sent during a running turn is still one later turn, and the text after it comes after it", async () => {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      `streaming = "off"\nalbum_debounce_ms = 400\n`,
  );
  await start.daemon(home);
  model.reply(reply.slow(200, "Working ", "on ", "the ", "first ", "thing ", "slowly."), reply.text("Two photos, nice."), reply.text("About the text."));
  const surface = telegramSurface(telegram);
  await surface.send("first thing");
  await model.waitForRequests(1);
  telegram.pushMessage(...telegram.message.album([{ photo: { caption: "front" } }, { photo: {} }]));
  telegram.pushMessage(telegram.message.text("which one is better?"));
  await until("three answers", () => surface.visible().some((t) => t.includes("About the text.")), 20_000);
  const answers = surface.visible().filter((t) => /Working|Two photos|About the text/.test(t));
  expect(answers.map((t) => t.split(" ")[0])).toEqual(["Working", "Two", "About"]);
  expect(model.requests).toHaveLength(3);
  const album = lastInputParts(model.requests[1]!);
  expect(album.filter((c) => c.type === "input_image")).toHaveLength(2);
  expect(JSON.stringify(model.requests[2]!.body.input!.at(-1))).toContain("which one is better?");
}, 60_000);
