/**
 * One part a platform keeps refusing must not hold a chat, with the
 * compiled binary: a code block too big for a message goes as a document
 * the Bot API answers with 500 every time (and takes every text). A new
 * question is answered within `hold_seconds` and a margin, after the code's
 * text inline — also when the daemon is restarted while the document is
 * still being retried. The same on WhatsApp with media uploads refused. And
 * an outage (every call failing) still holds everything, sets nothing aside,
 * and delivers the reply whole — the file as a file — once it is over.
 */

import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { reply } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { WA_USER } from "../fakes/whatsapp.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, telegramToml, tomlTable, whatsappFakeToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";
import { postWhatsAppWebhook } from "../helpers/sign.ts";

const start = e2eResources();
const WA_SECRET = "e2e-held-part-wa-secret-012345678";
/** Beyond hold_seconds, what a set-aside and the next answer may take: a retry's backoff, a model turn, the sends. */
const MARGIN_MS = 8000;

/** A fenced block of 300 long lines: far over any platform's message, so it goes as snippet.py. */
const FENCE = `\`\`\`python\n${Array.from({ length: 300 }, (_, i) => `print("line ${i}: a long script that cannot fit one message")`).join("\n")}\n\`\`\``;
const SCRIPT_ANSWER = `Here is the script:\n\n${FENCE}\n\nRun it with python3.`;
const NEXT_ANSWER = "It is noon by the harbour clock.";

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
