/** The Telegram reply port against the Bot API fake: flags, threads, 429, formatting, reactions, media caps. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TelegramAdapter } from "../../../src/channels/telegram/index.ts";
import { normalizeReaction, TELEGRAM_MEDIA_CAPS, TELEGRAM_REACTIONS } from "../../../src/channels/telegram/outbound.ts";
import { FormattingRejected, type OutboundMediaKind, type OutboundText } from "../../../src/message/index.ts";
import { ALICE, ALLOWED_REACTIONS, groupChat, startTelegramFake, type TelegramFake } from "../../fakes/telegram.ts";
import { configFor } from "./harness.ts";

const html = (text: string, notify = true): OutboundText => ({ text, notify, linkPreview: false, plain: false });
const CHAT = String(ALICE.id);

let fake: TelegramFake;
let adapter: TelegramAdapter;
let sleeps: number[];
let scratch: string;

beforeEach(() => {
  fake = startTelegramFake();
  sleeps = [];
  adapter = new TelegramAdapter(configFor(fake), { sleep: async (ms) => void sleeps.push(ms) });
  scratch = mkdtempSync(join(tmpdir(), "fermix-tg-out-"));
});
afterEach(async () => {
  await adapter.stop();
  await fake.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** A file of `size` bytes without writing them all (sparse). */
