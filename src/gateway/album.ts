/**
 * The album buffer: platforms that send each image of an album as its own
 * message (WhatsApp per-image webhooks, Telegram media groups) are held for a
 * short debounce and merged into one turn, so the agent sees the images
 * together. Generic over channels; the clock is injected so tests control it.
 *
 * Ordering rule: everything from one sender goes through one promise chain,
 * so a text sent after an album is dispatched after the album, and two
 * dispatches for one sender never overlap.
 */
import type { InboundMessage } from "../message/index.ts";

/** One buffered message and the idempotency key it was accepted under. */
export interface AlbumPart {
  message: InboundMessage;
  key: string;
}

export interface AlbumBufferOptions {
  /** How long after the latest part an album waits for more (album_debounce_ms). */
  debounceMs: number;
  /** Hand a merged album, or a message passing through, to the gateway. */
  dispatch: (merged: InboundMessage, parts: AlbumPart[]) => Promise<void>;
  /** A dispatch rejected: the caller forgets these parts' idempotency keys so a redelivery gets in. */
  onDispatchError: (parts: AlbumPart[], error: unknown) => void;
  setTimer?: (fire: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  /** An album this large is flushed at once instead of waiting, so one sender cannot grow the buffer without bound. */
  maxParts?: number;
}

export interface AlbumBuffer {
  /**
   * Offer one accepted message. An image joins its sender's pending album
   * (groupKey defaults to channel+chat+sender; pass Telegram's media_group_id
   * instead, or null to never buffer). Anything else flushes that sender's
   * pending album first, then is dispatched. Resolves once the message is
   * buffered or dispatched; never rejects.
   */
  offer(message: InboundMessage, key: string, groupKey?: string | null): Promise<void>;
  /** Dispatch every pending album now and wait for all dispatches in flight (shutdown). */
  flushAll(): Promise<void>;
  /** Wait for the dispatches started so far, leaving pending albums pending. */
  idle(): Promise<void>;
  /** Parts currently held back. */
  pending(): number;
}

interface PendingAlbum {
  groupKey: string;
  parts: AlbumPart[];
  timer: unknown;
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
  const setTimer = options.setTimer ?? ((fire: () => void, ms: number) => setTimeout(fire, ms));
  const clearTimer = options.clearTimer ?? ((handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  const maxParts = options.maxParts ?? DEFAULT_MAX_PARTS;
  // Keyed by sender, not by group: a sender has at most one album open, which
  // is what lets their next non-image message flush it.
  const albums = new Map<string, PendingAlbum>();
  const chains = new Map<string, Promise<void>>();

  /** Append a dispatch to the sender's chain; failures go to onDispatchError, never up the chain. */
  function enqueue(sender: string, parts: AlbumPart[]): Promise<void> {
    const run = async () => {
      try {
        await options.dispatch(mergeAlbum(parts), parts);
      } catch (error) {
        try {
          options.onDispatchError(parts, error);
        } catch {
          // The caller's error handler failing must not wedge this sender's chain.
        }
      }
    };
    const next = (chains.get(sender) ?? Promise.resolve()).then(run);
    chains.set(sender, next);
    // Drop the settled tail so an idle sender costs no memory.
    void next.then(() => {
      if (chains.get(sender) === next) chains.delete(sender);
    });
    return next;
  }

  /** Move the sender's pending album, if any, onto their chain. */
  function flush(sender: string): Promise<void> | undefined {
    const album = albums.get(sender);
    if (!album) return undefined;
    albums.delete(sender);
    clearTimer(album.timer);
    return enqueue(sender, album.parts);
  }

  /** (Re)start the debounce; a timer that outlives its album (a clock that missed a clear) does nothing. */
  function arm(sender: string, album: PendingAlbum): void {
    album.timer = setTimer(() => {
      if (albums.get(sender) === album) void flush(sender);
    }, options.debounceMs);
  }

  async function idle(): Promise<void> {
    // A dispatch may be followed by more work (a flush timer firing
    // meanwhile), so wait until a pass finds no chain left.
    while (chains.size > 0) await Promise.all([...chains.values()]);
  }

  return {
    offer(message, key, groupKey) {
      const sender = senderKey(message);
      const group = groupKey === undefined ? sender : groupKey;
      const part: AlbumPart = { message, key };
      if (group === null || !isAlbumImage(message)) {
        flush(sender);
        return enqueue(sender, [part]);
      }
      const open = albums.get(sender);
      if (open && open.groupKey === group) {
        open.parts.push(part);
        if (open.parts.length >= maxParts) return flush(sender) ?? Promise.resolve();
        clearTimer(open.timer);
        arm(sender, open);
        return Promise.resolve();
      }
      // A different album from the same sender: the older one goes first.
      flush(sender);
      const album: PendingAlbum = { groupKey: group, parts: [part], timer: undefined };
      albums.set(sender, album);
      arm(sender, album);
      return Promise.resolve();
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
