/**
 * Buttons on Discord against the loopback fake: a message carries its
 * buttons as components, a tap arrives as INTERACTION_CREATE and goes to the
 * gateway as one ButtonPress mapped like the chat's messages, and the
 * interaction is acknowledged — an ephemeral answer while the buttons still
 * serve, the message updated (buttons off, outcome under it) once they have.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { ButtonStyle, ComponentType, InteractionResponseType, MessageFlags } from "discord-api-types/v10";
import { DiscordAdapter } from "../../../src/channels/discord/index.ts";
import { buttonRows, DISCORD_CAPABILITIES } from "../../../src/channels/discord/outbound.ts";
import type { ButtonPress, PressResult, ReplyTarget } from "../../../src/message/index.ts";
import { DISCORD_ALICE, DISCORD_BOB, DISCORD_CHANNEL, DISCORD_DM, DISCORD_THREAD, type DiscordFake, startDiscordFake } from "../../fakes/discord.ts";
import { configFor, eventually, makeContext, type TestContext } from "./harness.ts";

const BUTTONS = [
  { label: "✅ Approve", data: "fx:ok:ABCD2345" },
  { label: "✖️ Deny", data: "fx:no:ABCD2345" },
];
const PROMPT = "🔐 **Access request**: read-only access to `/srv/data`.";
/** How long a press stays undecided in the test that proves Discord hears nothing before the decision. */
const UNDECIDED_MS = 200;

let fake: DiscordFake;
let adapter: DiscordAdapter | undefined;
let ctx: TestContext | undefined;
afterEach(async () => {
  await adapter?.stop();
  await fake?.stop();
  ctx?.close();
  adapter = undefined;
  ctx = undefined;
});

/** A started adapter whose gateway answers presses with `answer` (none: nothing answers presses) and records them. */
async function running(answer?: (press: ButtonPress) => PressResult | Promise<PressResult>) {
  fake = startDiscordFake();
  const config = configFor(fake);
  const context = makeContext(config);
  ctx = context;
  const presses: ButtonPress[] = [];
  if (answer) {
    context.context.press = async (press) => {
      presses.push(press);
      return answer(press);
    };
  }
  const started = new DiscordAdapter(config, { random: () => 0.5 });
  adapter = started;
  await started.start(context.context);
  await fake.gateway.waitForLive();
  await eventually(() => started.state().status === "ready", 2000, "ready");
  return { presses, adapter: started, ctx: context };
}

/** The prompt with its two buttons, sent as the gateway's access request sends it. */
async function prompt(target: ReplyTarget): Promise<string> {
  const sent = await adapter!.replyPort(target).sendText({ text: PROMPT, notify: true, linkPreview: false, plain: false, buttons: BUTTONS });
  return sent.id;
}

describe("the reply port", () => {
  test("says it has buttons and sends them as one action row whose custom_ids are the data; other messages have none", async () => {
    const { adapter } = await running();
    expect(DISCORD_CAPABILITIES.buttons).toBe(true);
    expect(adapter.replyPort({ chatId: DISCORD_DM }).capabilities.buttons).toBe(true);
    await adapter.replyPort({ chatId: DISCORD_DM }).sendText({ text: "plain", notify: true, linkPreview: false, plain: false });
    const id = await prompt({ chatId: DISCORD_DM });
    const [plain, withButtons] = fake.calls("messages.create");
    expect(plain!.body.components).toBeUndefined();
    expect(withButtons!.body.components).toEqual([
      {
        type: ComponentType.ActionRow,
        components: [
          { type: ComponentType.Button, style: ButtonStyle.Primary, label: "✅ Approve", custom_id: "fx:ok:ABCD2345" },
          { type: ComponentType.Button, style: ButtonStyle.Secondary, label: "✖️ Deny", custom_id: "fx:no:ABCD2345" },
        ],
      },
    ]);
    expect(fake.buttons(id).map((b) => b.label)).toEqual(["✅ Approve", "✖️ Deny"]);
  });

  test("buttonRows keeps Discord's limits: five to a row, five rows, labels of at most 80 characters", () => {
    const many = Array.from({ length: 27 }, (_, i) => ({ label: i === 0 ? "x".repeat(90) : `b${i}`, data: `d${i}` }));
    const rows = buttonRows(many);
    expect(rows.map((r) => r.components.length)).toEqual([5, 5, 5, 5, 5]);
    expect(rows[0]!.components[0]!.label).toHaveLength(80);
    expect(rows.flatMap((r) => r.components.map((b) => b.custom_id))).toEqual(many.slice(0, 25).map((b) => b.data));
  });
});

