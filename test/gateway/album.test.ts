import { describe, expect, test } from "bun:test";
import { type AlbumPart, createAlbumBuffer, isAlbumImage, mergeAlbum, senderKey } from "../../src/gateway/album.ts";
import type { InboundMessage } from "../../src/message/index.ts";
import { FakeClock, settle } from "../helpers/clock.ts";
import { until } from "../helpers/wait.ts";

const DEBOUNCE = 3000;
let counter = 0;

function image(sender: string, caption = "", chatId = sender): InboundMessage {
  counter += 1;
  return {
    channel: "whatsapp",
    chatId,
    senderId: sender,
    messageId: `wamid.${counter}`,
    text: caption,
    media: [{ kind: "image", mime: "image/jpeg", ref: `media-${counter}` }],
    receivedAt: counter,
  };
}
const text = (sender: string, body: string): InboundMessage => ({ ...image(sender), text: body, media: [] });

interface Dispatched {
  merged: InboundMessage;
  keys: string[];
}

/** A buffer on a fake clock that records dispatches and forgotten keys. */
function setup(dispatchImpl?: (merged: InboundMessage, parts: AlbumPart[]) => Promise<void>) {
  const clock = new FakeClock();
  const dispatched: Dispatched[] = [];
  const forgotten: string[][] = [];
  const buffer = createAlbumBuffer({
    debounceMs: DEBOUNCE,
    clock,
    dispatch: async (merged, parts) => {
      dispatched.push({ merged, keys: parts.map((p) => p.key) });
      await dispatchImpl?.(merged, parts);
    },
    onDispatchError: (parts) => forgotten.push(parts.map((p) => p.key)),
  });
  /** Offer a message under its own messageId as the idempotency key. */
  const offer = (message: InboundMessage, groupKey?: string | null) => buffer.offer(message, message.messageId, groupKey);
  return { clock, buffer, dispatched, forgotten, offer };
}

describe("merging", () => {
  test("images from one sender within the debounce become one turn", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    const parts = [image("alice", "first"), image("alice"), image("alice", "third")];
    for (const part of parts) {
      await offer(part);
      await clock.advance(1000);
    }
    expect(dispatched).toEqual([]);
    expect(buffer.pending()).toBe(3);
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(dispatched).toHaveLength(1);
    const { merged, keys } = dispatched[0]!;
    expect(keys).toEqual(parts.map((p) => p.messageId));
    expect(merged.messageId).toBe(parts[0]!.messageId);
    expect(merged.receivedAt).toBe(parts[0]!.receivedAt);
    // Captions in arrival order; the captionless image adds no blank line.
    expect(merged.text).toBe("first\nthird");
    expect(merged.media.map((m) => m.ref)).toEqual(parts.map((p) => p.media[0]!.ref));
    expect(buffer.pending()).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  test("each part extends the wait: the album goes debounceMs after its last part", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    await offer(image("alice"));
    await clock.advance(2000);
    await offer(image("alice"));
    await clock.advance(2999); // 4999 ms after the first part, 2999 after the second
    await buffer.idle();
    expect(dispatched).toEqual([]);
    await clock.advance(1);
    await buffer.idle();
    expect(dispatched).toHaveLength(1);
    expect(dispatched[0]!.keys).toHaveLength(2);
  });

  test("a part after the window starts a new album", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    await offer(image("alice", "a"));
    await clock.advance(DEBOUNCE);
    await offer(image("alice", "b"));
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(dispatched.map((d) => d.merged.text)).toEqual(["a", "b"]);
  });

  test("a lone image goes through unchanged", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    const only = image("alice", "just one");
    await offer(only);
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(dispatched[0]!.merged).toBe(only);
  });
});

