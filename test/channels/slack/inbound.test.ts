import { describe, expect, test } from "bun:test";
import { parseSlackBody, parseSlackEvent, type SlackParseResult } from "../../../src/channels/slack/inbound.ts";
import type { InboundMessage } from "../../../src/message/index.ts";
import { BOT, dmEvent, envelope, fileShareEvent, messageEvent, URL_VERIFICATION, USER } from "./fixtures.ts";

const AT = 1_700_000_000_123;
const parse = (json: unknown) => parseSlackEvent(json, { botUserId: BOT, receivedAt: AT });
/** Parse without a configured bot id. */
const parseAnonymous = (json: unknown) => parseSlackEvent(json, { receivedAt: AT });

/** The message of a result that must be one. */
function messageOf(result: SlackParseResult): InboundMessage {
  if (result.kind !== "message") throw new Error(`expected a message, got ${JSON.stringify(result)}`);
  return result.message;
}
const why = (result: SlackParseResult) => (result.kind === "ignored" ? result.why : `not ignored: ${result.kind}`);

describe("envelopes", () => {
  test("url_verification answers the challenge", () => {
    expect(parse(URL_VERIFICATION)).toEqual({ kind: "url_verification", challenge: URL_VERIFICATION.challenge });
  });

  test("what is not an envelope is invalid", () => {
    for (const body of [
      null,
      42,
      "event_callback",
      [],
      [URL_VERIFICATION],
      {},
      { type: 7 },
      { type: "url_verification" },
      { type: "url_verification", challenge: 12 },
      { type: "event_callback" },
      { type: "event_callback", event: "message" },
      { type: "event_callback", event: {} },
      { type: "event_callback", event: { type: "message" }, event_id: 5 },
      { type: "event_callback", event: { type: "message" }, authorizations: {} },
    ]) {
      expect(parse(body)).toEqual({ kind: "invalid" });
    }
  });

  test("other envelope types are authentic Slack traffic: ignored, not invalid", () => {
    expect(why(parse({ type: "app_rate_limited", team_id: "T1", minute_rate_limited: 1518467820 }))).toBe("envelope:app_rate_limited");
  });

  test("raw bytes: JSON is parsed, anything else is invalid", () => {
    const raw = new TextEncoder().encode(JSON.stringify(envelope(dmEvent())));
    expect(parseSlackBody(raw, { receivedAt: AT }).kind).toBe("message");
    for (const text of ["", "{", "token=x&team_id=T1", "null", '{"type":"url_verification"'])
      expect(parseSlackBody(new TextEncoder().encode(text))).toEqual({ kind: "invalid" });
    expect(parseSlackBody(Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]))).toEqual({ kind: "invalid" });
  });
});

describe("direct messages", () => {
  test("a DM becomes an inbound message with no thread", () => {
    const result = parse(envelope(dmEvent({ text: "what's on today?" })));
    expect(result).toEqual({
      kind: "message",
      idempotencyKey: "D0442US94JD:1700000000.000100",
      eventId: "Ev0MESSAGE01",
      message: {
        channel: "slack",
        chatId: "D0442US94JD",
        senderId: USER,
        messageId: "1700000000.000100",
        text: "what's on today?",
        media: [],
        receivedAt: AT,
        direct: true,
      },
    });
  });

  test("a DM without channel_type is recognised by its D channel id", () => {
    const event = dmEvent();
    delete event.channel_type;
    expect(messageOf(parse(envelope(event))).threadId).toBeUndefined();
  });

  test("a thread inside a DM keeps its thread", () => {
    expect(messageOf(parse(envelope(dmEvent({ thread_ts: "1699999999.000001" })))).threadId).toBe("1699999999.000001");
  });

  test("a DM with nothing in it still reaches the gateway, which says it looks empty", () => {
    expect(messageOf(parse(envelope(dmEvent({ text: "" })))).text).toBe("");
  });

  test("the key is channel:ts even without event_id", () => {
    const body = envelope(dmEvent());
    delete body.event_id;
    expect(parse(body)).toMatchObject({ kind: "message", idempotencyKey: "D0442US94JD:1700000000.000100" });
    expect("eventId" in parse(body)).toBe(false);
  });
});

