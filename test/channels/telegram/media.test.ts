/** Inbound attachments: getFile, then the download from `${api_root}/file/bot<token>/<path>`, within the 20 MB cap. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { toInbound } from "../../../src/channels/telegram/inbound.ts";
import { TELEGRAM_INBOUND_CAP, TelegramAdapter } from "../../../src/channels/telegram/index.ts";
import { startTelegramFake, type TelegramFake } from "../../fakes/telegram.ts";
import { configFor } from "./harness.ts";

let fake: TelegramFake;
let adapter: TelegramAdapter;
beforeEach(() => {
  fake = startTelegramFake();
  adapter = new TelegramAdapter(configFor(fake));
});
afterEach(async () => {
  await adapter.stop();
  await fake.stop();
});

test("the inbound cap is 20 MB", () => {
  expect(adapter.inboundMediaCap).toBe(TELEGRAM_INBOUND_CAP);
  expect(TELEGRAM_INBOUND_CAP).toBe(20 * 1024 * 1024);
});

test("a photo from an update downloads as the largest size's bytes", async () => {
  const bytes = new TextEncoder().encode("the full-size jpeg");
  const [update] = fake.pushMessage(fake.message.photo({ bytes }));
  const media = toInbound(update!, 0)!.message.media[0]!;
  const fetched = await adapter.fetchMedia(media);
  expect(new TextDecoder().decode(fetched.bytes)).toBe("the full-size jpeg");
  expect(fetched.mime).toBe("image/jpeg");
  const download = fake.requests.find((r) => r.api === "file")!;
  expect(download.path).toStartWith(`/file/bot${fake.token}/photos/`);
});

test("a voice note keeps its mime; a document keeps its file name", async () => {
  const [voice, doc] = fake.pushMessage(fake.message.voice(), fake.message.document({ file_name: "a.pdf", mime_type: "application/pdf" }));
  const v = await adapter.fetchMedia(toInbound(voice!, 0)!.message.media[0]!);
  expect(v.mime).toBe("audio/ogg");
  const d = await adapter.fetchMedia(toInbound(doc!, 0)!.message.media[0]!);
  expect(d).toMatchObject({ mime: "application/pdf", filename: "a.pdf" });
});

test("an attachment declared over 20 MB is refused before any request", async () => {
  const [update] = fake.pushMessage(fake.message.document({ size: 30 * 1024 * 1024 }));
  const media = toInbound(update!, 0)!.message.media[0]!;
  expect(media.declaredSize).toBe(30 * 1024 * 1024);
  await expect(adapter.fetchMedia(media)).rejects.toThrow(/over the/);
  expect(fake.calls("getFile")).toHaveLength(0);
});

test("a failed download says why, without the token", async () => {
  const [update] = fake.pushMessage(fake.message.photo());
  fake.failNext("file", { error_code: 500, description: "Internal Server Error" });
  const error = await adapter.fetchMedia(toInbound(update!, 0)!.message.media[0]!).then(
    () => new Error("expected a failure"),
    (e: Error) => e,
  );
  expect(error.message).toContain("HTTP 500");
  expect(error.message).not.toContain(fake.token);
});
