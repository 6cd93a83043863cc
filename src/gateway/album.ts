/**
 * The album buffer: platforms that send each image of an album as its own
 * message (WhatsApp per-image webhooks, Telegram media groups) are held for a
 * short debounce and merged into one turn, so the agent sees the images
 * together. Generic over channels; the clock is injected so tests control it.
 *
 * Ordering rule: a sender's messages are handed on in arrival order — a text
 * sent after an album is dispatched after the album — by calling `dispatch`
 * in that order, synchronously. Handing on never waits for a turn: the
 * conversation queue behind `dispatch` is the one place where messages wait
 * for each other, so a /stop sent during a long answer reaches it at once.
 */
import { type Clock, systemClock } from "../kernel/clock.ts";
import type { InboundMessage } from "../message/index.ts";

/** One buffered message and the idempotency key it was accepted under. */
export interface AlbumPart {
  message: InboundMessage;
  key: string;
}

export interface AlbumBufferOptions {
  /** How long after the latest part an album waits for more (album_debounce_ms). */
  debounceMs: number;
  /**
   * Hand a merged album, or a message passing through, to the gateway. It must
   * take the message's place in line before it returns (the gateway queues a
   * turn synchronously); the promise it returns settles when that turn is
   * over, and the buffer never waits for it before handing on the next one.
   */
  dispatch: (merged: InboundMessage, parts: AlbumPart[]) => Promise<void>;
  /** A dispatch rejected: the caller forgets these parts' idempotency keys so a redelivery gets in. */
  onDispatchError: (parts: AlbumPart[], error: unknown) => void;
  /** Time and timers for the debounce (default: the system's). */
  clock?: Clock;
  /** An album this large is flushed at once instead of waiting, so one sender cannot grow the buffer without bound. */
  maxParts?: number;
}

export interface AlbumBuffer {
  /**
   * Offer one accepted message. An image joins its sender's pending album
   * (groupKey defaults to channel+chat+sender; pass Telegram's media_group_id
   * instead, or null to never buffer). Anything else flushes that sender's
   * pending album first, then is dispatched — both before `offer` returns.
   * `done` settles when this message's turn is over (so a supervisor can
   * count work in flight); it never rejects, and the buffer never waits for it.
   */
  offer(message: InboundMessage, key: string, groupKey?: string | null): { done: Promise<void> };
  /** Dispatch every pending album now and wait for every turn dispatched (shutdown). */
  flushAll(): Promise<void>;
  /** Wait for the turns dispatched so far, leaving pending albums pending. */
  idle(): Promise<void>;
  /** Parts currently held back. */
  pending(): number;
}

interface PendingAlbum {
  groupKey: string;
  parts: AlbumPart[];
  timer: unknown;
  /** Settles when the album's turn is over; what every part's offer returns. */
  done: Promise<void>;
  settle: () => void;
}

/** WhatsApp's album limit is 30 images; a little headroom over it. */
const DEFAULT_MAX_PARTS = 32;

/** The default group: one sender in one chat on one channel. */
export function senderKey(message: Pick<InboundMessage, "channel" | "chatId" | "senderId">): string {
  return `${message.channel}:${message.chatId}:${message.senderId}`;
}

/** True for a message that can be part of an album: it has media, and every attachment is an image. */
export function isAlbumImage(message: InboundMessage): boolean {
  return message.media.length > 0 && message.media.every((media) => media.kind === "image");
}

/** Merge album parts into one message: the first part's identity, captions in arrival order, all media. */
export function mergeAlbum(parts: readonly AlbumPart[]): InboundMessage {
  const first = parts[0];
  if (!first) throw new Error("mergeAlbum needs at least one part");
  if (parts.length === 1) return first.message;
  const captions = parts.map((part) => part.message.text).filter((text) => text.trim() !== "");
  return {
    ...first.message,
    text: captions.join("\n"),
    media: parts.flatMap((part) => part.message.media),
  };
}

/** Create an album buffer; see AlbumBuffer for the contract. */
export function createAlbumBuffer(options: AlbumBufferOptions): AlbumBuffer {
  const clock = options.clock ?? systemClock;
  const maxParts = options.maxParts ?? DEFAULT_MAX_PARTS;
  // Keyed by sender, not by group: a sender has at most one album open, which
  // is what lets their next non-image message flush it.
  const albums = new Map<string, PendingAlbum>();
  /** Turns dispatched and not over yet. */
  const inFlight = new Set<Promise<void>>();

  /** Hand parts on now; failures go to onDispatchError. Returns when their turn is over. */
  function dispatch(parts: AlbumPart[]): Promise<void> {
    let turn: Promise<void>;
    try {
      turn = options.dispatch(mergeAlbum(parts), parts);
    } catch (error) {
      turn = Promise.reject(error);
    }
    const done = turn.then(
      () => undefined,
      (error: unknown) => {
        try {
          options.onDispatchError(parts, error);
        } catch {
          // The caller's error handler failing must not leave this turn unsettled.
        }
      },
    );
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
    return done;
  }

  /** Hand the sender's pending album, if any, on now. */
  function flush(sender: string): void {
    const album = albums.get(sender);
    if (!album) return;
    albums.delete(sender);
    clock.clearTimeout(album.timer);
    void dispatch(album.parts).then(album.settle);
  }

  /** (Re)start the debounce; a timer that outlives its album (a clock that missed a clear) does nothing. */
  function arm(sender: string, album: PendingAlbum): void {
    album.timer = clock.setTimeout(() => {
      if (albums.get(sender) === album) flush(sender);
    }, options.debounceMs);
  }

  async function idle(): Promise<void> {
    // A turn may be followed by more (a flush timer firing meanwhile), so wait until a pass finds none.
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  }

  return {
    offer(message, key, groupKey) {
      const sender = senderKey(message);
      const group = groupKey === undefined ? sender : groupKey;
      const part: AlbumPart = { message, key };
      if (group === null || !isAlbumImage(message)) {
        flush(sender);
        return { done: dispatch([part]) };
      }
      const open = albums.get(sender);
      if (open && open.groupKey === group) {
        open.parts.push(part);
        if (open.parts.length >= maxParts) flush(sender);
        else {
          clock.clearTimeout(open.timer);
          arm(sender, open);
        }
        return { done: open.done };
      }
      // A different album from the same sender: the older one goes first.
      flush(sender);
      let settle!: () => void;
      const done = new Promise<void>((resolve) => {
        settle = resolve;
      });
      const album: PendingAlbum = { groupKey: group, parts: [part], timer: undefined, done, settle };
      albums.set(sender, album);
      arm(sender, album);
      return { done };
    },

    async flushAll() {
      for (const sender of [...albums.keys()]) flush(sender);
      await idle();
    },

    idle,

    pending() {
      let count = 0;
      for (const album of albums.values()) count += album.parts.length;
      return count;
    },
  };
}