describe("channel messages", () => {
  test("a top-level mention is handled, stripped, and answered in its own thread, in no direct chat", () => {
    const message = messageOf(parse(envelope(messageEvent({ text: `<@${BOT}> summarise this` }))));
    expect(message.text).toBe("summarise this");
    expect(message.chatId).toBe("C0CHANNEL1");
    expect(message.threadId).toBe("1700000000.000100");
    expect(message.direct).toBe(false);
  });

  test("the legacy <@ID|name> mention form and a trailing colon are stripped too", () => {
    expect(messageOf(parse(envelope(messageEvent({ text: `<@${BOT}|fermix>: hi` })))).text).toBe("hi");
  });

  test("a mention in the middle counts, and is left where it is", () => {
    expect(messageOf(parse(envelope(messageEvent({ text: `ask <@${BOT}> please` })))).text).toBe(`ask <@${BOT}> please`);
  });

  test("an unaddressed channel message is ignored", () => {
    expect(why(parse(envelope(messageEvent({ text: "lunch?" }))))).toBe("not_addressed");
    expect(why(parse(envelope(messageEvent({ text: "<@U0SOMEONE> lunch?" }))))).toBe("not_addressed");
    expect(why(parse(envelope(messageEvent({ channel_type: "mpim" }))))).toBe("not_addressed");
  });

  test("without a known bot id, only app_mention and threads are addressed", () => {
    expect(why(parseAnonymous(envelope(messageEvent({ text: `<@${BOT}> hi` }))))).toBe("not_addressed");
  });

  test("a thread reply is handled in that thread", () => {
    const message = messageOf(parse(envelope(messageEvent({ thread_ts: "1699999999.000001", ts: "1700000001.000200" }))));
    expect(message.threadId).toBe("1699999999.000001");
    expect(message.messageId).toBe("1700000001.000200");
  });

  test("botInThread narrows thread replies to threads the bot is in", () => {
    const event = envelope(messageEvent({ thread_ts: "1699999999.000001" }));
    const seen: string[] = [];
    const botInThread = (channel: string, ts: string) => {
      seen.push(`${channel}/${ts}`);
      return ts === "1699999999.000001";
    };
    expect(parseSlackEvent(event, { botUserId: BOT, botInThread }).kind).toBe("message");
    expect(seen).toEqual(["C0CHANNEL1/1699999999.000001"]);
    expect(why(parseSlackEvent(event, { botUserId: BOT, botInThread: () => false }))).toBe("not_addressed");
    // A mention needs no thread membership.
    const mention = envelope(messageEvent({ thread_ts: "1", text: `<@${BOT}> hi` }));
    expect(parseSlackEvent(mention, { botUserId: BOT, botInThread: () => false }).kind).toBe("message");
  });

  test("app_mention is handled and shares its key with the message event twin", () => {
    const text = `<@${BOT}> status?`;
    const viaMessage = parse(envelope(messageEvent({ text }), { event_id: "Ev0001" }));
    const mentionEvent = messageEvent({ type: "app_mention", text });
    delete mentionEvent.channel_type;
    const viaMention = parse(envelope(mentionEvent, { event_id: "Ev0002" }));
    expect(viaMention.kind).toBe("message");
    expect(viaMessage.kind).toBe("message");
    if (viaMention.kind !== "message" || viaMessage.kind !== "message") return;
    expect(viaMention.idempotencyKey).toBe(viaMessage.idempotencyKey);
    expect(viaMention.message).toEqual(viaMessage.message);
  });

  test("the bot id comes from the bot authorization when not configured", () => {
    const body = envelope(messageEvent({ text: `<@${BOT}> hi` }), {
      authorizations: [{ enterprise_id: null, team_id: "T1", user_id: BOT, is_bot: true, is_enterprise_install: false }],
    });
    expect(messageOf(parseAnonymous(body)).text).toBe("hi");
    const own = envelope(dmEvent({ user: BOT }), { authorizations: [{ user_id: BOT, is_bot: true }] });
    expect(why(parseAnonymous(own))).toBe("own_message");
  });
});

