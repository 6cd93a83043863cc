import { describe, expect, test } from "bun:test";
import { parseWhatsAppBody, parseWhatsAppPayload, type WhatsAppParseResult } from "../../../src/channels/whatsapp/inbound.ts";
import { message, messagesPayload, OFFICIAL_TEXT_EXAMPLE, payload, SENDER } from "./fixtures.ts";

const AT = 1_749_416_390_000;
const parse = (json: unknown) => parseWhatsAppPayload(json, { receivedAt: AT });

/** The batch of a result that must be one. */
function batchOf(result: WhatsAppParseResult) {
  if (result.kind !== "batch") throw new Error("expected a batch");
  return result;
}
/** The single message a payload must yield. */
function only(json: unknown) {
  const { messages } = batchOf(parse(json));
  expect(messages).toHaveLength(1);
  return messages[0]!.message;
}

describe("the official text example", () => {
  test("becomes one message keyed by its wamid, named from the contact card", () => {
    const result = parseWhatsAppBody(new TextEncoder().encode(OFFICIAL_TEXT_EXAMPLE), { receivedAt: AT });
    const id = "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=";
    expect(result).toEqual({
      kind: "batch",
      statuses: 0,
      ignored: 0,
      messages: [
        {
          idempotencyKey: id,
          message: {
            channel: "whatsapp",
            chatId: "16505551234",
            senderId: "16505551234",
            senderName: "Sheena Nelson",
            messageId: id,
            text: "Does it come in another color?",
            media: [],
            receivedAt: AT,
            direct: true,
          },
        },
      ],
    });
  });

  test("the same payload parsed from JSON or from bytes agrees", () => {
    expect(parse(JSON.parse(OFFICIAL_TEXT_EXAMPLE))).toEqual(parseWhatsAppBody(new TextEncoder().encode(OFFICIAL_TEXT_EXAMPLE), { receivedAt: AT }));
  });
});

describe("message types", () => {
  test("image: caption becomes the text, the media id the ref", () => {
    const m = only(messagesPayload(message("wamid.1", "image", { image: { caption: "the view", mime_type: "image/jpeg", sha256: "abc", id: "MEDIA1" } })));
    expect(m.text).toBe("the view");
    expect(m.media).toEqual([{ kind: "image", mime: "image/jpeg", ref: "MEDIA1" }]);
  });

  test("a captionless image is still actionable: empty text, one image", () => {
    const m = only(messagesPayload(message("wamid.2", "image", { image: { mime_type: "image/png", id: "MEDIA2" } })));
    expect(m.text).toBe("");
    expect(m.media).toHaveLength(1);
  });

  test("document keeps its filename and caption", () => {
    const m = only(
      messagesPayload(
        message("wamid.3", "document", { document: { caption: "invoice", filename: "inv.pdf", mime_type: "application/pdf", sha256: "x", id: "MEDIA3" } }),
      ),
    );
    expect(m.text).toBe("invoice");
    expect(m.media).toEqual([{ kind: "document", mime: "application/pdf", filename: "inv.pdf", ref: "MEDIA3" }]);
  });

  test("audio with voice=true is a voice note; without it plain audio", () => {
    const voice = only(messagesPayload(message("wamid.4", "audio", { audio: { mime_type: "audio/ogg; codecs=opus", id: "M4", voice: true } })));
    expect(voice.media).toEqual([{ kind: "voice", mime: "audio/ogg; codecs=opus", ref: "M4" }]);
    const audio = only(messagesPayload(message("wamid.5", "audio", { audio: { mime_type: "audio/mpeg", id: "M5", voice: false } })));
    expect(audio.media[0]?.kind).toBe("audio");
    const unflagged = only(messagesPayload(message("wamid.6", "audio", { audio: { mime_type: "audio/mpeg", id: "M6" } })));
    expect(unflagged.media[0]?.kind).toBe("audio");
  });

  test("video and sticker", () => {
    expect(only(messagesPayload(message("wamid.7", "video", { video: { mime_type: "video/mp4", id: "M7", caption: "look" } })))).toMatchObject({
      text: "look",
      media: [{ kind: "video", ref: "M7" }],
    });
    expect(only(messagesPayload(message("wamid.8", "sticker", { sticker: { mime_type: "image/webp", id: "M8", animated: false } }))).media).toEqual([
      { kind: "sticker", mime: "image/webp", ref: "M8" },
    ]);
  });

  test("button and interactive replies carry the chosen text", () => {
    expect(only(messagesPayload(message("wamid.9", "button", { button: { text: "Yes", payload: "YES" } }))).text).toBe("Yes");
    expect(
      only(messagesPayload(message("wamid.10", "interactive", { interactive: { type: "button_reply", button_reply: { id: "b1", title: "Later" } } }))).text,
    ).toBe("Later");
    expect(only(messagesPayload(message("wamid.11", "interactive", { interactive: { type: "list_reply", list_reply: { id: "r", title: "Row" } } }))).text).toBe(
      "Row",
    );
  });

  test("unreadable types become empty messages, so the user hears it looks empty", () => {
    for (const [type, body] of [
      ["location", { location: { latitude: 1, longitude: 2 } }],
      ["contacts", { contacts: [] }],
      ["unsupported", { errors: [{ code: 131051, title: "Message type unknown" }] }],
      ["order", {}],
      ["text", { text: { body: 5 } }],
    ] as const) {
      expect(only(messagesPayload(message(`wamid.${type}`, type, body)))).toMatchObject({ text: "", media: [] });
    }
  });

  test("reactions are dropped entirely and counted as ignored", () => {
    const result = batchOf(parse(messagesPayload(message("wamid.r", "reaction", { reaction: { message_id: "wamid.out", emoji: "\u{1F44D}" } }))));
    expect(result).toEqual({ kind: "batch", messages: [], statuses: 0, ignored: 1 });
  });

  test("a media message without a media id is skipped as broken", () => {
    const result = batchOf(parse(messagesPayload(message("wamid.b", "image", { image: { mime_type: "image/png" } }), message("wamid.c", "image"))));
    expect(result.messages).toEqual([]);
    expect(result.ignored).toBe(2);
  });

  test("a type named after an Object prototype member is just unreadable", () => {
    for (const type of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      expect(only(messagesPayload(message(`wamid.${type}`, type)))).toMatchObject({ text: "", media: [] });
    }
  });
});

