/**
 * Failures an operator can see and a user can trust, with the compiled
 * binary and loopback fakes: every provider fault is in the log and told in
 * one clean line; a cut stream keeps what was read; an attachment that fails
 * is retried, then sent inline; block streaming never holds text back behind
 * a big code fence; a poll server that does not hold polls is not hammered;
 * a huge reply becomes a file (streamed in drafts or not); an outage at start is not called a bad token;
 * an exposed home shows in health; a wrong TOML type stops the load.
 */
import { expect, test } from "bun:test";
import { chmodSync } from "node:fs";
import { reply } from "../fakes/model-server.ts";
import { SLACK_ALICE } from "../fakes/slack.ts";
import { ALICE } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, slackToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();
/**
 * After what a test waits for has arrived, how long nothing more may: a
 * part sent twice would follow the first at once (the retrier sends a chat's
 * parts back to back); 1.5 s holds that on a loaded machine.
 */
const NOTHING_MORE_MS = 1500;
/** How long polls are counted against a server that answers them at once: about one a second makes 3 or 4, a loop that never waits hundreds. */
const POLL_RATE_WINDOW_MS = 3000;

/** The fake model, the Telegram fake and a home whose owner is Alice; `extra` is appended to the Telegram table. */
async function telegramSetup(extra = "", core = "", telegramOptions?: { holdPolls?: boolean }) {
  const model = await start.model();
  const telegram = start.telegram(telegramOptions);
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) + core + ACP_OFF + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + extra,
  );
  return { model, telegram, home };
}

/** A user-facing fault line: one message, no host, no URL, no doubled punctuation. */
function expectCleanFault(text: string | undefined, words: string): void {
  expect(text).toBeDefined();
  expect(text!).toContain(words);
  expect(text!).not.toMatch(/https?:|127\.0\.0\.1|localhost|\.\.\s|\.\.$/);
}

test("a provider answering 500 three times: each retry and the failed turn are logged with status and attempts; the user gets one clean line", async () => {
  const { model, telegram, home } = await telegramSetup();
  model.reply(reply.serverError(500), reply.serverError(500), reply.serverError(500));
  const daemon = await start.daemon({ ...home, env: { ...home.env, FERMIX_LOG_LEVEL: "debug" } });
  telegram.pushMessage(telegram.message.text("hello?"));
  await until("the fault line", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("had an error")));
  expectCleanFault(
    telegram.visibleTexts(ALICE.id).find((t) => t.includes("had an error")),
    "model provider had an error on its side",
  );
  const logs = daemon.logs();
  expect(logs.match(/msg="model request failed; retrying"[^\n]*status=500/g)).toHaveLength(2);
  expect(logs).toMatch(/msg="turn failed: the model request failed"[^\n]*fault=server[^\n]*status=500[^\n]*attempts=3[^\n]*duration_ms=/);
  expect(logs).toMatch(/msg="turn failed: the model request failed"[^\n]*conversation=telegram:/);
});

test("a 429 with Retry-After is waited out and logged with the wait honoured; three of them end in the rate-limit line", async () => {
  const { model, telegram, home } = await telegramSetup();
  model.reply(reply.rateLimited(1), reply.text("Answered after the wait."));
  const daemon = await start.daemon(home);
  telegram.pushMessage(telegram.message.text("first"));
  await until("the answer", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Answered after the wait.")));
  expect(daemon.logs()).toMatch(/msg="model request failed; retrying"[^\n]*status=429[^\n]*retry_after_ms=1000/);

  model.reply(reply.rateLimited(0), reply.rateLimited(0), reply.rateLimited(0));
  telegram.pushMessage(telegram.message.text("second"));
  await until("the rate-limit line", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("limiting how fast")));
  expectCleanFault(
    telegram.visibleTexts(ALICE.id).find((t) => t.includes("limiting how fast")),
    "Please try again in a minute.",
  );
  expect(daemon.logs()).toMatch(/turn failed: the model request failed[^\n]*fault=rate_limited[^\n]*status=429/);
});

test("a stream cut mid-answer in draft mode: the text the user was reading stays, marked cut off, and the fault follows", async () => {
  const { model, telegram, home } = await telegramSetup();
  const partial = Array.from({ length: 6 }, (_, i) => `Part ${i + 1} of an answer that is being written slowly. `);
  // Written slowly, then the connection drops before the answer completes.
  model.reply({ kind: "stream", spec: { text: partial, delayMs: 250, end: "drop" } } as Parameters<typeof model.reply>[0]);
  const daemon = await start.daemon(home);
  telegram.pushMessage(telegram.message.text("write slowly"));
  await until("the cut-off line", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("cut off before it finished")), 20_000);
  const visible = telegram.visibleTexts(ALICE.id);
  const card = visible.find((t) => t.includes("Part 1 of an answer"));
  expect(card).toBeDefined();
  expect(card!).toContain("(cut off)");
  // Nothing the user read was deleted.
  expect(telegram.botMessages(ALICE.id).filter((e) => e.deleted && (e.text ?? "").includes("Part 1"))).toEqual([]);
  expectCleanFault(visible.at(-1), "The answer was cut off before it finished.");
  expect(daemon.logs()).toMatch(/turn failed: the model request failed[^\n]*fault=cut_off/);
});