describe("what is ignored", () => {
  test("bots, edits, deletions and housekeeping subtypes", () => {
    expect(why(parse(envelope(dmEvent({ bot_id: "B01" }))))).toBe("bot");
    expect(why(parse(envelope(dmEvent({ subtype: "bot_message", bot_id: "B01" }))))).toBe("subtype:bot_message");
    expect(why(parse(envelope(dmEvent({ subtype: "message_changed", message: { text: "edited", user: USER, ts: "1" } }))))).toBe("subtype:message_changed");
    expect(why(parse(envelope(dmEvent({ subtype: "message_deleted", deleted_ts: "1", hidden: true }))))).toBe("subtype:message_deleted");
    expect(why(parse(envelope(messageEvent({ subtype: "channel_join", text: `<@${BOT}> has joined` }))))).toBe("subtype:channel_join");
  });

  test("the bot's own messages", () => {
    expect(why(parse(envelope(dmEvent({ user: BOT }))))).toBe("own_message");
  });

  test("a message without a user", () => {
    const event = dmEvent();
    delete event.user;
    expect(why(parse(envelope(event)))).toBe("no_user");
  });

  test("non-message events, and message events missing channel or ts", () => {
    expect(why(parse(envelope({ type: "reaction_added", user: USER, reaction: "eyes" })))).toBe("event:reaction_added");
    expect(why(parse(envelope({ type: "message", user: USER, text: "hi" })))).toBe("malformed_event");
    expect(why(parse(envelope(dmEvent({ ts: 1700000000.0001 }))))).toBe("malformed_event");
  });

  test("user subtypes that are kept: file_share, thread_broadcast, me_message", () => {
    expect(parse(envelope(dmEvent({ subtype: "thread_broadcast", thread_ts: "1.0" }))).kind).toBe("message");
    expect(parse(envelope(dmEvent({ subtype: "me_message", text: "waves" }))).kind).toBe("message");
  });
});

describe("text and files", () => {
  test("Slack's three HTML escapes are undone, in the right order", () => {
    expect(messageOf(parse(envelope(dmEvent({ text: "a &lt;b&gt; &amp; c &amp;lt;" })))).text).toBe("a <b> & c &lt;");
  });

  test("the golden file_share example becomes a document with its url, size and name", () => {
    const result = parse(envelope(fileShareEvent(), { event_id: "Ev04EEHX2PSS" }));
    expect(result).toMatchObject({ kind: "message", idempotencyKey: "D0442US94JD:1670631527.874149", eventId: "Ev04EEHX2PSS" });
    expect(messageOf(result).media).toEqual([
      {
        kind: "document",
        mime: "text/plain",
        declaredSize: 12,
        filename: "namenamename.txt",
        ref: "https://files.slack.com/files-pri/T043DB835ML-F04EEHX1EES/namenamename.txt",
      },
    ]);
  });

  test("kinds follow the mimetype; the download URL wins; files without a URL are skipped", () => {
    const files = [
      { name: "a.png", mimetype: "image/png", size: 10, url_private: "https://f/a", url_private_download: "https://f/a?dl" },
      { name: "b.m4a", mimetype: "audio/mp4", url_private: "https://f/b" },
      { name: "c.mp4", mimetype: "VIDEO/MP4", url_private: "https://f/c" },
      { name: "d.pdf", mimetype: "application/pdf", url_private: "https://f/d" },
      { name: "e", url_private: "https://f/e" },
      { id: "F1", mode: "tombstone" },
      { name: "g.gdoc", mode: "external", url_private: "" },
      "not a file",
      { name: 5, url_private: "https://f/h" },
    ];
    const media = messageOf(parse(envelope(dmEvent({ subtype: "file_share", files })))).media;
    expect(media.map((m) => [m.kind, m.ref])).toEqual([
      ["image", "https://f/a?dl"],
      ["audio", "https://f/b"],
      ["video", "https://f/c"],
      ["document", "https://f/d"],
      ["document", "https://f/e"],
    ]);
    expect(media[0]).toMatchObject({ declaredSize: 10, filename: "a.png", mime: "image/png" });
    expect(media[4]).toEqual({ kind: "document", ref: "https://f/e", filename: "e" });
  });

  test("receivedAt defaults to now", () => {
    const before = Date.now();
    const result = parseSlackEvent(envelope(dmEvent()));
    expect(messageOf(result).receivedAt).toBeGreaterThanOrEqual(before);
  });
});
