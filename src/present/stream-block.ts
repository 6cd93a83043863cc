/**
 * Block mode: each finished model output item is its own message (so
 * commentary before a tool call lands on its own); text that overflows is
 * cut on the ladder into blocks of 800–1,200 rendered characters, and a
 * second of silence flushes what is complete. Reasoning arrives as silent
 * "💭" messages that are deleted when the answer lands — or not at all on a
 * channel that cannot delete. Messages are never edited.
 */

import type { SentMessage } from "../message/index.ts";
import type { ProviderEvent } from "../message/stream.ts";
import { normalizeSource } from "./markdown.ts";
import { attachmentsOf, measurePrepared, type Prepared, prepare, type RenderedReply, rendered, renderPrepared, renderReply } from "./render.ts";
import { nextPart, type SplitOptions } from "./split.ts";
import { CUT_OFF, StreamBase, type Streamer, type StreamerOptions } from "./stream-base.ts";
import { SENTENCE } from "./units.ts";

/** Block size, in rendered characters: cut on the ladder between these. */
export const BLOCK_MIN = 800;
export const BLOCK_MAX = 1200;
/** Silence after which complete text is flushed. */
export const IDLE_FLUSH_MS = 1000;

interface Item {
  id: string;
  text: string;
  /** Offset in `text` up to which it has been sent. */
  sent: number;
  done: boolean;
  /** Unsent length at which to look for an overflow cut again. */
  retryAt: number;
}

