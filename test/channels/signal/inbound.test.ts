/** signal-cli `receive` params → InboundMessage: what becomes a turn, with which ids, and what is ignored. */
import { afterAll, describe, expect, test } from "bun:test";
import { parseMessageId, parseSignalReceive } from "../../../src/channels/signal/inbound.ts";
import { SIGNAL_ACCOUNT, SIGNAL_ALICE, SIGNAL_GROUP, startSignalFake } from "../../fakes/signal.ts";

// Only its envelope builders are used here: nothing is started.
const fake = startSignalFake();
afterAll(() => fake.stop());
const options = { account: SIGNAL_ACCOUNT, receivedAt: 1_700_000_000_000 };

/** signal-cli-jsonrpc(5)'s own example notification, byte for byte. */
const MAN_PAGE_EXAMPLE = JSON.parse(
  '{"jsonrpc":"2.0","method":"receive","params":{"envelope":{"source":"+33123456789","sourceNumber":"+33123456789","sourceUuid":"uuid","sourceName":"name","sourceDevice":1,"timestamp":1631458508784,"dataMessage":{"timestamp":1631458508784,"message":"foobar","expiresInSeconds":0,"viewOnce":false,"mentions":[],"attachments":[],"contacts":[]}}}}',
);

describe("signal inbound", () => {
  test("the man page's example becomes a direct message keyed by the sender's UUID, the number an alias", () => {
    const result = parseSignalReceive(MAN_PAGE_EXAMPLE.params, options);
    expect(result).toEqual({
      kind: "message",
      idempotencyKey: "uuid:1631458508784",
      message: {
        channel: "signal",
        chatId: "uuid",
        senderId: "uuid",
        senderAliases: ["+33123456789"],
        senderName: "name",
        messageId: "uuid:1631458508784",
        text: "foobar",
        media: [],
        receivedAt: options.receivedAt,
        direct: true,
      },
    });
  });

  test("a group message's chat is the group, not a direct one; the sender is still the person", () => {
    const params = fake.envelope.text("hello group", { groupId: SIGNAL_GROUP });
    const result = parseSignalReceive(params, options);
    if (result.kind !== "message") throw new Error(result.kind);
    expect(result.message.chatId).toBe(`group:${SIGNAL_GROUP}`);
    expect(result.message.direct).toBe(false);
    expect(result.message.senderId).toBe(SIGNAL_ALICE.uuid);
    expect(parseMessageId(result.message.messageId)).toEqual({ author: SIGNAL_ALICE.uuid, timestamp: expect.any(Number) });
  });

  test("a sender signal-cli knows only by number is keyed by the number, with no alias", () => {
    const result = parseSignalReceive(fake.envelope.text("hi", { noUuid: true }), options);
    if (result.kind !== "message") throw new Error(result.kind);
    expect(result.message.senderId).toBe(SIGNAL_ALICE.number);
    expect(result.message.chatId).toBe(SIGNAL_ALICE.number);
    expect(result.message.senderAliases).toBeUndefined();
  });

  test("attachments become media by type, referenced by their id in the store; unsafe ids are skipped", () => {
    const image = { contentType: "image/jpeg", filename: "cat.jpg", id: "Abc_12.jpg", size: 2048 };
    const audio = { contentType: "audio/aac", filename: null, id: "Voice1.aac", size: 900 };
    const pdf = { contentType: "application/pdf", filename: "a.pdf", id: "doc.pdf", size: 10 };
    const traversal = { contentType: "image/png", filename: "x.png", id: "../../etc/passwd", size: 1 };
    const pending = { contentType: "image/png", filename: "not-downloaded.png", size: 1 };
    const result = parseSignalReceive(fake.envelope.text("", { attachments: [image, audio, pdf, traversal, pending] as never }), options);
    if (result.kind !== "message") throw new Error(result.kind);
    expect(result.message.media).toEqual([
      { kind: "image", ref: "Abc_12.jpg", mime: "image/jpeg", declaredSize: 2048, filename: "cat.jpg" },
      { kind: "audio", ref: "Voice1.aac", mime: "audio/aac", declaredSize: 900, filename: "Voice1.aac" },
      { kind: "document", ref: "doc.pdf", mime: "application/pdf", declaredSize: 10, filename: "a.pdf" },
    ]);
  });

  test("mentions come back as @name in place of Signal's placeholder", () => {
    const params = fake.envelope.text("\uFFFC can you and \uFFFC check?", { groupId: SIGNAL_GROUP }) as { envelope: { dataMessage: Record<string, unknown> } };
    params.envelope.dataMessage.mentions = [
      { name: "Fermix", number: SIGNAL_ACCOUNT, uuid: "f", start: 0, length: 1 },
      { name: null, number: "+15550004444", uuid: "c", start: 14, length: 1 },
    ];
    const result = parseSignalReceive(params, options);
    if (result.kind !== "message") throw new Error(result.kind);
    expect(result.message.text).toBe("@Fermix can you and @+15550004444 check?");
  });

  test("receipts, typing, sync and story messages, reactions, deletions and group updates are ignored", () => {
    const why = (params: unknown) => {
      const r = parseSignalReceive(params, options);
      return r.kind === "ignored" ? r.why : r.kind;
    };
    expect(why(fake.envelope.receipt())).toBe("receiptMessage");
    expect(why(fake.envelope.typing())).toBe("typingMessage");
    expect(why(fake.envelope.sync())).toBe("syncMessage");
    expect(why(fake.envelope.story())).toBe("storyMessage");
    const withData = (extra: Record<string, unknown>) => {
      const p = fake.envelope.text("x") as { envelope: { dataMessage: Record<string, unknown> } };
      Object.assign(p.envelope.dataMessage, extra);
      return p;
    };
    expect(why(withData({ reaction: { emoji: "👍", targetAuthorUuid: "x", targetSentTimestamp: 1, isRemove: false } }))).toBe("reaction");
    expect(why(withData({ remoteDelete: { timestamp: 1 } }))).toBe("remoteDelete");
    expect(why(withData({ isExpirationUpdate: true }))).toBe("isExpirationUpdate");
    expect(why(withData({ groupInfo: { groupId: SIGNAL_GROUP, type: "UPDATE" } }))).toBe("group_update");
    // Our own account's messages (note to self from this device) are never turns.
    const own = fake.envelope.text("x") as { envelope: Record<string, unknown> };
    own.envelope.sourceNumber = SIGNAL_ACCOUNT;
    expect(why(own)).toBe("own_message");
  });

  test("a sticker (no text, no stored file) is still a message: the gateway answers that it looks empty", () => {
    const p = fake.envelope.text("") as { envelope: { dataMessage: Record<string, unknown> } };
    delete p.envelope.dataMessage.message;
    p.envelope.dataMessage.sticker = { packId: "abc", stickerId: 3 };
    const result = parseSignalReceive(p, options);
    expect(result.kind === "message" && result.message.text === "" && result.message.media.length === 0).toBe(true);
  });

  test("a manual-subscription notification (params.result.envelope) parses too; junk is invalid, not a throw", () => {
    const subscribed = { subscription: 0, result: fake.envelope.text("sub") as { envelope: unknown } };
    expect(parseSignalReceive(subscribed, options).kind).toBe("message");
    for (const junk of [null, 3, "x", [], {}, { envelope: null }, { envelope: { timestamp: "soon" } }, { envelope: { timestamp: 1, dataMessage: "x" } }]) {
      expect(parseSignalReceive(junk, options).kind).toBe("invalid");
    }
  });

  test("message ids split at the last colon; anything else is not ours", () => {
    expect(parseMessageId("+15550002222:17")).toEqual({ author: "+15550002222", timestamp: 17 });
    expect(parseMessageId("17")).toBeUndefined();
    expect(parseMessageId("a:b")).toBeUndefined();
    expect(parseMessageId(":5")).toBeUndefined();
  });
});
