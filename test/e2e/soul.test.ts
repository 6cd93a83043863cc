/**
 * `/soul` end to end with the compiled binary: the owner talks to the daemon
 * through the Telegram Bot API fake, the fake model drafts reviews and
 * answers turns, and what changes is read where it shows — in the system
 * prompt (`instructions`) of the next model request and in SOUL.md on disk.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { User } from "grammy/types";
import { DEFAULT_SOUL } from "../../src/agent/prompt.ts";
import { type RecordedRequest, reply, userText } from "../fakes/model-server.ts";
import { ALICE, BOB, groupChat, type TelegramFake } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";

const start = e2eResources();

/** Allowed to talk to the assistant, but neither the owner nor on the command allowlist. */
const CAROL: User = { id: 333333333, is_bot: false, first_name: "Carol", username: "carol", language_code: "en" };
const GROUP = groupChat();

const BRIEF_SOUL = "# Soul\n\nYou are Fermix, a terse assistant. Answer in one sentence.\n";
const TOKEN = /\/soul apply ([a-z2-9]{8})/;

const soulPath = (home: TestHome) => join(home.home, "workspace", "SOUL.md");

/**
 * Alice owns the assistant; Bob may run operator commands too (command
 * allowlist); Carol may only talk. `ttlSeconds` shortens the tokens' life.
 */
async function setup(options: { ttlSeconds?: number; soul?: string } = {}) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "responses" }) +
      telegramToml({
        botToken: telegram.token,
        apiRoot: telegram.url,
        ownerUserId: String(ALICE.id),
        commandAllowlist: [String(BOB.id)],
        allowedUserIds: [String(ALICE.id), String(BOB.id), String(CAROL.id)],
      }) +
      'streaming = "off"\n' +
      ACP_OFF +
      (options.ttlSeconds !== undefined ? tomlTable("fermix_core.soul", { confirm_ttl_seconds: options.ttlSeconds }) : ""),
  );
  if (options.soul !== undefined) {
    mkdirSync(join(home.home, "workspace"), { recursive: true });
    writeFileSync(soulPath(home), options.soul);
  }
  const daemon = await start.daemon(home);
  return { model, telegram, home, daemon, say: sender(telegram) };
}

/** Send `text` as `from` (in their DM unless `chat` is given) and return the bot's next message there. */
function sender(telegram: TelegramFake) {
  return async (text: string, from: User = ALICE, chat?: typeof GROUP): Promise<string> => {
    const chatId = chat?.id ?? from.id;
    const before = telegram.visibleTexts(chatId).length;
    telegram.pushMessage(telegram.message.text(text, { from, ...(chat ? { chat } : {}) }));
    const texts = await telegram.waitForTexts(chatId, (t) => t.length > before, 10_000);
    return texts.slice(before).join("\n");
  };
}

const tokenIn = (text: string): string => {
  const match = TOKEN.exec(text);
  if (!match) throw new Error(`no /soul apply line in: ${text}`);
  return match[1]!;
};