describe("a tap on a button", () => {
  test("in a DM: one press from the presser, direct; once it has served, the buttons come off and the outcome shows under the prompt", async () => {
    const { presses } = await running(() => ({ ok: true, done: true, text: "Approved: read-only access to /srv/data. The assistant goes on." }));
    const messageId = await prompt({ chatId: DISCORD_DM });
    const interaction = fake.pressButton(messageId);
    const answer = await fake.waitForInteractionAnswer(interaction);
    expect(presses).toEqual([{ channel: "discord", chatId: DISCORD_DM, senderId: DISCORD_ALICE.id, messageId, data: "fx:ok:ABCD2345", direct: true }]);
    expect(answer.type).toBe(InteractionResponseType.UpdateMessage);
    expect(fake.buttons(messageId)).toEqual([]);
    expect(fake.message(messageId)!.content).toBe(`${PROMPT}\n\nApproved: read-only access to /srv/data. The assistant goes on.`);
  });

  test("in a guild channel: a refused press is answered to the presser alone and the buttons stay", async () => {
    const { presses } = await running((press) =>
      press.senderId === DISCORD_ALICE.id ? { ok: true, done: true, text: "ok" } : { ok: false, done: false, text: "That code is not yours to answer." },
    );
    const messageId = await prompt({ chatId: DISCORD_CHANNEL });
    const byBob = fake.pressButton(messageId, { user: DISCORD_BOB, customId: "fx:no:ABCD2345" });
    const answer = await fake.waitForInteractionAnswer(byBob);
    expect(answer).toMatchObject({
      type: InteractionResponseType.ChannelMessageWithSource,
      data: { content: "That code is not yours to answer.", flags: MessageFlags.Ephemeral },
    });
    expect(presses[0]).toEqual({ channel: "discord", chatId: DISCORD_CHANNEL, senderId: DISCORD_BOB.id, messageId, data: "fx:no:ABCD2345", direct: false });
    expect(fake.buttons(messageId)).toHaveLength(2);
    expect(fake.visibleTexts(DISCORD_CHANNEL)).toEqual([PROMPT]);
  });

  test("in a thread: the press carries the parent channel as chat and the thread, as the thread's messages do", async () => {
    const { presses } = await running(() => ({ ok: true, done: true, text: "Denied: read-only access to /srv/data." }));
    const messageId = await prompt({ chatId: DISCORD_CHANNEL, threadId: DISCORD_THREAD });
    await fake.waitForInteractionAnswer(fake.pressButton(messageId, { customId: "fx:no:ABCD2345" }));
    expect(presses[0]).toMatchObject({ chatId: DISCORD_CHANNEL, threadId: DISCORD_THREAD, senderId: DISCORD_ALICE.id, direct: false });
    expect(fake.buttons(messageId)).toEqual([]);
  });

  test("with nothing to answer presses, or a press that fails, the presser still gets an answer and the buttons stay", async () => {
    const { ctx } = await running();
    const messageId = await prompt({ chatId: DISCORD_DM });
    const unanswered = await fake.waitForInteractionAnswer(fake.pressButton(messageId));
    expect(unanswered).toMatchObject({ type: InteractionResponseType.ChannelMessageWithSource, data: { flags: MessageFlags.Ephemeral } });
    expect(fake.buttons(messageId)).toHaveLength(2);

    ctx.context.press = async () => {
      throw new Error("database is locked");
    };
    const failed = await fake.waitForInteractionAnswer(fake.pressButton(messageId));
    expect(failed.data?.content).toContain("/confirm");
    expect(ctx.lines.some((l) => l.includes("a button press failed") && l.includes("database is locked"))).toBe(true);
  });

  test("the callback goes without the bot token, and the interaction's token stays out of the log when it fails", async () => {
    const { ctx } = await running(() => ({ ok: false, done: false, text: "not yours" }));
    const messageId = await prompt({ chatId: DISCORD_DM });
    fake.rest.faults.add("interactions.callback", { status: 500, body: { message: "Internal Server Error", code: 0 } });
    const interaction = fake.pressButton(messageId);
    const call = await fake.waitForCall("interactions.callback");
    expect(call.headers.authorization).toBeUndefined();
    await eventually(() => ctx.lines.find((l) => l.includes("could not acknowledge a discord interaction")), 2000, "the warning");
    const token = fake.interaction(interaction)!.token;
    expect(ctx.lines.join("\n")).not.toContain(token);
    expect(ctx.lines.join("\n")).toContain(":token");

    // The next press is answered as usual.
    const next = fake.pressButton(messageId);
    expect((await fake.waitForInteractionAnswer(next)).data?.content).toBe("not yours");
  });

  test("a press never waits behind a message the gateway is still taking in", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { presses, ctx } = await running(async () => {
      await held;
      return { ok: true, done: true, text: "ok" };
    });
    const messageId = await prompt({ chatId: DISCORD_DM });
    const first = fake.pressButton(messageId);
    await eventually(() => presses.length === 1, 2000, "the first press");
    // The first press is still being decided; a message after it still arrives.
    fake.userMessage("still listening");
    await eventually(() => ctx.ingested.find((m) => m.text === "still listening"), 2000, "the message after the press");
    release();
    await fake.waitForInteractionAnswer(first);
  });

  test("a press is acknowledged only once the gateway has decided it: an acknowledged press cannot be lost by a crash", async () => {
    let release!: () => void;
    const deciding = new Promise<void>((resolve) => (release = resolve));
    const { presses } = await running(async () => {
      await deciding;
      return { ok: true, done: false, text: "Approved." };
    });
    const messageId = await prompt({ chatId: DISCORD_DM });
    const interaction = fake.pressButton(messageId);
    await eventually(() => presses.length === 1, 2000, "the press");
    // Until the decision is made (and stored), Discord hears nothing: a crash now shows the presser "interaction failed".
    // An answer that did not wait for the decision would go out as the press came in, well within this window.
    await Bun.sleep(UNDECIDED_MS);
    expect(fake.interaction(interaction)?.answer).toBeUndefined();
    release();
    expect((await fake.waitForInteractionAnswer(interaction)).data?.content).toBe("Approved.");
  });
});