/** Text that ends where a reader would pause: a sentence end, a colon, or a line break. */
const SETTLED_END = /(?:[.!?。！？…:]["'”’)\]]*[ \t]*|\n\s*)$/;

/** The block-mode streamer. */
export class BlockStream extends StreamBase implements Streamer {
  private readonly items: Item[] = [];
  private current: Item | undefined;
  private reasoning: { id: string; text: string } | undefined;
  private readonly thoughts: { message: SentMessage; chars: number }[] = [];
  private timer: unknown;
  private readonly showThoughts: boolean;

  constructor(options: StreamerOptions) {
    super(options);
    this.showThoughts = options.port.capabilities.delete;
  }

  push(event: ProviderEvent): Promise<void> {
    if (this.done) return Promise.resolve();
    switch (event.type) {
      case "text_delta": {
        const work = [this.endReasoning()];
        const item = this.item(event.itemId, work);
        item.text += normalizeSource(event.delta);
        this.armIdle();
        work.push(this.queue(() => this.overflow(item)));
        return Promise.all(work).then(() => undefined);
      }
      case "message_done": {
        const work = [this.endReasoning()];
        const item = this.item(event.itemId, work);
        const text = normalizeSource(event.text);
        // The finished text wins, unless it contradicts what was already sent.
        if (text.startsWith(item.text.slice(0, item.sent))) item.text = text;
        work.push(this.endItem(item));
        return Promise.all(work).then(() => undefined);
      }
      case "tool_call": {
        // Commentary before a tool call is a message of its own.
        const work = [this.endReasoning()];
        if (this.current && !this.current.done) work.push(this.endItem(this.current));
        return Promise.all(work).then(() => undefined);
      }
      case "reasoning_delta": {
        if (!this.showThoughts) return Promise.resolve();
        const work: Promise<void>[] = [];
        if (this.reasoning && this.reasoning.id !== event.itemId) work.push(this.endReasoning());
        this.reasoning ??= { id: event.itemId, text: "" };
        this.reasoning.text += event.delta;
        this.armIdle();
        return Promise.all(work).then(() => undefined);
      }
      case "completed":
        return this.current && !this.current.done ? this.endItem(this.current) : Promise.resolve();
      case "reasoning_done":
        // What a reader sees of reasoning came as its deltas; the finished block is the model's to keep.
        return Promise.resolve();
    }
  }

  finish(finalMarkdown: string): Promise<void> {
    if (this.done) return this.idle();
    this.done = true;
    this.disarmIdle();
    this.reasoning = undefined;
    return this.serial(async () => {
      const final = normalizeSource(finalMarkdown);
      if (this.capped) {
        await this.dropThoughts();
        return this.deliverWholeAsFile(final);
      }
      const current = this.current && !this.current.done ? this.current : undefined;
      if (current) {
        // An item the provider never closed: the final text completes it when it extends it.
        if (final.startsWith(current.text.trimEnd())) current.text = final;
        current.done = true;
        if (!this.broken) await this.guard(() => this.sendRest(current));
      }
      if (!this.broken) {
        const rest = this.undelivered(final);
        if (rest.trim() !== "") await this.guard(() => this.sendBlocks(renderReply(rest, this.platform, blockLadder())));
      }
      if (this.capped) {
        await this.dropThoughts();
        return this.deliverWholeAsFile(final);
      }
      if (this.broken) {
        await this.deliverRest(this.unsent(final), this.takeAttachments());
        await this.dropThoughts();
        return;
      }
      await this.dropThoughts();
      await this.flushAttachments();
    });
  }

  stop(): Promise<void> {
    if (this.done) return this.idle();
    this.done = true;
    this.disarmIdle();
    this.reasoning = undefined;
    return this.serial(() => this.dropThoughts());
  }

  cut(): Promise<void> {
    if (this.done) return this.idle();
    this.done = true;
    this.disarmIdle();
    this.reasoning = undefined;
    return this.serial(async () => {
      await this.dropThoughts();
      const item = this.current;
      if (this.broken || !item) return;
      // What the model wrote before the cut is sent, so the answer so far is all there, marked as cut off.
      const pending = item.text.slice(item.sent).trimEnd();
      if (pending === "" && !this.items.some((i) => i.sent > 0)) return;
      item.done = true;
      await this.guard(() => this.sendBlocks(renderReply(`${pending}${CUT_OFF}`, this.platform, blockLadder())));
    });
  }

  /** The item for an id; a new item ends the one before it. */
  private item(id: string, work: Promise<void>[]): Item {
    if (this.current?.id === id) return this.current;
    if (this.current && !this.current.done) work.push(this.endItem(this.current));
    const item = { id, text: "", sent: 0, done: false, retryAt: 0 };
    this.items.push(item);
    this.current = item;
    return item;
  }

  /** Streaming work: a failure marks the stream broken, and finish delivers what was not sent, whole. */
  private queue(work: () => Promise<void>): Promise<void> {
    return this.background(async () => {
      if (!this.broken && !this.capped) await work();
    });
  }

  /** Run sends of the final phase; a failure marks the stream broken instead of failing the turn. */
  private async guard(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.markBroken(error);
    }
  }

  private endItem(item: Item): Promise<void> {
    item.done = true;
    return this.queue(() => this.sendRest(item));
  }

  /** Everything of an item not yet sent, as blocks. */
  private async sendRest(item: Item): Promise<void> {
    const pending = item.text.slice(item.sent);
    if (pending.trim() === "") {
      item.sent = item.text.length;
      return;
    }
    await this.sendBlocks(renderReply(pending, this.platform, blockLadder()), { item, from: item.sent, to: item.text.length });
  }

  /** While the unsent text is over a block, cut one off on the ladder (800–1,200, where the source can resume). */
  private async overflow(item: Item): Promise<void> {
    while (!this.done && !item.done && !this.capped && !this.broken) {
      const pending = item.text.slice(item.sent);
      // Rendered text is rarely much longer than its Markdown: skip the parse while far from a block.
      if (pending.length < BLOCK_MIN * 0.75) return;
      // Text with no place to cut yet (a long fence, a table) is looked at again only once it has
      // grown by a quarter, so a long block costs a few parses rather than one per delta.
      if (pending.length < item.retryAt) return;
      const prepared = prepare(pending, this.platform);
      if (measurePrepared(prepared) > BLOCK_MAX) {
        if (await this.cutOff(item, prepared, { ...blockLadder(), strict: true })) {
          item.retryAt = 0;
          continue;
        }
        // A code fence too big to share a block is a block of its own, never cut: the text before it
        // goes now, as its own block, instead of waiting for the fence to close.
        const fenceAt = fenceStart(prepared);
        if (fenceAt !== undefined && pending.slice(0, fenceAt).trim() !== "") {
          const before = pending.slice(0, fenceAt);
          const reply = renderReply(before, this.platform, blockLadder());
          await this.sendBlocks(reply, { item, from: item.sent, to: item.sent + fenceAt });
          item.retryAt = 0;
          continue;
        }
      }
      item.retryAt = pending.length + Math.max(100, pending.length >> 2);
      return;
    }
  }

  /** After a second of silence: show pending reasoning, and send the text up to where it is settled. */
  private async idleFlush(): Promise<void> {
    await this.sendReasoning();
    const item = this.current;
    if (this.done || !item || item.done) return;
    const pending = item.text.slice(item.sent);
    if (pending.trim() === "") return;
    const prepared = prepare(pending, this.platform);
    const lastLine = pending.trimEnd().split("\n").at(-1) ?? "";
    // An open fence or a table still growing row by row must not be cut at its end.
    const settled = !prepared.openFence && !lastLine.trimStart().startsWith("|") && SETTLED_END.test(pending);
    if (settled) {
      await this.sendBlocks(renderPrepared(prepared, blockLadder()), { item, from: item.sent, to: item.sent + pending.length });
      return;
    }
    await this.cutOff(item, prepared, { limit: BLOCK_MAX, minFill: 0, floor: SENTENCE, strict: true });
  }

  /** Send the first block of an item's pending text, if the ladder finds a cut the source can resume from. */
  private async cutOff(item: Item, prepared: Prepared, options: SplitOptions): Promise<boolean> {
    const step = nextPart(prepared.units, prepared.dialect, { ...options, sourceOnly: true, keepTail: true });
    if (!step || step.part.resume === undefined) return false;
    const block = rendered([step.part], attachmentsOf(prepared, step.part), this.platform, true, BLOCK_MAX);
    const to = item.sent + step.part.resume;
    block.parts[0]!.source = item.text.slice(item.sent, to);
    await this.sendBlocks(block, { item, from: item.sent, to });
    return true;
  }

  /**
   * Send blocks of the answer (it has landed, so the 💭 messages go). When
   * they cover `span.item`'s text [from, to), the item counts as sent only as
   * far as the platform took it: part by part where each part's source is
   * known, else once every part went. A failure is thrown to the caller.
   */
  private async sendBlocks(reply: RenderedReply, span?: { item: Item; from: number; to: number }): Promise<void> {
    let at = span?.from ?? 0;
    for (let i = 0; i < reply.parts.length; i++) {
      // Past max_reply_parts the rest goes only into the file sent at the end.
      if (!this.roomForPart()) return;
      await this.sendPart(reply, i);
      this.emit("block", reply.parts[i]!.text.length);
      const source = reply.parts[i]!.source;
      if (span && source !== undefined) {
        at += source.length;
        span.item.sent = Math.min(at, span.to);
      }
    }
    if (span) span.item.sent = span.to;
    // Code blocks too big for a message go after the whole reply, at finish.
    this.attachments.push(...reply.attachments);
    if (reply.parts.length > 0) await this.dropThoughts();
  }

  /** The reasoning item ended: it is sent as silent 💭 messages. */
  private endReasoning(): Promise<void> {
    if (!this.reasoning) return Promise.resolve();
    return this.queue(() => this.sendReasoning());
  }

  private async sendReasoning(): Promise<void> {
    const reasoning = this.reasoning;
    this.reasoning = undefined;
    if (this.done || !reasoning || reasoning.text.trim() === "") return;
    const reply = this.thinking(reasoning.text, BLOCK_MAX);
    for (let i = 0; i < reply.parts.length; i++) {
      const message = await this.sendPart(reply, i, true);
      this.thoughts.push({ message, chars: reply.parts[i]!.text.length });
    }
  }

  private async dropThoughts(): Promise<void> {
    for (const { message, chars } of this.thoughts.splice(0)) await this.discard(message, chars);
  }

  /** What of the final reply was not delivered by the items: nothing when it is their text, else all of it. */
  private undelivered(final: string): string {
    const norm = (s: string) => s.replace(/\s+/g, " ").trim();
    const wanted = norm(final);
    if (wanted === "") return "";
    const sent = this.items.map((i) => i.text.slice(0, i.sent)).filter((t) => t.trim() !== "");
    const joined = sent.join("\n\n");
    if (sent.some((t) => norm(t) === wanted) || norm(joined).endsWith(wanted)) return "";
    const head = joined.trimEnd();
    if (head && final.startsWith(head)) return final.slice(head.length);
    return final;
  }

  /**
   * What of the final reply the platform has not taken, for a stream that
   * broke: each item's unsent text when the final reply is the items' text,
   * else whatever `undelivered` finds.
   */
  private unsent(final: string): string {
    const norm = (text: string) => text.replace(/\s+/g, " ").trim();
    if (norm(this.items.map((i) => i.text).join("\n\n")) !== norm(final)) return this.undelivered(final);
    return this.items
      .map((i) => i.text.slice(i.sent))
      .filter((t) => t.trim() !== "")
      .join("\n\n");
  }

  private armIdle(): void {
    this.disarmIdle();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.queue(() => this.idleFlush());
    }, IDLE_FLUSH_MS);
  }

  private disarmIdle(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The source offset where the first code fence of the text starts, when text comes before it (a fence set aside as a file counts too). */
function fenceStart(prepared: Prepared): number | undefined {
  const index = prepared.units.findIndex((unit) => unit.role === "code" || prepared.placeholders.has(unit));
  if (index <= 0) return undefined;
  const src = prepared.units[index]!.src;
  return src !== undefined && src > 0 ? src : undefined;
}

/** Ladder bars for blocks: a cut lands between 800 and 1,200 rendered characters. */
function blockLadder(): SplitOptions {
  return { limit: BLOCK_MAX, minFill: BLOCK_MIN, headingMinFill: BLOCK_MIN };
}
