/** The WhatsApp adapter against the loopback Cloud API fake: the adapter contract, then what is WhatsApp's own. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MediaTooLarge } from "../../../src/channels/net.ts";
import type { AdapterContext, ChannelAdapter } from "../../../src/channels/types.ts";
import { WhatsAppApi, WhatsAppApiError } from "../../../src/channels/whatsapp/api.ts";
import { type WhatsAppAdapterOptions, whatsAppAdapter } from "../../../src/channels/whatsapp/index.ts";
import { WHATSAPP_MEDIA_CAPS } from "../../../src/channels/whatsapp/outbound.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { Telemetry } from "../../../src/kernel/telemetry.ts";
import { FormattingRejected, type OutboundMediaKind, type OutboundText } from "../../../src/message/index.ts";
import { runAdapterContract } from "../../contract/adapter.contract.ts";
import { startWhatsAppFake, WA_USER, type WhatsAppFake, type WhatsAppFakeOptions } from "../../fakes/whatsapp.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

const configFor = (fake: WhatsAppFake, graphBase = fake.graphBase()) =>
  loadedFrom(`
[fermix_channels.whatsapp]
enabled = true
access_token = "${fake.token}"
phone_number_id = "${fake.phoneNumberId}"
verify_token = "whatsapp-verify-token"
app_secret = "whatsapp-app-secret-for-tests"
owner_user_id = "${WA_USER.wa_id}"
graph_api_base = "${graphBase}"
`).config;

/** A user's message on the fake: its wamid, to react to. */
function userMessage(fake: WhatsAppFake): string {
  const payload = fake.webhook.text("hello there") as { entry: Array<{ changes: Array<{ value: { messages: Array<{ id: string }> } }> }> };
  return payload.entry[0]!.changes[0]!.value.messages[0]!.id;
}

const TEXT_BODY_REJECTION = {
  status: 400,
  code: 100,
  message: "(#100) Invalid parameter",
  details: "Param text['body'] must be at most 4096 characters long.",
};

runAdapterContract("whatsapp", async () => {
  const fake = startWhatsAppFake();
  const adapter = whatsAppAdapter(configFor(fake));
  const inbound = userMessage(fake);
  const to = WA_USER.wa_id;
  return {
    adapter,
    target: { chatId: to, replyTo: inbound },
    inboundMessageId: inbound,
    boldHi: "*hi*",
    visible: async () =>
      fake
        .sent(to)
        .filter((m) => m.type === "text")
        .map((m) => ({ text: m.text!, notified: true })),
    sentMedia: async () =>
      fake
        .sent(to)
        .filter((m) => ["image", "document", "audio", "video"].includes(m.type))
        .map((m) => {
          const media = fake.media.get(String(m.payload.id));
          return { filename: (m.payload.filename as string | undefined) ?? media?.filename, size: media?.bytes.byteLength ?? 0 };
        }),
    rejectFormattingNext: () => fake.failNext("messages", TEXT_BODY_REJECTION),
    serverErrorNext: () => fake.failNext("messages", { status: 500, code: 1, message: "(#1) An unknown error occurred" }),
    inboundMedia: async (bytes, mime) => ({ kind: "image", mime, ref: fake.addMedia(bytes, { mime_type: mime }).id }),
    reaction: "🫡",
    hasReaction: async (id, emoji) => fake.reactionOn(id) === emoji,
    documentCap: WHATSAPP_MEDIA_CAPS.document,
    // WhatsApp has no per-message "silent" switch.
    notifyControl: false,
    stop: async () => {
      await adapter.stop();
      await fake.stop();
    },
  };
});

const text = (t: string, plain = false): OutboundText => ({ text: t, notify: true, linkPreview: false, plain });

