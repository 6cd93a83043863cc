/** The Telegram adapter passes the conformance suite every channel adapter passes, against the Bot API fake. */
import { TelegramAdapter } from "../../../src/channels/telegram/index.ts";
import { TELEGRAM_MEDIA_CAPS } from "../../../src/channels/telegram/outbound.ts";
import { runAdapterContract } from "../../contract/adapter.contract.ts";
import { ALICE, startTelegramFake } from "../../fakes/telegram.ts";
import { configFor } from "./harness.ts";

runAdapterContract("telegram", async () => {
  const fake = startTelegramFake();
  const adapter = new TelegramAdapter(configFor(fake));
  const [inbound] = fake.pushMessage(fake.message.text("thanks!"));
  const chat = ALICE.id;
  let files = 0;
  return {
    adapter,
    target: { chatId: String(chat) },
    inboundMessageId: String(inbound!.message!.message_id),
    boldHi: "<b>hi</b>",
    visible: async () =>
      fake
        .botMessages(chat)
        .filter((e) => !e.deleted)
        .map((e) => ({ text: e.text ?? e.caption ?? "", notified: !e.disable_notification })),
    sentMedia: async () => fake.botMessages(chat).flatMap((e) => (e.file ? [{ filename: e.file.filename, size: e.file.size ?? 0 }] : [])),
    rejectFormattingNext: () => fake.rejectEntitiesNext("sendMessage"),
    serverErrorNext: () => fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" }),
    inboundMedia: async (bytes, mime) => {
      const ref = `contract-file-${++files}`;
      fake.addFile(ref, bytes, { kind: "photo", mime_type: mime });
      return { kind: "image", ref, mime, declaredSize: bytes.byteLength };
    },
    reaction: "👍",
    hasReaction: async (messageId, emoji) =>
      fake.chat(chat).some((e) => String(e.message_id) === messageId && e.reactions.some((r) => r.type === "emoji" && r.emoji === emoji)),
    documentCap: TELEGRAM_MEDIA_CAPS.document,
    stop: async () => {
      await adapter.stop();
      await fake.stop();
    },
  };
});