describe("ordering", () => {
  test("a text from the sender flushes the pending album first, then goes through", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    await offer(image("alice", "one"));
    await offer(image("alice", "two"));
    const follow = text("alice", "what do you think?");
    await offer(follow);
    expect(dispatched.map((d) => d.merged.text)).toEqual(["one\ntwo", "what do you think?"]);
    expect(dispatched[1]!.keys).toEqual([follow.messageId]);
    expect(clock.pending()).toBe(0);
    await clock.advance(DEBOUNCE * 2);
    await buffer.idle();
    expect(dispatched).toHaveLength(2);
  });

  test("offering never waits for an earlier message's turn: a text after a slow album is handed on at once, in order", async () => {
    // The gateway's dispatch queues the turn at once and settles when the turn is over; this one's
    // turns never end until released, like a model still streaming a long answer.
    const releases: Array<() => void> = [];
    const events: string[] = [];
    const { clock, buffer, offer } = setup(async (merged) => {
      events.push(`queued ${merged.text}`);
      await new Promise<void>((resolve) => releases.push(resolve));
      events.push(`answered ${merged.text}`);
    });
    const album = offer(image("alice", "album"));
    await clock.advance(DEBOUNCE);
    expect(events).toEqual(["queued album"]);
    // The album's turn is still running: the next messages are handed on anyway, synchronously,
    // in arrival order, without awaiting anything.
    const follow = offer(text("alice", "text"));
    const stop = offer(text("alice", "/stop"));
    expect(events).toEqual(["queued album", "queued text", "queued /stop"]);
    // Each offer's `done` is its own turn's end; none of them is settled yet.
    let settled = 0;
    for (const ticket of [album, follow, stop]) void ticket.done.then(() => settled++);
    // Every promise chain queued so far has run: a `done` not tied to its turn would have settled.
    await settle();
    expect(settled).toBe(0);
    for (const release of releases) release();
    await buffer.idle();
    expect(settled).toBe(3);
    expect(events.slice(3).sort()).toEqual(["answered /stop", "answered album", "answered text"]);
  });

  test("a text after an album that is still in its debounce goes after the album", async () => {
    const events: string[] = [];
    const { offer } = setup(async (merged) => {
      events.push(merged.text);
    });
    offer(image("alice", "one"));
    offer(image("alice", "two"));
    offer(text("alice", "then this"));
    expect(events).toEqual(["one\ntwo", "then this"]);
  });

  test("other non-image messages (voice, documents) flush too", async () => {
    const { dispatched, offer } = setup();
    await offer(image("alice", "pic"));
    const voice: InboundMessage = { ...image("alice"), media: [{ kind: "voice", ref: "v1" }] };
    await offer(voice);
    expect(dispatched.map((d) => d.merged.media[0]?.kind)).toEqual(["image", "voice"]);
  });

  test("different senders are independent", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    await offer(image("alice", "a1"));
    await offer(image("bob", "b1"));
    await offer(text("bob", "bob's text"));
    // Bob's text flushed Bob's image only; Alice's album is still open.
    expect(dispatched.map((d) => d.merged.text)).toEqual(["b1", "bob's text"]);
    expect(buffer.pending()).toBe(1);
    await offer(image("alice", "a2"));
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(dispatched.map((d) => d.merged.text)).toEqual(["b1", "bob's text", "a1\na2"]);
  });

  test("the same sender in two chats holds two albums", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    await offer(image("alice", "here", "chat-1"));
    await offer(image("alice", "there", "chat-2"));
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(dispatched.map((d) => d.merged.text).sort()).toEqual(["here", "there"]);
  });
});