describe("batches", () => {
  test("status callbacks are counted and produce no message", () => {
    const statuses = [
      { id: "wamid.o1", status: "delivered", timestamp: "1749416400", recipient_id: SENDER },
      { id: "wamid.o1", status: "read", timestamp: "1749416401", recipient_id: SENDER },
    ];
    expect(parse(payload({ metadata: {}, statuses }))).toEqual({ kind: "batch", messages: [], statuses: 2, ignored: 0 });
  });

  test("other change fields are counted as ignored", () => {
    expect(parse(payload({ event: "APPROVED" }, "message_template_status_update"))).toEqual({
      kind: "batch",
      messages: [],
      statuses: 0,
      ignored: 1,
    });
  });

  test("several entries, changes and messages keep their order", () => {
    const first = messagesPayload(message("wamid.a", "text", { text: { body: "one" } }), message("wamid.b", "text", { text: { body: "two" } }));
    const second = messagesPayload(message("wamid.c", "text", { text: { body: "three" } }));
    const combined = {
      object: "whatsapp_business_account",
      entry: [...(first.entry as unknown[]), ...(second.entry as unknown[])],
    };
    const { messages } = batchOf(parse(combined));
    expect(messages.map((m) => [m.idempotencyKey, m.message.text])).toEqual([
      ["wamid.a", "one"],
      ["wamid.b", "two"],
      ["wamid.c", "three"],
    ]);
  });

  test("a sender without a contact card has no name", () => {
    const m = only(payload({ messages: [message("wamid.n", "text", { text: { body: "hi" } })] }));
    expect(m.senderName).toBeUndefined();
  });

  test("another Meta product's payload is acknowledged and ignored", () => {
    expect(parse({ object: "page", entry: [] })).toEqual({ kind: "batch", messages: [], statuses: 0, ignored: 1 });
  });

  test("an empty entry list is an empty batch", () => {
    expect(parse({ object: "whatsapp_business_account", entry: [] })).toEqual({ kind: "batch", messages: [], statuses: 0, ignored: 0 });
  });
});

describe("invalid payloads", () => {
  test("what is not a webhook payload is invalid", () => {
    for (const body of [
      null,
      "x",
      [],
      {},
      { object: "whatsapp_business_account" },
      { object: 1, entry: [] },
      { object: "whatsapp_business_account", entry: {} },
      { object: "whatsapp_business_account", entry: [{}] },
      { object: "whatsapp_business_account", entry: [{ changes: [{ value: {} }] }] },
      { object: "whatsapp_business_account", entry: [{ changes: [null] }] },
    ]) {
      expect(parse(body)).toEqual({ kind: "invalid" });
    }
  });

  test("bytes that are not UTF-8 JSON are invalid", () => {
    for (const raw of [new Uint8Array(), new TextEncoder().encode("{"), Uint8Array.from([0xc3, 0x28])]) {
      expect(parseWhatsAppBody(raw)).toEqual({ kind: "invalid" });
    }
  });
});