/** The quoted messages of a review request's evidence block. */
const evidence = (request: RecordedRequest): string[] =>
  [...userText(request).matchAll(/<message>([\s\S]*?)<\/message>/g)].map((m) => m[1]!.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"));

describe("/soul with the compiled binary", () => {
  test("review → diff → apply: the next turn's system prompt is the new persona, without a restart; a token works once", async () => {
    const { model, telegram, home, daemon, say } = await setup();
    model.reply(reply.text("Hello there."));
    await say("hello");
    expect(model.requests[0]!.body.instructions).toStartWith(DEFAULT_SOUL.trim());

    expect(await say("/soul")).toMatch(/revision 1 \(initial[^)]*\)[\s\S]*\/soul review \[instruction\] \[--with-context\][\s\S]*\/soul apply TOKEN/);

    model.reply(reply.text(BRIEF_SOUL));
    const proposed = await say("/soul review be much briefer");
    // One request drafted it: the persona editor's instructions, the owner's instruction and the current file.
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.body.instructions).toContain("complete revised file");
    expect(userText(model.requests[1]!)).toStartWith("<request>\nbe much briefer");
    expect(userText(model.requests[1]!)).toContain(DEFAULT_SOUL);
    // The diff, as a diff code block, and the line that applies it.
    expect(proposed).toContain("--- SOUL.md (revision 1)");
    expect(proposed).toContain("+You are Fermix, a terse assistant. Answer in one sentence.");
    expect(proposed).toContain("-- Be direct and useful.");
    const sent = telegram.botMessages(ALICE.id).at(-1)!;
    expect(sent.source).toContain('<pre><code class="language-diff">');
    const token = tokenIn(proposed);
    // Nothing has changed yet.
    expect(readFileSync(soulPath(home), "utf8")).toBe(DEFAULT_SOUL);

    const again = await say(`/soul diff ${token}`);
    expect(again).toContain("+You are Fermix, a terse assistant. Answer in one sentence.");
    expect(again).toContain(`/soul apply ${token}`);

    expect(await say(`/soul apply ${token}`)).toContain("SOUL.md is now revision 2");
    expect(readFileSync(soulPath(home), "utf8")).toBe(BRIEF_SOUL);
    expect(statSync(soulPath(home)).mode & 0o777).toBe(0o600);

    model.reply(reply.text("Fermix."));
    await say("who are you?");
    const next = model.requests[2]!.body.instructions!;
    expect(next).toStartWith(BRIEF_SOUL.trim());
    expect(next).not.toContain("Be direct and useful");

    const reused = await say(`/soul apply ${token}`);
    expect(reused).toContain("already been applied");
    expect(await say("/soul")).toMatch(/revision 2 \(review guided by “be much briefer”\)/);
    expect(model.requests).toHaveLength(3);
    expect(daemon.logs()).toContain("SOUL.md changed");
  }, 40_000);

  test("refused tokens: another operator's, another conversation's, an unknown one, an expired one; a non-owner cannot use /soul", async () => {
    const { home, say } = await setup({ ttlSeconds: 1, soul: BRIEF_SOUL });
    const proposed = await say("/soul reset");
    const madeAt = Date.now();
    const token = tokenIn(proposed);
    expect(proposed).toContain("for 1 second");

    // Bob may run operator commands, but the proposal is Alice's.
    expect(await say(`/soul apply ${token}`, BOB)).toContain("belongs to someone else's /soul proposal");
    expect(await say(`/soul diff ${token}`, BOB)).toContain("belongs to someone else's /soul proposal");
    // Alice herself, in a group chat: not the conversation the proposal was made in.
    expect(await say(`/soul apply ${token}`, ALICE, GROUP)).toContain("made in another conversation");
    expect(await say("/soul apply zzzz2222")).toContain("no /soul proposal with that token");
    // Carol is allowed to talk, not to command.
    expect(await say("/soul", CAROL)).toContain("needs the owner");
    expect(await say("/soul reset", CAROL)).toContain("needs the owner");

    // None of that used the token up; time does. It was made before its reply came (madeAt) and lasts 1 s.
    await until("the token's expiry", () => Date.now() > madeAt + 1000, 5000);
    expect(await say(`/soul apply ${token}`)).toContain("has expired (tokens last 1 second)");
    expect(readFileSync(soulPath(home), "utf8")).toBe(BRIEF_SOUL);
    expect(await say("/soul history")).toContain("(1)");
  }, 40_000);

  test("revert and reset round-trip; a hand edit shows up in history; history lists every revision", async () => {
    const { model, home, say } = await setup({ soul: BRIEF_SOUL });
    model.fallback(reply.text("ok"));

    const HAND = `${BRIEF_SOUL}Always sign off with "— F".\n`;
    writeFileSync(soulPath(home), HAND);
    await say("hi");
    expect(model.requests.at(-1)!.body.instructions).toContain("Always sign off");

    expect(await say(`/soul apply ${tokenIn(await say("/soul reset"))}`)).toContain("revision 3");
    expect(readFileSync(soulPath(home), "utf8")).toBe(DEFAULT_SOUL);
    expect(await say("/soul reset")).toContain("already the shipped default");

    const revert = await say("/soul revert 2");
    expect(revert).toContain("a revert to revision 2");
    expect(revert).toContain('+Always sign off with "— F".');
    expect(await say(`/soul apply ${tokenIn(revert)}`)).toContain("revision 4");
    expect(readFileSync(soulPath(home), "utf8")).toBe(HAND);
    await say("hi again");
    expect(model.requests.at(-1)!.body.instructions).toStartWith(HAND.trim());

    expect(await say("/soul revert 1")).toMatch(/a revert to revision 1[\s\S]*-Always sign off/);
    expect(await say("/soul revert 9")).toContain("There is no revision 9");

    const history = await say("/soul history");
    const rows = history.split("\n").filter((line) => /^#\d/.test(line.replace(/^[-•]\s*/, "")));
    expect(rows.map((row) => row.replace(/^[-•]\s*/, "").split(" · ")[0])).toEqual(["#1", "#2", "#3", "#4"]);
    expect(rows[0]).toContain("initial");
    expect(rows[1]).toContain("manual edit");
    expect(rows[2]).toContain("reset to the shipped default");
    expect(rows[3]).toContain("revert to revision 2");
    expect(rows[3]).toContain("current");
    for (const row of rows) expect(row).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC · .* · [\d,]+ bytes/);
  }, 40_000);

  test("--with-context sends at most the stated window of recent messages, and says so", async () => {
    const { model, say } = await setup();
    model.fallback(reply.text("ok"));
    for (let i = 1; i <= 22; i++) await say(`note ${i}: I like short answers`);

    model.reply(reply.text(BRIEF_SOUL));
    const first = await say("/soul review --with-context");
    expect(first).toMatch(/Context: the last 20 messages sent here, [\d,]+ characters \(at most 20 messages and 4,000 characters are sent\)/);
    const review = model.requests.at(-1)!;
    expect(userText(review)).toContain("Review the file subtly");
    expect(evidence(review)).toEqual(Array.from({ length: 20 }, (_, i) => `note ${i + 3}: I like short answers`));

    // Long messages: the character budget binds before the count does.
    const long = (n: number) => `long ${n} ${"and then some more words ".repeat(60)}`.trim();
    for (const n of [1, 2, 3]) await say(long(n));
    model.reply(reply.text(BRIEF_SOUL));
    const second = await say("/soul review prefer bullet points —with-context");
    expect(second).toContain("at most 20 messages and 4,000 characters are sent");
    const quoted = evidence(model.requests.at(-1)!);
    expect(userText(model.requests.at(-1)!)).toStartWith("<request>\nprefer bullet points");
    expect(quoted.join("").length).toBeLessThanOrEqual(4000);
    expect(quoted.length).toBeLessThanOrEqual(20);
    expect(quoted.at(-1)).toBe(long(3));
    expect(quoted.join("\n")).not.toContain("note 22");
  }, 60_000);

  test("--with-context in a group takes only the owner's own messages, never another member's", async () => {
    const { model, say } = await setup();
    model.fallback(reply.text("ok"));
    for (let i = 1; i <= 3; i++) {
      await say(`alice ${i}: keep it short`, ALICE, GROUP);
      await say(`carol ${i}: my private plans`, CAROL, GROUP);
    }
    model.reply(reply.text(BRIEF_SOUL));
    expect(await say("/soul review --with-context", ALICE, GROUP)).toContain("/soul apply");
    expect(evidence(model.requests.at(-1)!)).toEqual(["alice 1: keep it short", "alice 2: keep it short", "alice 3: keep it short"]);
  }, 60_000);

  test("/stop during a review aborts its model request; nothing of the stopped review is sent afterwards", async () => {
    const { model, telegram, say } = await setup();
    model.reply(reply.hang());
    const before = telegram.visibleTexts(ALICE.id).length;
    telegram.pushMessage(telegram.message.text("/soul review make it warmer", { from: ALICE }));
    await model.waitForRequests(1);
    const stopped = await say("/stop");
    expect(stopped).toMatch(/Stopped/);
    const review = model.requests[0]!;
    await until("the review request aborted", () => review.aborted, 1_000);
    model.fallback(reply.text("still here"));
    expect(await say("are you there?")).toBe("still here");
    const texts = telegram.visibleTexts(ALICE.id).slice(before);
    expect(texts.filter((t) => /soul|review|draft/i.test(t))).toEqual([]);
  }, 60_000);

  test("fermix ask without a daemon: a proposal made by one command is applied by the next (proposals are kept in SQLite)", async () => {
    const model = await start.model();
    const home = start.home();
    home.writeConfig(providerToml(model.url, { api: "responses", apiKey: "sk-fake-0000" }) + CHANNELS_OFF);
    mkdirSync(join(home.home, "workspace"), { recursive: true });
    writeFileSync(soulPath(home), BRIEF_SOUL);

    const proposed = await runFermix(["ask", "/soul reset"], home.env);
    expect(proposed.exitCode).toBe(0);
    const applied = await runFermix(["ask", `/soul apply ${tokenIn(proposed.stdout)}`], home.env);
    expect(applied.stdout).toContain("SOUL.md is now revision 2");
    expect(readFileSync(soulPath(home), "utf8")).toBe(DEFAULT_SOUL);
    expect(model.requests).toHaveLength(0);
  }, 30_000);
});