test("a code block sent as a file: a 502 page then 200 delivers the file once; a document that keeps failing is sent inline and logged", async () => {
  const fence = `\`\`\`python\n${Array.from({ length: 300 }, (_, i) => `print("line ${i}: a long script that cannot fit one message")`).join("\n")}\n\`\`\``;
  const { model, telegram, home } = await telegramSetup(`streaming = "off"\n`, tomlTable("fermix_core.delivery", { retry_horizon_minutes: 0.1 }));
  model.reply(reply.text(`Here is the script:\n\n${fence}\n\nRun it with python3.`), reply.text(`Again:\n\n${fence}`));
  const daemon = await start.daemon(home);

  telegram.bareFailNext("sendDocument", 502);
  telegram.pushMessage(telegram.message.text("give me the script"));
  await until("the file", () => telegram.calls("sendDocument").some((c) => c.status === 200), 20_000);
  await Bun.sleep(NOTHING_MORE_MS);
  expect(telegram.calls("sendDocument").map((c) => c.status)).toEqual([502, 200]);
  expect(daemon.logs()).toMatch(/reply part not delivered; retrying[^\n]*status=502/);
  expect(daemon.logs()).not.toContain("undefined undefined");

  telegram.failNext("sendDocument", { error_code: 500, description: "Internal Server Error" }, 100);
  telegram.pushMessage(telegram.message.text("and again"));
  await until("the inline fallback", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("snippet.py:") && t.includes("line 0:")), 30_000);
  expect(daemon.logs()).toContain("an attachment could not be sent; its content follows inline");
  // The inline code goes as several messages: wait for the last one, not only the first.
  await until("the end of the inline code", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("line 299:")), 15_000);
  const inline = telegram.visibleTexts(ALICE.id).filter((t) => t.includes("a long script that cannot fit"));
  expect(inline.join("\n")).toContain("line 299:");
});

test("block streaming sends the text before a big code fence while the fence is still being written", async () => {
  const { model, telegram, home } = await telegramSetup(`streaming = "block"\n`);
  const lines = Array.from({ length: 90 }, (_, i) => `print("line ${i} of a long listing")\n`);
  model.reply(reply.slow(60, "Here comes the listing you asked for.\n\n```python\n", ...lines, "```\n\nDone."));
  await start.daemon(home);
  telegram.pushMessage(telegram.message.text("a long listing"));
  await until("the text before the fence", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("Here comes the listing")), 15_000);
  // The model is still writing the fence: its end has not been sent yet.
  expect(model.requests[0]!.aborted).toBe(false);
  expect(telegram.visibleTexts(ALICE.id).some((t) => t.includes("line 89 of"))).toBe(false);
  await until("the whole listing", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("line 89 of")), 20_000);
  const fence = telegram.visibleTexts(ALICE.id).find((t) => t.includes("line 0 of"))!;
  expect(fence).toContain("line 89 of");
});

test("a Bot API server that answers long polls at once is asked at most about once a second, and the log says why once", async () => {
  const { telegram, home } = await telegramSetup("", "", { holdPolls: false });
  const daemon = await start.daemon(home);
  await until("the poller to notice", () => daemon.logs().includes("answers long polls at once"), 10_000);
  const before = telegram.calls("getUpdates").length;
  await Bun.sleep(POLL_RATE_WINDOW_MS);
  const polls = telegram.calls("getUpdates").length - before;
  expect(polls).toBeGreaterThanOrEqual(1);
  expect(polls).toBeLessThanOrEqual(6);
  expect(daemon.logs().match(/answers long polls at once/g)).toHaveLength(1);
});

test("a reply over max_reply_parts arrives as its first part, a line saying so, and the whole answer as answer.md", async () => {
  const { model, telegram, home } = await telegramSetup(`streaming = "off"\n`, tomlTable("fermix_core", { max_reply_parts: 3 }));
  const section = (n: number) => `## Section ${n}\n\n${`Words of section ${n} go on and on to fill a message. `.repeat(80)}`;
  const answer = Array.from({ length: 10 }, (_, i) => section(i + 1)).join("\n\n");
  model.reply(reply.text(answer));
  await start.daemon(home);
  telegram.pushMessage(telegram.message.text("write ten sections"));
  // The first part, the line and then the file go in that order: once the file is in, the rest is.
  await telegram.waitForCall("sendDocument", () => true, 20_000);
  await until("the line about the file", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("answer.md")), 5000);
  const texts = telegram.visibleTexts(ALICE.id);
  expect(texts.filter((t) => t.includes("Words of section"))).toHaveLength(1);
  expect(texts.some((t) => t.includes("answer.md"))).toBe(true);
  const doc = telegram.calls("sendDocument")[0]!;
  expect(doc.files[0]!.filename).toBe("answer.md");
  expect(new TextDecoder().decode(doc.files[0]!.bytes)).toBe(answer.trim());
});

