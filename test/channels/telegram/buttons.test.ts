/**
 * Inline buttons on Telegram against the Bot API fake: a message carries an
 * inline keyboard, a tap comes back as a callback_query that the adapter
 * hands over as one ButtonPress, answers with answerCallbackQuery, and — once
 * the buttons have served — takes the keyboard off the message.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Update } from "grammy/types";
import { botIdOf, createTelegramApi } from "../../../src/channels/telegram/api.ts";
import { toPress } from "../../../src/channels/telegram/inbound.ts";
import { TelegramAdapter } from "../../../src/channels/telegram/index.ts";
import { TELEGRAM_CAPABILITIES, telegramReplyPort } from "../../../src/channels/telegram/outbound.ts";
import { OffsetStore } from "../../../src/channels/telegram/poller.ts";
import type { ButtonPress, PressResult } from "../../../src/message/index.ts";
import { ALICE, BOB, groupChat, startTelegramFake, type TelegramFake } from "../../fakes/telegram.ts";
import { mutateJson, randomJson, rng } from "../../helpers/fuzz.ts";
import { captureLog, configFor, eventually, makeContext } from "./harness.ts";

const FAST = { timeoutSeconds: 1, backoff: { initialMs: 20, maxMs: 100 } };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const BUTTONS = [
  { label: "✅ Approve", data: "fx:ok:ABCD2345" },
  { label: "✖️ Deny", data: "fx:no:ABCD2345" },
];

function fakeServer(): TelegramFake {
  const fake = startTelegramFake({ maxPollMs: 1000 });
  cleanups.push(() => fake.stop());
  return fake;
}

/** A running adapter whose gateway answers presses with `answer` and records them. */
async function running(fake: TelegramFake, answer?: (press: ButtonPress) => PressResult) {
  const ctx = makeContext(configFor(fake));
  cleanups.push(() => ctx.close());
  const presses: ButtonPress[] = [];
  if (answer) {
    ctx.context.press = async (press) => {
      presses.push(press);
      return answer(press);
    };
  }
  const adapter = new TelegramAdapter(configFor(fake), FAST);
  cleanups.push(() => adapter.stop());
  await adapter.start(ctx.context);
  return { adapter, ctx, presses };
}

/** The adapter sends a message with the two buttons, as the gateway's prompt does. */
async function prompt(adapter: TelegramAdapter, chatId: number, threadId?: number) {
  const port = adapter.replyPort({ chatId: String(chatId), ...(threadId !== undefined ? { threadId: String(threadId) } : {}) });
  const sent = await port.sendText({ text: "Access request", notify: true, linkPreview: false, plain: true, buttons: BUTTONS });
  return Number(sent.id);
}

describe("the reply port", () => {
  test("says it has buttons, and sends them as one row of an inline keyboard; a message without them has none", async () => {
    const fake = fakeServer();
    const { log } = captureLog();
    const port = telegramReplyPort({ chatId: String(ALICE.id) }, { api: createTelegramApi({ token: fake.token, apiRoot: fake.url }), token: fake.token, log });
    expect(TELEGRAM_CAPABILITIES.buttons).toBe(true);
    await port.sendText({ text: "plain", notify: true, linkPreview: false, plain: true });
    await port.sendText({ text: "<b>choose</b>", notify: false, linkPreview: false, plain: false, buttons: BUTTONS });
    const [plain, withButtons] = fake.botMessages(ALICE.id);
    expect(plain!.reply_markup).toBeUndefined();
    expect(withButtons!.reply_markup).toEqual({
      inline_keyboard: [
        [
          { text: "✅ Approve", callback_data: "fx:ok:ABCD2345" },
          { text: "✖️ Deny", callback_data: "fx:no:ABCD2345" },
        ],
      ],
    });
    expect(withButtons!.text).toBe("choose");
  });
});