describe("whatsapp adapter", () => {
  let fake: WhatsAppFake;
  let adapter: ChannelAdapter;
  let scratch: string;
  let waits: number[];
  let logged: string[];
  const to = WA_USER.wa_id;

  function setup(options: WhatsAppAdapterOptions = {}, fakeOptions: WhatsAppFakeOptions = {}) {
    fake = startWhatsAppFake(fakeOptions);
    scratch = mkdtempSync(join(tmpdir(), "fermix-wa-"));
    waits = [];
    logged = [];
    const log = new Logger({ write: (line) => void logged.push(line) }, "debug", new Redactor());
    adapter = whatsAppAdapter(configFor(fake), { sleep: async (ms) => void waits.push(ms), log, ...options });
  }
  function file(name: string, size: number): string {
    const path = join(scratch, name);
    writeFileSync(path, new Uint8Array(size).fill(0x61));
    return path;
  }
  afterEach(async () => {
    await adapter?.stop();
    await fake?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("text goes to {phone_number_id}/messages with the bearer token and preview_url false", async () => {
    setup();
    const sent = await adapter.replyPort({ chatId: to }).sendText(text("*hello* there"));
    const call = fake.calls("messages")[0]!;
    expect(call.path).toBe(`/v21.0/${fake.phoneNumberId}/messages`);
    expect(call.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(call.query.access_token).toBeUndefined();
    expect(call.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to,
      type: "text",
      text: { preview_url: false, body: "*hello* there" },
    });
    expect(sent.id).toBe(fake.sent(to)[0]!.id);
  });

  test("a text-body refusal is a FormattingRejected; other refusals are a typed error; plain text is never re-flagged", async () => {
    setup();
    const port = adapter.replyPort({ chatId: to });
    fake.failNext("messages", TEXT_BODY_REJECTION);
    await expect(port.sendText(text("x"))).rejects.toBeInstanceOf(FormattingRejected);
    fake.failNext("messages", TEXT_BODY_REJECTION);
    const plain = await port.sendText(text("x", true)).catch((e) => e);
    expect(plain).toBeInstanceOf(WhatsAppApiError);
    fake.failNext("messages", { status: 400, code: 131026, message: "(#131026) Message undeliverable" });
    const other = await port.sendText(text("x")).catch((e) => e);
    expect(other).toBeInstanceOf(WhatsAppApiError);
    expect(other).not.toBeInstanceOf(FormattingRejected);
    expect(other).toMatchObject({ status: 400, code: 131026 });
    expect((other as Error).message).toContain("131026");
  });

  test("reactions take any single emoji on the inbound wamid; two emoji are refused before any call", async () => {
    setup();
    const wamid = userMessage(fake);
    const port = adapter.replyPort({ chatId: to, replyTo: wamid });
    expect(port.capabilities.react).toBe("any");
    await port.react(wamid, "🦜");
    expect(fake.calls("messages")[0]!.body).toMatchObject({ type: "reaction", reaction: { message_id: wamid, emoji: "🦜" } });
    expect(fake.reactionOn(wamid)).toBe("🦜");
    await expect(port.react(wamid, "👍👍")).rejects.toThrow("one emoji");
    expect(fake.calls("messages")).toHaveLength(1);
  });

  test("media is uploaded to /media (file, type, messaging_product) and sent by id with its caption", async () => {
    setup();
    const port = adapter.replyPort({ chatId: to });
    await port.sendMedia({ kind: "image", path: file("cat.png", 10), filename: "cat.png", mime: "image/png", caption: "a cat", notify: false });
    const upload = fake.calls("media")[0]!;
    expect(upload.path).toBe(`/v21.0/${fake.phoneNumberId}/media`);
    expect(upload.encoding).toBe("multipart");
    expect(upload.body).toMatchObject({ messaging_product: "whatsapp", type: "image/png" });
    expect(upload.files.map((f) => [f.field, f.filename, f.type, f.size])).toEqual([["file", "cat.png", "image/png", 10]]);
    const [image] = fake.sent(to);
    expect(image!.type).toBe("image");
    expect(image!.payload).toEqual({ id: (upload.response as { id: string }).id, caption: "a cat" });

    await port.sendMedia({ kind: "document", path: file("notes.pdf", 20), filename: "notes.pdf", mime: "application/pdf", caption: "notes", notify: false });
    expect(fake.sent(to)[1]!.payload).toMatchObject({ filename: "notes.pdf", caption: "notes" });
  });

  test("a voice note is audio; a caption audio cannot carry, or one too long, follows as its own text", async () => {
    setup();
    const port = adapter.replyPort({ chatId: to });
    await port.sendMedia({ kind: "voice", path: file("note.ogg", 30), filename: "note.ogg", mime: "audio/ogg", caption: "listen", notify: false });
    const long = "c".repeat(1100);
    await port.sendMedia({ kind: "image", path: file("p.jpg", 5), filename: "p.jpg", mime: "image/jpeg", caption: long, notify: false });
    expect(fake.sent(to).map((m) => [m.type, m.text])).toEqual([
      ["audio", undefined],
      ["text", "listen"],
      ["image", undefined],
      ["text", long],
    ]);
    expect(fake.sent(to)[0]!.payload.caption).toBeUndefined();
  });

  test("caps per kind: over the cap nothing is uploaded, the user is told the file and the cap, telemetry counts it", async () => {
    setup();
    const telemetry = new Telemetry();
    const failed: string[] = [];
    telemetry.on("channel.media_send_error", (e) => void failed.push(`${e.metadata.kind}:${e.metadata.reason}`));
    await adapter.start({ log: new Logger({ write: () => {} }, "info", new Redactor()), telemetry } as unknown as AdapterContext);
    const port = adapter.replyPort({ chatId: to });
    const cases: Array<[OutboundMediaKind, string, string, string]> = [
      ["image", "big.jpg", "image/jpeg", "5 MB"],
      ["video", "big.mp4", "video/mp4", "16 MB"],
      ["voice", "big.ogg", "audio/ogg", "16 MB"],
    ];
    for (const [kind, name, mime, cap] of cases) {
      await port.sendMedia({ kind, path: file(name, WHATSAPP_MEDIA_CAPS[kind] + 1), filename: name, mime, notify: false });
      const last = fake.visibleTexts(to).at(-1)!;
      expect(last).toContain(name);
      expect(last).toContain(cap);
    }
    expect(fake.calls("media")).toHaveLength(0);
    expect(failed).toEqual(["image:over_cap", "video:over_cap", "voice:over_cap"]);
    expect(WHATSAPP_MEDIA_CAPS).toEqual({ image: 5 * 2 ** 20, audio: 16 * 2 ** 20, voice: 16 * 2 ** 20, video: 16 * 2 ** 20, document: 100 * 2 ** 20 });
  });

  test("a rate limit is waited out (backing off when Graph names no Retry-After) and gives up after a few", async () => {
    setup();
    const port = adapter.replyPort({ chatId: to });
    fake.rateLimitNext("messages");
    await port.sendText(text("after the pause"));
    // The gate measures the pause on the real clock: a busy machine may take a millisecond off it.
    const rounded = (ms: number[]) => ms.map((w) => Math.round(w / 100) * 100);
    expect(rounded(waits)).toEqual([1000]);
    expect(fake.calls("messages").map((r) => r.status)).toEqual([429, 200]);
    expect(logged.some((l) => l.includes("whatsapp rate limited"))).toBe(true);

    // A fresh client: the fake sleep does not move the clock, so the first pause would still hold.
    const patient: number[] = [];
    const other = whatsAppAdapter(configFor(fake), { sleep: async (ms) => void patient.push(ms) });
    fake.rateLimitNext("messages", 10);
    const error = await other
      .replyPort({ chatId: to })
      .sendText(text("never"))
      .catch((e) => e);
    expect(error).toBeInstanceOf(WhatsAppApiError);
    expect(error).toMatchObject({ status: 429, code: 130429 });
    expect(rounded(patient)).toEqual([1000, 2000, 4000]);
  });

  test("a Retry-After past the cap fails at once instead of stalling the reply", async () => {
    const slow = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => Response.json({ error: { message: "(#4) Application request limit reached", code: 4 } }, { status: 429, headers: { "retry-after": "600" } }),
    });
    const slept: number[] = [];
    const api = new WhatsAppApi({
      accessToken: "EAAsecret-token-0001",
      phoneNumberId: "1",
      graphApiBase: `http://127.0.0.1:${slow.port}/v21.0`,
      sleep: async (ms) => void slept.push(ms),
    });
    const error = await api.sendMessage("15550001111", "text", { body: "x" }).catch((e) => e);
    await slow.stop(true);
    expect(error).toMatchObject({ code: 4, retryAfterMs: 600_000 });
    expect(slept).toEqual([]);
    expect((error as Error).message).not.toContain("EAAsecret-token-0001");
  });

  test("fetchMedia: media id → URL (file_size a string or a number) → bytes, both with the bearer token", async () => {
    for (const fileSizeAs of ["string", "number"] as const) {
      setup({}, { fileSizeAs });
      const { id } = fake.addMedia("ogg bytes", { mime_type: "audio/ogg" });
      const fetched = await adapter.fetchMedia({ kind: "voice", mime: "audio/ogg; codecs=opus", ref: id });
      expect(new TextDecoder().decode(fetched.bytes)).toBe("ogg bytes");
      expect(fetched.mime).toBe("audio/ogg; codecs=opus");
      const [info, download] = [fake.calls("media.get")[0]!, fake.calls("media.download")[0]!];
      expect(info.path).toBe(`/v21.0/${id}`);
      expect(info.headers.authorization).toBe(`Bearer ${fake.token}`);
      expect(download.headers.authorization).toBe(`Bearer ${fake.token}`);
      await fake.stop();
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  test("inbound media over 25 MB is refused from its declared size, before the bytes are fetched", async () => {
    setup();
    expect(adapter.inboundMediaCap).toBe(25 * 2 ** 20);
    const { id } = fake.addMedia("small really", { mime_type: "video/mp4", size: 26 * 2 ** 20 });
    const error = await adapter.fetchMedia({ kind: "video", ref: id }).catch((e) => e);
    expect(error).toBeInstanceOf(MediaTooLarge);
    expect((error as Error).message).toContain("25 MB");
    expect(fake.calls("media.download")).toHaveLength(0);
  });

  test("no edit, delete or typing; those methods refuse rather than pretend", async () => {
    setup();
    const port = adapter.replyPort({ chatId: to });
    expect(port.capabilities).toEqual({ edit: false, delete: false, react: "any", media: true, typing: false });
    await expect(port.editText({ id: "wamid.x" }, text("y"))).rejects.toThrow("cannot be edited");
    await expect(port.deleteMessage({ id: "wamid.x" })).rejects.toThrow("cannot be deleted");
  });

  test("no token in any error message or log line", async () => {
    setup();
    const wrong = whatsAppAdapter(configFor(fake), { log: new Logger({ write: (l) => void logged.push(l) }, "debug", new Redactor()) });
    const errors: unknown[] = [];
    errors.push(
      await adapter
        .replyPort({ chatId: "not-a-number" })
        .sendText(text("x"))
        .catch((e) => e),
    );
    fake.rateLimitNext("messages", 5);
    errors.push(
      await adapter
        .replyPort({ chatId: to })
        .sendText(text("x"))
        .catch((e) => e),
    );
    errors.push(await wrong.fetchMedia({ kind: "image", ref: "999" }).catch((e) => e));
    const offline = whatsAppAdapter(configFor(fake, "http://127.0.0.1:9/v21.0"), { sleep: async () => {} });
    errors.push(
      await offline
        .replyPort({ chatId: to })
        .sendText(text("x"))
        .catch((e) => e),
    );
    expect(errors.every((e) => e instanceof WhatsAppApiError)).toBe(true);
    for (const e of errors) expect((e as Error).message).not.toContain(fake.token);
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) expect(line).not.toContain(fake.token);
  });

  test("state: a webhook channel is ready and alive while running", async () => {
    setup();
    expect(adapter.state().process_alive).toBe(false);
    await adapter.start({ log: new Logger({ write: () => {} }, "info", new Redactor()) } as unknown as AdapterContext);
    expect(adapter.state()).toEqual({ status: "ready", process_alive: true });
    await adapter.stop();
    expect(adapter.state().process_alive).toBe(false);
  });
});
