/**
 * Long-term memory and compaction, end to end with the compiled binary,
 * Telegram and the fake model: the characters memory may add to each turn's
 * instructions (`[fermix_core.memory] prompt_chars`) are counted against the
 * context window like history, so with memory on compaction starts that much
 * earlier; and compaction, automatic or `/compact`, never touches what is
 * remembered.
 */
import { expect, test } from "bun:test";
import { type RecordedRequest, type Reply, reply, userText } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { ACP_OFF, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

const CAT = "Alice's cat is called Miso";
const SUMMARY = "Summary: Alice chatted about her week and her cat.";

/** The instructions (system prompt) of a model request. */
const instructionsOf = (request: RecordedRequest): string => String(request.body.instructions ?? "");
/** Compaction's request: the model is asked to summarise the older messages. */
const isSummary = (request: RecordedRequest): boolean => instructionsOf(request).startsWith("Summarise the conversation so far");
const hasToolOutput = (request: RecordedRequest): boolean => (request.body.input ?? []).some((item: { type?: string }) => item.type === "function_call_output");

/** `text` padded with filler words to about `length` characters (no trailing space: a chat shows messages trimmed). */
const sized = (text: string, length: number): string => `${text} ${"and so on ".repeat(length)}`.slice(0, length).trimEnd();

/**
 * Alice's conversation. The fake model answers by what it is asked (never by
 * order, since a compaction's request may come between two turns): a summary
 * for compaction, `answers[user text]` for a turn.
 */
async function setup(memory: Record<string, number | boolean>, compaction: Record<string, number | boolean>, contextWindow = 1000) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    tomlTable("fermix_core.providers.fake", { base_url: model.url, model: "fake-model", context_window: contextWindow }) +
      tomlTable("fermix_core.memory", memory) +
      tomlTable("fermix_core.compaction", compaction) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
      ACP_OFF,
  );
  const answers = new Map<string, (request: RecordedRequest) => Reply>();
  model.fallback((request) => {
    if (isSummary(request)) return reply.text(SUMMARY);
    const answer = answers.get(userText(request));
    return answer ? answer(request) : reply.status(400, `no answer scripted for ${userText(request).slice(0, 40)}`);
  });
  /** Alice sends `text`; the model answers `answer` (a string, or a reply chosen from the request); wait until she sees `shown`. */
  const say = async (text: string, answer: string | ((request: RecordedRequest) => Reply), shown = typeof answer === "string" ? answer : "") => {
    answers.set(text, typeof answer === "string" ? () => reply.text(answer) : answer);
    telegram.pushMessage(telegram.message.text(text));
    await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.includes(shown)), 10_000);
  };
  /** The model request of the turn that answered `text` (its last one, after any tool call). */
  const turnRequest = (text: string): RecordedRequest => model.requests.findLast((r) => !isSummary(r) && userText(r) === text)!;
  /** The turn's first request: remember the cat, then say so. */
  const rememberCat = (request: RecordedRequest): Reply =>
    hasToolOutput(request) ? reply.text(sized("I'll remember Miso.", 150)) : reply.toolCall("remember", { text: CAT });
  return { model, telegram, home, say, turnRequest, rememberCat };
}

// context_window 1000 tokens at threshold 0.5: compaction is due at 500 tokens, about 2000 characters of history
// alone; memory's 1600 characters leave room for 400. Three exchanges of 300 characters (900) are between the two.
const FIRST = sized("My cat is called Miso, please remember that.", 150);
const SECOND = sized("This week I repainted the kitchen.", 150);
const THIRD = sized("Tomorrow I'm visiting my sister.", 150);
const FOURTH = sized("What is my cat called? Also, here is a long story about my week:", 1300);

test.each([
  ["memory on: compaction follows the third exchange", { enabled: true, prompt_chars: 1600 }, true],
  ["memory off: only once history alone reaches the threshold", { enabled: false, prompt_chars: 1600 }, false],
  ["memory on but no facts in the prompt (prompt_items = 0): as if off", { enabled: true, prompt_items: 0, prompt_chars: 1600 }, false],
] as const)(
  "memory's prompt budget counts against the context window like history — %s",
  async (_name, memory, early) => {
    const s = await setup(memory, { enabled: true, threshold: 0.5 });
    await start.daemon(s.home);

    await s.say(FIRST, memory.enabled ? s.rememberCat : sized("Miso is a lovely name.", 150), memory.enabled ? "I'll remember Miso" : "Miso is a lovely name");
    await s.say(SECOND, sized("A fresh kitchen, nice.", 150));
    await s.say(THIRD, sized("Say hello to your sister.", 150));
    await s.say(FOURTH, "Your cat is Miso.");
    // Compaction runs after a turn's answer is delivered: wait for the one after the fourth turn.
    await s.model.waitForRequests(s.model.requests.indexOf(s.turnRequest(FOURTH)) + 2, 10_000);

    const fourth = s.turnRequest(FOURTH);
    const summaries = s.model.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    // With memory's budget counted, the first compaction comes before the fourth turn; without it, only after.
    expect(summaries[0]!.index < fourth.index).toBe(early);
    // What was summarised: the oldest exchange, never the two most recent ones.
    expect(userText(summaries[0]!)).toContain(FIRST.slice(0, 40));
    expect(userText(summaries[0]!)).not.toContain(early ? THIRD.slice(0, 30) : FOURTH.slice(0, 30));

    // The fourth turn was given the summary in place of the first exchange, or (without memory's budget) still the whole window.
    expect(instructionsOf(fourth).includes(SUMMARY)).toBe(early);
    expect(JSON.stringify(fourth.body.input).includes(FIRST.slice(0, 40))).toBe(!early);
    if (memory.enabled && !("prompt_items" in memory)) {
      // The remembered fact outlives the compaction of the exchange it was learnt in.
      expect(instructionsOf(fourth)).toContain(`- ${CAT} (#1, learnt`);
    }
  },
  60_000,
);

test("/compact summarises the conversation and leaves remembered facts alone: the next turn's prompt has them, recall finds them", async () => {
  const s = await setup({ enabled: true }, { enabled: false }, 128_000);
  await start.daemon(s.home);
  await s.say(FIRST, s.rememberCat, "I'll remember Miso");
  await s.say(SECOND, "Nice kitchen.");
  await s.say(THIRD, "Have a good visit.");

  await s.say("/compact", "Compacted: older messages are now a summary.");
  const summary = s.model.requests.find(isSummary)!;
  expect(userText(summary)).toContain(FIRST.slice(0, 40));

  await s.say(
    "what is my cat called?",
    (request) => (hasToolOutput(request) ? reply.text("Your cat is Miso.") : reply.toolCall("recall", { query: "cat" })),
    "Your cat is Miso",
  );
  const [asked, recalled] = s.model.requests.filter((r) => !isSummary(r) && userText(r) === "what is my cat called?");
  expect(instructionsOf(asked!)).toContain(`## Summary of the earlier conversation\n${SUMMARY}`);
  expect(JSON.stringify(asked!.body.input)).not.toContain(FIRST.slice(0, 40));
  expect(instructionsOf(asked!)).toContain(`- ${CAT} (#1, learnt`);
  const output = recalled!.body.input!.find((item) => item.type === "function_call_output")!.output;
  expect(output).toContain(CAT);
}, 60_000);
