/**
 * Long-term memory end to end with the compiled binary, Telegram as the
 * channel and the fake model calling the memory tools: a fact remembered in
 * one conversation is in the instructions of later turns — after /new and
 * after a restart — until it is forgotten; a non-owner's facts never reach
 * the owner's prompt, nor the owner's theirs.
 */
import { expect, test } from "bun:test";
import { type RecordedRequest, reply } from "../fakes/model-server.ts";
import { ALICE, BOB } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, tomlTable } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

/** The instructions (system prompt) of a model request, in either wire format. */
const instructionsOf = (request: RecordedRequest): string =>
  String(request.body.instructions ?? request.body.messages?.find((m) => m.role === "system")?.content ?? "");

/** What a tool answered, as the model was given it in the request after the call. */
const toolOutputOf = (request: RecordedRequest): string => String(request.body.input?.find((item) => item.type === "function_call_output")?.output ?? "");

async function setup(allowed: number[] = []) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      tomlTable("fermix_channels.telegram", {
        bot_token: telegram.token,
        api_root: telegram.url,
        owner_user_id: String(ALICE.id),
        allowed_user_ids: allowed.map(String),
      }) +
      ACP_OFF,
  );
  /** Send a message as `from` and wait until the chat shows a bot message containing `answer`. */
  const say = async (text: string, answer: string, from = ALICE) => {
    telegram.pushMessage(telegram.message.text(text, { from }));
    await telegram.waitForTexts(from.id, (texts) => texts.some((t) => t.includes(answer)), 10_000);
  };
  return { model, telegram, home, say };
}

test("a remembered fact is in later prompts — after /new and after a restart — until it is forgotten", async () => {
  const { model, home, say } = await setup();
  let d = await start.daemon(home);

  model.reply(reply.toolCall("remember", { text: "Alice's favourite colour is teal" }), reply.text("I'll remember that."));
  await say("please remember that my favourite colour is teal", "remember that");
  expect(toolOutputOf(model.requests[1]!)).toMatch(/^remembered as #\d+$/);

  await say("/new", "Started a new conversation");
  model.reply(reply.text("Teal, of course."));
  await say("what is my favourite colour?", "Teal, of course");
  const afterNew = model.requests[2]!;
  expect(instructionsOf(afterNew)).toMatch(
    /## What you remember \(relevant to this message\)\n- Alice's favourite colour is teal \(#\d+, learnt \d{4}-\d\d-\d\d\)/,
  );
  // The window is new: the earlier exchange is not in the history, only in memory.
  expect(JSON.stringify(afterNew.body.input)).not.toContain("please remember");

  expect(await d.stop()).toBe(0);
  d = await start.daemon(home);
  model.reply(reply.text("Still teal."));
  await say("which colour do I like best?", "Still teal");
  expect(instructionsOf(model.requests[3]!)).toContain("- Alice's favourite colour is teal");

  model.reply(reply.toolCall("forget", { query: "favourite colour" }), reply.text("Forgotten."));
  await say("forget my favourite colour", "Forgotten");
  expect(toolOutputOf(model.requests[5]!)).toMatch(/^forgot 1 fact:\n#\d+ \(learnt .+ on telegram\): Alice's favourite colour is teal$/);

  model.reply(reply.text("I don't know your favourite colour."));
  await say("what is my favourite colour?", "I don't know");
  expect(instructionsOf(model.requests[6]!)).not.toContain("teal");
  expect(instructionsOf(model.requests[6]!)).not.toContain("What you remember");
  expect(await d.stop()).toBe(0);
}, 60_000);

test("a non-owner's facts never reach the owner's prompt, nor the owner's theirs", async () => {
  const { model, home, say } = await setup([BOB.id]);
  await start.daemon(home);

  model.reply(reply.toolCall("remember", { text: "Bob is planning a surprise marmalade party for Alice" }), reply.text("Noted, Bob."));
  await say("remember: I'm planning a surprise marmalade party for Alice", "Noted, Bob", BOB);
  model.reply(reply.toolCall("remember", { text: "Alice's favourite marmalade is Seville orange" }), reply.text("Noted, Alice."));
  await say("remember my favourite marmalade is Seville orange", "Noted, Alice");

  model.reply(reply.text("Seville orange it is."));
  await say("any marmalade party plans I should know about?", "Seville orange it is");
  const alicePrompt = instructionsOf(model.requests[4]!);
  expect(alicePrompt).toContain("Alice's favourite marmalade is Seville orange");
  expect(alicePrompt).not.toContain("surprise");

  model.reply(reply.text("Your party plan is safe."));
  await say("how is my marmalade party plan going?", "party plan is safe", BOB);
  const bobPrompt = instructionsOf(model.requests[5]!);
  expect(bobPrompt).toContain("Bob is planning a surprise marmalade party for Alice");
  expect(bobPrompt).not.toContain("Seville");

  // Asked outright, recall answers Bob from Bob's facts only.
  model.reply(reply.toolCall("recall", { query: "marmalade Alice Seville orange" }), reply.text("That's all I know."));
  await say("what do you remember about marmalade?", "That's all I know", BOB);
  const recalled = toolOutputOf(model.requests[7]!);
  expect(recalled).toContain("surprise marmalade party");
  expect(recalled).not.toContain("Seville");
}, 60_000);