function sized(name: string, size: number): string {
  const path = join(scratch, name);
  const fd = openSync(path, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
  return path;
}

describe("telegram reply port: text", () => {
  test("HTML with previews off; disable_notification = !notify; the message id comes back", async () => {
    const port = adapter.replyPort({ chatId: CHAT });
    const sent = await port.sendText(html('<b>hi</b> <a href="https://example.com">x</a>', false));
    const [call] = fake.calls("sendMessage");
    expect(call!.body).toMatchObject({
      chat_id: ALICE.id,
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
      disable_notification: true,
    });
    expect(call!.body.message_thread_id).toBeUndefined();
    expect(sent.id).toBe(String(fake.botMessages(CHAT).at(-1)!.message_id));
    expect(fake.visibleTexts(CHAT)).toEqual(["hi x"]);
  });

  test("plain text goes without parse_mode, so markup characters are shown as typed", async () => {
    await adapter.replyPort({ chatId: CHAT }).sendText({ ...html("a < b & <i>", true), plain: true });
    const [call] = fake.calls("sendMessage");
    expect(call!.body.parse_mode).toBeUndefined();
    expect(call!.body.disable_notification).toBe(false);
    expect(fake.visibleTexts(CHAT)).toEqual(["a < b & <i>"]);
  });

  test("a forum topic target sends into the topic (message_thread_id), typing too", async () => {
    const chat = String(groupChat({ forum: true }).id);
    const port = adapter.replyPort({ chatId: chat, threadId: "42" });
    await port.sendText(html("in topic"));
    await port.typing();
    expect(fake.calls("sendMessage")[0]!.body.message_thread_id).toBe(42);
    expect(fake.chatActions(chat)).toMatchObject([{ action: "typing", thread_id: 42 }]);
  });

  test("a parse error from Telegram is FormattingRejected (and names no token)", async () => {
    fake.rejectEntitiesNext("sendMessage");
    const error = await adapter
      .replyPort({ chatId: CHAT })
      .sendText(html("<b>hi</b>"))
      .catch((e) => e);
    expect(error).toBeInstanceOf(FormattingRejected);
    expect(error.message).toContain("can't parse entities");
    expect(error.message).not.toContain(fake.token);
  });

  test("429 on sendMessage: waits retry_after, then the retry goes through", async () => {
    fake.rateLimitNext("sendMessage", 3);
    const sent = await adapter.replyPort({ chatId: CHAT }).sendText(html("after the wait"));
    expect(sleeps).toEqual([3000]);
    expect(fake.calls("sendMessage").map((c) => c.status)).toEqual([429, 200]);
    expect(sent.id).toBeTruthy();
    expect(fake.visibleTexts(CHAT)).toEqual(["after the wait"]);
  });

  test("429 asking for more than the cap fails at once instead of stalling the reply", async () => {
    fake.rateLimitNext("sendMessage", 600);
    const error = await adapter
      .replyPort({ chatId: CHAT })
      .sendText(html("x"))
      .catch((e) => e);
    expect(error.message).toMatch(/rate limit/);
    expect(sleeps).toEqual([]);
    expect(fake.visibleTexts(CHAT)).toEqual([]);
  });

  test("typing under a 429 gives up instead of waiting (a late typing hint is worthless)", async () => {
    fake.rateLimitNext("sendChatAction", 5);
    await expect(adapter.replyPort({ chatId: CHAT }).typing()).rejects.toThrow(/rate limit/);
    expect(sleeps).toEqual([]);
  });

  test("other API errors carry Telegram's reason and never the token", async () => {
    const error = await adapter
      .replyPort({ chatId: "" })
      .sendText(html("x"))
      .catch((e) => e);
    expect(error.message).toContain("chat_id is empty");
    expect(error.message).not.toContain(fake.token);
  });

  test("edit replaces the text; an identical edit is not an error; delete removes it", async () => {
    const port = adapter.replyPort({ chatId: CHAT });
    const sent = await port.sendText(html("draft"));
    await port.editText(sent, html("<b>final</b>"));
    await port.editText(sent, html("<b>final</b>"));
    expect(fake.calls("editMessageText")[0]!.body).toMatchObject({ parse_mode: "HTML", link_preview_options: { is_disabled: true } });
    expect(fake.visibleTexts(CHAT)).toEqual(["final"]);
    await port.deleteMessage(sent);
    await port.deleteMessage(sent);
    expect(fake.visibleTexts(CHAT)).toEqual([]);
  });
});

describe("telegram reply port: reactions", () => {
  test("capabilities.react is Telegram's allowed set", () => {
    expect(new Set(adapter.capabilities.react as string[])).toEqual(ALLOWED_REACTIONS);
    expect(TELEGRAM_REACTIONS).toHaveLength(73);
  });

  test("an allowed emoji lands; ❤️ (with FE0F) is sent as Telegram's ❤", async () => {
    const [inbound] = fake.pushMessage(fake.message.text("thanks"));
    const id = inbound!.message!.message_id;
    const port = adapter.replyPort({ chatId: CHAT });
    await port.react(String(id), "❤️");
    expect(fake.calls("setMessageReaction")[0]!.body).toMatchObject({ message_id: id, reaction: [{ type: "emoji", emoji: "❤" }] });
    expect(normalizeReaction("👍")).toBe("👍");
  });

  test("an emoji outside the set is refused without calling Telegram", async () => {
    const [inbound] = fake.pushMessage(fake.message.text("thanks"));
    const port = adapter.replyPort({ chatId: CHAT });
    await expect(port.react(String(inbound!.message!.message_id), "🦆")).rejects.toThrow(/does not allow/);
    await expect(port.react(String(inbound!.message!.message_id), "👍👍")).rejects.toThrow(/does not allow/);
    expect(fake.calls("setMessageReaction")).toHaveLength(0);
  });
});

describe("telegram reply port: media", () => {
  const cases: Array<[OutboundMediaKind, string, string, string]> = [
    ["image", "sendPhoto", "pic.png", "image/png"],
    ["document", "sendDocument", "notes.txt", "text/plain"],
    ["voice", "sendVoice", "note.ogg", "audio/ogg"],
    ["audio", "sendAudio", "song.mp3", "audio/mpeg"],
    ["video", "sendVideo", "clip.mp4", "video/mp4"],
  ];
  for (const [kind, method, filename, mime] of cases) {
    test(`${kind} goes by ${method} as a multipart upload with its file name`, async () => {
      const path = join(scratch, filename);
      writeFileSync(path, `bytes of ${filename}`);
      const sent = await adapter.replyPort({ chatId: CHAT }).sendMedia({ kind, path, filename, mime, caption: "see <this>", notify: false });
      const [call] = fake.calls(method);
      expect(call!.encoding).toBe("multipart");
      expect(call!.files[0]).toMatchObject({ filename, size: `bytes of ${filename}`.length });
      // Captions are the model's plain text: no parse_mode, shown as typed.
      expect(call!.body.parse_mode).toBeUndefined();
      expect(call!.body.disable_notification).toBe("true");
      expect(fake.botMessages(CHAT).at(-1)).toMatchObject({ caption: "see <this>", message_id: Number(sent.id) });
    });
  }

  const caps: Array<[OutboundMediaKind, number, string]> = [
    ["image", TELEGRAM_MEDIA_CAPS.image, "10 MB"],
    ["voice", TELEGRAM_MEDIA_CAPS.voice, "1 MB"],
    ["video", TELEGRAM_MEDIA_CAPS.video, "50 MB"],
    ["audio", TELEGRAM_MEDIA_CAPS.audio, "50 MB"],
  ];
  for (const [kind, cap, shown] of caps) {
    test(`${kind} over ${shown}: a text reply naming the file and the cap, never a silent drop`, async () => {
      const path = sized(`big-${kind}.bin`, cap + 1);
      const sent = await adapter
        .replyPort({ chatId: CHAT })
        .sendMedia({ kind, path, filename: `big-${kind}.bin`, mime: "application/octet-stream", notify: true });
      expect(fake.requests.filter((r) => r.encoding === "multipart")).toHaveLength(0);
      const notice = fake.botMessages(CHAT).at(-1)!;
      expect(notice.text).toContain(`big-${kind}.bin`);
      expect(notice.text).toContain(shown);
      expect(notice.disable_notification).toBe(false);
      expect(sent.id).toBe(String(notice.message_id));
    });
  }

  test("a file exactly at the cap is sent", async () => {
    const path = sized("exact.ogg", TELEGRAM_MEDIA_CAPS.voice);
    await adapter.replyPort({ chatId: CHAT }).sendMedia({ kind: "voice", path, filename: "exact.ogg", mime: "audio/ogg", notify: false });
    expect(fake.calls("sendVoice")[0]!.files[0]!.size).toBe(TELEGRAM_MEDIA_CAPS.voice);
  });

  test("a caption over 1024 characters follows the file as a text message", async () => {
    const path = join(scratch, "a.txt");
    writeFileSync(path, "x");
    const caption = "long ".repeat(300).trim();
    await adapter.replyPort({ chatId: CHAT }).sendMedia({ kind: "document", path, filename: "a.txt", mime: "text/plain", caption, notify: false });
    expect(fake.calls("sendDocument")[0]!.body.caption).toBeUndefined();
    expect(fake.visibleTexts(CHAT)).toEqual(["", caption]);
  });

  test("an image Telegram refuses as a photo is sent as a document instead", async () => {
    const path = join(scratch, "wide.png");
    writeFileSync(path, "png");
    fake.failNext("sendPhoto", { error_code: 400, description: "Bad Request: PHOTO_INVALID_DIMENSIONS" });
    const sent = await adapter.replyPort({ chatId: CHAT }).sendMedia({ kind: "image", path, filename: "wide.png", mime: "image/png", notify: false });
    expect(fake.calls("sendDocument")[0]!.files[0]!.filename).toBe("wide.png");
    expect(sent.id).toBe(String(fake.botMessages(CHAT).at(-1)!.message_id));
  });

  test("429 on an upload is waited out and the file is uploaded again", async () => {
    const path = join(scratch, "p.png");
    writeFileSync(path, "png");
    fake.rateLimitNext("sendPhoto", 1);
    await adapter.replyPort({ chatId: CHAT }).sendMedia({ kind: "image", path, filename: "p.png", mime: "image/png", notify: false });
    expect(sleeps).toEqual([1000]);
    expect(fake.calls("sendPhoto").map((c) => [c.status, c.files[0]?.size])).toEqual([
      [429, 3],
      [200, 3],
    ]);
  });
});
