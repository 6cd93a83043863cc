/** Update → InboundMessage, on realistic updates (the fake's builders), for every message kind. */
import { describe, expect, test } from "bun:test";
import type { Message, Update } from "grammy/types";
import { nextOffset, toInbound, toInboundBatch } from "../../../src/channels/telegram/inbound.ts";
import { isEmptyMessage } from "../../../src/gateway/media.ts";
import { MessageBuilder } from "../../fakes/telegram/builders.ts";
import { FileStore } from "../../fakes/telegram/files.ts";
import { ALICE, BOB, groupChat } from "../../fakes/telegram.ts";

const AT = 1_750_000_000_000;
let ids = 0;
const build = new MessageBuilder({ files: new FileStore(), nextMessageId: () => ++ids });
let updateId = 500;
const upd = (message: Message): Update => ({ update_id: ++updateId, message }) as Update;
const convert = (message: Message) => {
  const out = toInbound(upd(message), AT);
  if (!out) throw new Error("expected a message");
  return out.message;
};

describe("telegram inbound conversion", () => {
  test("text: chat id, sender id as the stable id, message id, name, arrival time", () => {
    const msg = build.text("hello there");
    const out = toInbound(upd(msg), AT)!;
    expect(out.key).toBe(`${ALICE.id}:${msg.message_id}`);
    expect(out.message).toEqual({
      channel: "telegram",
      chatId: String(ALICE.id),
      senderId: String(ALICE.id),
      senderName: "Alice Liddell",
      messageId: String(msg.message_id),
      text: "hello there",
      media: [],
      receivedAt: AT,
      direct: true,
    });
  });

  test("a command keeps its text (the gateway parses /cmd@bot)", () => {
    expect(convert(build.text("/whoami@fermix_test_bot")).text).toBe("/whoami@fermix_test_bot");
  });

  test("photo: the largest size, its file_size as declaredSize, the caption as text", () => {
    const msg = build.photo({ caption: "look", size: 3_000_000, sizes: 4 });
    const out = convert(msg);
    const largest = msg.photo!.at(-1)!;
    expect(out.text).toBe("look");
    expect(out.media).toEqual([{ kind: "image", ref: largest.file_id, mime: "image/jpeg", declaredSize: 3_000_000 }]);
  });

  test("a captionless photo is actionable, not empty", () => {
    const out = convert(build.photo());
    expect(out.text).toBe("");
    expect(isEmptyMessage(out)).toBe(false);
  });

  test("document with name and mime", () => {
    const msg = build.document({ file_name: "report.pdf", mime_type: "application/pdf", size: 12345, caption: "Q3" });
    expect(convert(msg)).toMatchObject({
      text: "Q3",
      media: [{ kind: "document", ref: msg.document!.file_id, mime: "application/pdf", filename: "report.pdf", declaredSize: 12345 }],
    });
  });

  test("an audio-MIME document is audio (so it is transcribed)", () => {
    const msg = build.document({ file_name: "memo.m4a", mime_type: "audio/mp4" });
    expect(convert(msg).media[0]).toMatchObject({ kind: "audio", mime: "audio/mp4", filename: "memo.m4a" });
  });

  test("voice note", () => {
    const msg = build.voice({ duration: 7, size: 4096 });
    expect(convert(msg).media).toEqual([{ kind: "voice", ref: msg.voice!.file_id, mime: "audio/ogg", declaredSize: 4096 }]);
  });

  test("audio file, with its caption kept", () => {
    const msg = build.audio({ file_name: "song.mp3", caption: "listen" });
    const out = convert(msg);
    expect(out.text).toBe("listen");
    expect(out.media[0]).toMatchObject({ kind: "audio", mime: "audio/mpeg", filename: "song.mp3", ref: msg.audio!.file_id });
  });

  test("video note: no mime on the wire, always MP4", () => {
    const msg = build.videoNote({ size: 200_000 });
    expect(convert(msg).media).toEqual([{ kind: "video_note", ref: msg.video_note!.file_id, mime: "video/mp4", declaredSize: 200_000 }]);
  });

  test("video", () => {
    const msg = build.video({ file_name: "clip.mp4" });
    expect(convert(msg).media[0]).toMatchObject({ kind: "video", mime: "video/mp4", filename: "clip.mp4" });
  });

  test("animation (which also carries `document`) is a video, not a document", () => {
    const doc = build.document({ file_name: "cat.mp4", mime_type: "video/mp4" });
    const msg = { ...doc, animation: { ...doc.document!, width: 320, height: 240, duration: 2 } } as Message;
    expect(convert(msg).media[0]).toMatchObject({ kind: "video", mime: "video/mp4" });
  });

  test("sticker → media kind sticker and no text: the gateway's 'looks empty'", () => {
    const out = convert(build.sticker());
    expect(out.media).toHaveLength(1);
    expect(out.media[0]).toMatchObject({ kind: "sticker", mime: "image/webp" });
    expect(out.text).toBe("");
    expect(isEmptyMessage(out)).toBe(true);
  });

  test("poll → empty text and no media: 'looks empty'", () => {
    const out = convert(build.poll({ question: "Lunch?" }));
    expect(out.text).toBe("");
    expect(out.media).toEqual([]);
    expect(isEmptyMessage(out)).toBe(true);
  });

  test("album: every part carries the media_group_id as albumGroup", () => {
    const parts = build.album([{}, {}, { document: {} }], { caption: "trip" });
    const out = parts.map(convert);
    expect(new Set(out.map((m) => m.albumGroup))).toEqual(new Set([parts[0]!.media_group_id!]));
    expect(out.map((m) => m.text)).toEqual(["trip", "", ""]);
  });

  test("forum topic: message_thread_id becomes the thread; the group is the chat", () => {
    const chat = groupChat({ forum: true });
    const out = convert(build.text("in a topic", { chat, from: BOB, thread: 42 }));
    expect(out).toMatchObject({ chatId: String(chat.id), threadId: "42", senderId: String(BOB.id), senderName: "Bob" });
  });

  test("a reply thread in a plain group is not a topic", () => {
    const msg = { ...build.text("reply", { chat: groupChat() }), message_thread_id: 9 } as Message;
    expect(convert(msg).threadId).toBeUndefined();
  });

  test("updates that are not user messages are skipped; the offset still covers them", () => {
    const edited = { update_id: 900, edited_message: { ...build.text("x"), edit_date: 1 } } as Update;
    const post = { update_id: 901, message: { ...build.text("from a channel"), from: undefined } } as unknown as Update;
    const text = { update_id: 902, message: build.text("kept") } as Update;
    const batch = toInboundBatch([edited, post, text], AT);
    expect(batch.map((b) => b.message.text)).toEqual(["kept"]);
    expect(nextOffset([edited, post, text], 0)).toBe(903);
    expect(nextOffset([], 77)).toBe(77);
  });
});