describe("failures", () => {
  test("a failed album dispatch reports every buffered part's key, and the sender keeps working", async () => {
    let fail = true;
    const { clock, buffer, dispatched, forgotten, offer } = setup(async () => {
      if (fail) throw new Error("gateway down");
    });
    const parts = [image("alice"), image("alice"), image("alice")];
    for (const part of parts) await offer(part);
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(forgotten).toEqual([parts.map((p) => p.messageId)]);
    fail = false;
    await offer(text("alice", "again"));
    expect(dispatched.at(-1)!.merged.text).toBe("again");
    expect(forgotten).toHaveLength(1);
  });

  test("a failed pass-through dispatch reports its one key; offer never rejects", async () => {
    const { forgotten, offer } = setup(async () => {
      throw new Error("nope");
    });
    const message = text("alice", "hi");
    await expect(offer(message).done).resolves.toBeUndefined();
    expect(forgotten).toEqual([[message.messageId]]);
  });

  test("an onDispatchError that throws does not wedge the sender's chain", async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const buffer = createAlbumBuffer({
      debounceMs: DEBOUNCE,
      clock,
      dispatch: async (merged) => {
        seen.push(merged.text);
        if (merged.text === "bad") throw new Error("dispatch");
      },
      onDispatchError: () => {
        throw new Error("handler");
      },
    });
    await buffer.offer(text("alice", "bad"), "k1");
    await buffer.offer(text("alice", "good"), "k2");
    expect(seen).toEqual(["bad", "good"]);
  });
});

describe("shutdown, groups and limits", () => {
  test("flushAll dispatches every pending album and waits for it", async () => {
    let finished = 0;
    const { clock, buffer, dispatched, offer } = setup(async () => {
      await settle();
      finished++;
    });
    await offer(image("alice", "a"));
    await offer(image("bob", "b"));
    await buffer.flushAll();
    expect(dispatched.map((d) => d.merged.text).sort()).toEqual(["a", "b"]);
    expect(finished).toBe(2);
    expect(buffer.pending()).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  test("explicit group keys: a new group from the sender flushes the old one; null never buffers", async () => {
    const { clock, buffer, dispatched, offer } = setup();
    await offer(image("alice", "g1-a"), "group-1");
    await offer(image("alice", "g1-b"), "group-1");
    await offer(image("alice", "g2-a"), "group-2");
    expect(dispatched.map((d) => d.merged.text)).toEqual(["g1-a\ng1-b"]);
    await offer(image("alice", "single"), null);
    expect(dispatched.map((d) => d.merged.text)).toEqual(["g1-a\ng1-b", "g2-a", "single"]);
    await clock.advance(DEBOUNCE);
    await buffer.idle();
    expect(dispatched).toHaveLength(3);
  });

  test("an album that reaches maxParts goes at once", async () => {
    const clock = new FakeClock();
    const sizes: number[] = [];
    const buffer = createAlbumBuffer({
      debounceMs: DEBOUNCE,
      maxParts: 3,
      clock,
      dispatch: async (merged) => void sizes.push(merged.media.length),
      onDispatchError: () => {},
    });
    for (let i = 0; i < 4; i++) await buffer.offer(image("alice"), `k${i}`);
    expect(sizes).toEqual([3]);
    expect(buffer.pending()).toBe(1);
  });

  test("with the default timers the album is dispatched after the real debounce", async () => {
    const merged: InboundMessage[] = [];
    const buffer = createAlbumBuffer({
      debounceMs: 20,
      dispatch: async (message) => void merged.push(message),
      onDispatchError: () => {},
    });
    await buffer.offer(image("alice", "x"), "k1");
    await buffer.offer(image("alice", "y"), "k2");
    expect(merged).toEqual([]);
    await until("the album after its debounce", () => merged.length > 0);
    await buffer.idle();
    expect(merged.map((m) => m.text)).toEqual(["x\ny"]);
  });
});

describe("helpers", () => {
  test("isAlbumImage: media present and all images", () => {
    expect(isAlbumImage(image("a"))).toBe(true);
    expect(isAlbumImage(text("a", "hi"))).toBe(false);
    expect(
      isAlbumImage({
        ...image("a"),
        media: [
          { kind: "image", ref: "1" },
          { kind: "document", ref: "2" },
        ],
      }),
    ).toBe(false);
  });

  test("senderKey names channel, chat and sender", () => {
    expect(senderKey({ channel: "whatsapp", chatId: "1", senderId: "1" })).toBe("whatsapp:1:1");
  });

  test("mergeAlbum refuses an empty list", () => {
    expect(() => mergeAlbum([])).toThrow();
  });
});