for (const [how, delayMs, chunks] of [
  // Faster than the draft is edited: what is left at the end is over the cap.
  ["lands at once after the draft opened", 20, (answer: string) => [answer.slice(0, 60), answer.slice(60)]],
  // Slower: the cards are sealed one by one until the cap stops them.
  ["streams in over seconds", 300, (answer: string) => answer.match(/[\s\S]{1,700}/g)!],
] as const) {
  test(`in draft streaming (Telegram's default), a reply over max_reply_parts that ${how}: its first part(s), a line saying so, and answer.md`, async () => {
    const { model, telegram, home } = await telegramSetup("", tomlTable("fermix_core", { max_reply_parts: 3 }));
    const section = (n: number) => `## Section ${n}\n\n${`Words of section ${n} go on and on to fill a message. `.repeat(20)}`;
    const answer = Array.from({ length: 12 }, (_, i) => section(i + 1)).join("\n\n");
    model.reply(reply.slow(delayMs, ...chunks(answer)));
    await start.daemon(home);
    telegram.pushMessage(telegram.message.text("write twelve sections"));
    await telegram.waitForCall("sendDocument", () => true, 30_000);
    await until("the line about the file", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("answer.md")), 5000);
    await Bun.sleep(NOTHING_MORE_MS);
    const texts = telegram.visibleTexts(ALICE.id);
    const parts = texts.filter((t) => t.includes("Words of section"));
    expect(parts.length).toBeGreaterThanOrEqual(1);
    expect(parts.length).toBeLessThanOrEqual(3);
    // What stays on screen is the start of the answer; its end is only in the file.
    expect(parts[0]!).toContain("Words of section 1 go on");
    expect(parts.join("\n")).not.toContain("Words of section 12");
    expect(texts.filter((t) => t.includes("answer.md"))).toHaveLength(1);
    expect(telegram.calls("sendMessage").length).toBeLessThanOrEqual(4);
    expect(telegram.calls("sendDocument")).toHaveLength(1);
    const doc = telegram.calls("sendDocument")[0]!;
    expect(doc.files[0]!.filename).toBe("answer.md");
    expect(new TextDecoder().decode(doc.files[0]!.bytes)).toBe(answer.trim());
  }, 60_000);
}

test("Slack answering 503 at start is logged as an outage, not as a rejected token", async () => {
  const model = await start.model();
  const slack = start.slack();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: "s-0123456789abcdef", ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
  );
  const outage = slack.outage(503);
  const daemon = await start.daemon(home);
  await until("the failed start", () => daemon.logs().includes("channel failed to start"), 10_000);
  expect(daemon.logs()).toContain("an outage, not the bot token");
  expect(daemon.logs()).not.toContain("did not accept the bot token");
  outage.end();
});

test("a home readable by others: fermix run warns, and health lists it until fixed", async () => {
  const { home } = await telegramSetup();
  chmodSync(home.home, 0o755);
  const daemon = await start.daemon(home);
  expect(daemon.logs()).toContain("file permissions expose fermix's data");
  const report = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { status: string; failures: string[] };
  expect(report.failures.join("\n")).toContain("is readable by other users (mode 755): run chmod 700");
  expect(report.status).not.toBe("ready");
});

test("owner_user_id = 42 (a number) stops fermix run with the key, the value and how to write it", async () => {
  const home = start.home();
  home.writeConfig(`${CHANNELS_OFF}\n[fermix_channels.slack]\nenabled = true\nowner_user_id = 42\n`);
  const result = await runFermix(["run"], home.env);
  expect(result.exitCode).not.toBe(0);
  expect(result.stderr).toContain('fermix_channels.slack.owner_user_id = 42 is not valid: expected a non-empty string (quote it: "42")');
});

test("a damaged database stops fermix run with the file named and what to do", async () => {
  const home = start.home();
  home.writeConfig(CHANNELS_OFF);
  await Bun.write(`${home.home}/fermix.db`, "this is not a SQLite database, it was overwritten by accident\n".repeat(200));
  const result = await runFermix(["run"], home.env);
  expect(result.exitCode).not.toBe(0);
  expect(result.stderr).toContain(`the database ${home.home}/fermix.db is damaged`);
  expect(result.stderr).toContain("restore the latest backup");
});