describe("a tap on a button", () => {
  test("reaches the gateway as one press from that sender, is answered with the gateway's words, and takes the keyboard off", async () => {
    const fake = fakeServer();
    const { adapter, presses } = await running(fake, () => ({ ok: true, done: true, text: "Approved: read-only access to /srv." }));
    const messageId = await prompt(adapter, ALICE.id);
    const query = fake.pressButton(ALICE.id, messageId);
    expect(await fake.waitForCallbackAnswer(query)).toEqual({ text: "Approved: read-only access to /srv." });
    expect(presses).toEqual([
      { channel: "telegram", chatId: String(ALICE.id), senderId: String(ALICE.id), messageId: String(messageId), data: "fx:ok:ABCD2345", direct: true },
    ]);
    await eventually(() => fake.chat(ALICE.id).find((e) => e.message_id === messageId)?.reply_markup?.inline_keyboard.length === 0, 5000, "the keyboard to go");
  });

  test("a refused press keeps the buttons for the owner; a group topic press carries chat, thread and presser", async () => {
    const fake = fakeServer();
    const group = groupChat({ forum: true });
    const { adapter, presses } = await running(fake, (press) =>
      press.senderId === String(ALICE.id) ? { ok: true, done: true, text: "ok" } : { ok: false, done: false, text: "That code is not yours to answer." },
    );
    const messageId = await prompt(adapter, group.id, 42);
    const byBob = fake.pressButton(group.id, messageId, { from: BOB, data: "fx:no:ABCD2345" });
    expect((await fake.waitForCallbackAnswer(byBob)).text).toBe("That code is not yours to answer.");
    expect(presses[0]).toEqual({
      channel: "telegram",
      chatId: String(group.id),
      threadId: "42",
      senderId: String(BOB.id),
      messageId: String(messageId),
      data: "fx:no:ABCD2345",
      direct: false,
    });
    expect(fake.chat(group.id).find((e) => e.message_id === messageId)!.reply_markup!.inline_keyboard[0]).toHaveLength(2);
    expect(fake.calls("editMessageReplyMarkup")).toHaveLength(0);
  });

  test("a press is decided before the offset that acknowledges it is committed: a crash in between has Telegram deliver it again", async () => {
    const fake = fakeServer();
    const seen: Array<number | undefined> = [];
    const { adapter, ctx } = await running(fake, () => {
      seen.push(offsets.load());
      return { ok: true, done: true, text: "Approved." };
    });
    const offsets = new OffsetStore(ctx.context.db, botIdOf(fake.token));
    fake.pushMessage(fake.message.text("before the tap"));
    await eventually(() => ctx.ingested.find((m) => m.text === "before the tap"), 5000, "the first message");
    const before = offsets.load();
    expect(before).toBeDefined();
    const messageId = await prompt(adapter, ALICE.id);
    const query = fake.pressButton(ALICE.id, messageId);
    expect(await fake.waitForCallbackAnswer(query)).toEqual({ text: "Approved." });
    // When the gateway decided, Telegram had not yet been told the press arrived: had the daemon died there, it would come again.
    expect(seen).toEqual([before]);
    await eventually(() => (offsets.load() ?? 0) > before!, 5000, "the offset to move past the press");
  });

  test("with nothing to answer presses the tap is still answered (the spinner stops), and the offset moves past it", async () => {
    const fake = fakeServer();
    const { adapter, ctx } = await running(fake);
    const messageId = await prompt(adapter, ALICE.id);
    const query = fake.pressButton(ALICE.id, messageId);
    expect(await fake.waitForCallbackAnswer(query)).toEqual({});
    fake.pushMessage(fake.message.text("after the tap"));
    await eventually(() => ctx.ingested.find((m) => m.text === "after the tap"), 5000, "the next message");
    expect(fake.updates.size).toBe(0);
  });
});

describe("toPress", () => {
  const update = (query: unknown) => ({ update_id: 1, callback_query: query }) as Update;
  const message = { message_id: 7, date: 1, chat: { id: -100123, type: "supergroup", title: "g" }, is_topic_message: true, message_thread_id: 5 };

  test("a tap in a topic; a tap with nothing to act on is still answered; other updates are not presses", () => {
    expect(toPress(update({ id: "q1", from: { id: 5, is_bot: false, first_name: "A" }, chat_instance: "c", data: "fx:ok:X", message }))).toEqual({
      queryId: "q1",
      press: { channel: "telegram", chatId: "-100123", threadId: "5", senderId: "5", messageId: "7", data: "fx:ok:X", direct: false },
    });
    expect(toPress(update({ id: "q2", from: { id: 5, is_bot: false, first_name: "A" }, chat_instance: "c", game_short_name: "g" }))).toEqual({
      queryId: "q2",
      press: null,
    });
    expect(toPress({ update_id: 2, message: { message_id: 1, date: 1, chat: { id: 1, type: "private", first_name: "A" } } } as Update)).toBeNull();
  });

  test("10,000 random and mutated callback queries never throw, and a press always has its ids", () => {
    const r = rng(0x7e1e);
    const seed = { update_id: 1, callback_query: { id: "q1", from: { id: 5, is_bot: false, first_name: "A" }, chat_instance: "c", data: "fx:ok:X", message } };
    for (let i = 0; i < 10_000; i++) {
      const input = (i % 3 === 0 ? { update_id: 1, callback_query: randomJson(r) } : mutateJson(r, seed)) as Update;
      let out: ReturnType<typeof toPress>;
      try {
        out = toPress(input);
      } catch (error) {
        throw new Error(`run ${i}: toPress threw ${error}: ${JSON.stringify(input)}`);
      }
      if (out?.press) {
        for (const key of ["chatId", "senderId", "messageId", "data"] as const) {
          if (typeof out.press[key] !== "string" || out.press[key] === "") throw new Error(`run ${i}: press without ${key}: ${JSON.stringify(input)}`);
        }
      }
    }
  });
});
