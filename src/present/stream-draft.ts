/**
 * Draft mode: the reply streams into a live message edited in place. It
 * opens after 30 characters and is edited about once a second; when it
 * passes about 1,400 rendered characters it is sealed at a heading, else a
 * paragraph, and the rest continues in a fresh message. Sealed cards are
 * final. At the end a short remainder merges into the live card, and a final
 * reply that does not extend what was sealed is delivered in full. Reasoning
 * rolls into one "💭" message, edited in place and deleted when the answer
 * lands; /stop deletes only the live card.
 */

import type { SentMessage } from "../message/index.ts";
import type { ProviderEvent } from "../message/stream.ts";
import { normalizeSource } from "./markdown.ts";
import { attachmentsOf, measurePrepared, type Prepared, prepare, type RenderedReply, rendered, renderPrepared, renderReply } from "./render.ts";
import { nextPart, type SplitPart } from "./split.ts";
import { CUT_OFF, StreamBase, type Streamer, type StreamerOptions } from "./stream-base.ts";
import { HARD, PARAGRAPH } from "./units.ts";

/** Characters before the live card opens. */
export const OPEN_AT = 30;
/** Milliseconds between edits of a live message. */
export const EDIT_EVERY_MS = 1000;
/** Rendered characters past which the live card is sealed. */
export const SEAL_AT = 1400;
/** A card is sealed anywhere on the ladder rather than grow past this. */
export const CARD_MAX = 2000;
/** The most of the reasoning a status message shows (its latest part). */
const STATUS_TAIL = 1000;

interface Live {
  message: SentMessage;
  shown: string;
}

/** The draft-mode streamer. */
export class DraftStream extends StreamBase implements Streamer {
  /** The answer so far: output items joined by a blank line. */
  private text = "";
  private itemId: string | undefined;
  private itemStart = 0;
  /** Offset in `text` up to which everything is in sealed cards. */
  private sealed = 0;
  private card: Live | undefined;
  /** An update is queued and has not started: it will read the latest text. */
  private queued = false;
  private lastEdit = Number.NEGATIVE_INFINITY;
  private timer: unknown;
  private reasoning = "";
  private status: Live | undefined;
  private statusQueued = false;
  private lastStatusEdit = Number.NEGATIVE_INFINITY;
  private statusTimer: unknown;
  private readonly cardLimit: number;

  constructor(options: StreamerOptions) {
    super(options);
    this.cardLimit = Math.min(options.platform.limit, CARD_MAX);
  }

  push(event: ProviderEvent): Promise<void> {
    if (this.done) return Promise.resolve();
    if (event.type === "text_delta") {
      this.append(event.itemId, event.delta);
      return this.schedule();
    }
    if (event.type === "message_done") {
      this.complete(event.itemId, event.text);
      return this.schedule();
    }
    if (event.type === "reasoning_delta") {
      this.reasoning += event.delta;
      return this.scheduleStatus();
    }
    return Promise.resolve();
  }

  finish(finalMarkdown: string): Promise<void> {
    if (this.done) return this.idle();
    this.done = true;
    this.cancelTimers();
    return this.serial(async () => {
      await this.dropStatus();
      if (this.capped) {
        const card = this.card;
        this.card = undefined;
        if (card) await this.discard(card.message, card.shown.length);
        return this.deliverWholeAsFile(normalizeSource(finalMarkdown));
      }
      const rest = this.remainder(normalizeSource(finalMarkdown));
      if (this.broken) return this.abandon(rest);
      const reply = renderReply(rest, this.platform, { limit: this.cardLimit });
      const card = this.card;
      this.card = undefined;
      // What is left would take the reply past max_reply_parts (it landed faster than the cards were cut):
      // its first part goes on screen, and the whole answer follows as a file.
      if (this.overCap(reply.parts.length - (card ? 1 : 0))) return this.firstPartThenFile(card, reply, finalMarkdown);
      let next = 0;
      try {
        if (card && reply.parts.length > 0) {
          await this.editPart(card.message, reply, 0);
          this.emit("seal", reply.parts[0]!.text.length);
          next = 1;
        } else if (card) {
          await this.discard(card.message, card.shown.length);
        }
        for (; next < reply.parts.length; next++) {
          await this.sendPart(reply, next);
          this.emit("seal", reply.parts[next]!.text.length);
        }
      } catch (error) {
        this.markBroken(error);
        // The card that could not be sealed, or the part that could not be sent, and all after it go whole.
        if (card && next === 0) await this.discard(card.message, card.shown.length);
        const sources = reply.parts.slice(next).map((part) => part.source);
        const left = sources.every((source) => source !== undefined) ? sources.join("") : rest;
        this.attachments.push(...reply.attachments);
        return this.abandon(left);
      }
      await this.flushAttachments(reply.attachments);
    });
  }

  stop(): Promise<void> {
    if (this.done) return this.idle();
    this.done = true;
    this.cancelTimers();
    return this.serial(async () => {
      const card = this.card;
      this.card = undefined;
      if (card) await this.discard(card.message, card.shown.length);
      await this.dropStatus();
    });
  }

  cut(): Promise<void> {
    if (this.done) return this.idle();
    this.done = true;
    this.cancelTimers();
    return this.serial(async () => {
      await this.dropStatus();
      const card = this.card;
      this.card = undefined;
      // Only what is on screen is sealed: text the live card never showed was not read by anyone.
      if (!card || this.broken) return;
      const reply = renderReply(`${this.live().trimEnd()}${CUT_OFF}`, this.platform, { limit: this.cardLimit });
      try {
        await this.editPart(card.message, reply, 0);
        this.emit("seal", reply.parts[0]!.text.length);
        for (let i = 1; i < reply.parts.length; i++) await this.sendPart(reply, i, true);
      } catch (error) {
        // The card keeps what it showed; the fault message that follows says the rest.
        this.markBroken(error);
      }
    });
  }

  /** Over the cap at the end: the live card (or a new message, if there is room) shows the first part left, then the whole answer as a file. */
  private async firstPartThenFile(card: Live | undefined, reply: RenderedReply, finalMarkdown: string): Promise<void> {
    try {
      if (card || this.roomForPart()) {
        if (card) await this.editPart(card.message, reply, 0);
        else await this.sendPart(reply, 0);
        this.emit("seal", reply.parts[0]!.text.length);
      }
    } catch (error) {
      this.markBroken(error);
      if (card) await this.discard(card.message, card.shown.length);
    }
    this.capped = true;
    return this.deliverWholeAsFile(normalizeSource(finalMarkdown));
  }

  /** Streaming broke: the live card goes (it may be stale) and `rest` goes whole through the fallback. */
  private async abandon(rest: string): Promise<void> {
    const card = this.card;
    this.card = undefined;
    if (card) await this.discard(card.message, card.shown.length);
    await this.deliverRest(rest, this.takeAttachments());
  }

  private append(itemId: string, delta: string): void {
    if (itemId !== this.itemId) {
      if (this.text.trim() !== "") this.text = `${this.text.trimEnd()}\n\n`;
      this.itemId = itemId;
      this.itemStart = this.text.length;
    }
    this.text += normalizeSource(delta);
  }

  /** A finished item's full text replaces what its deltas built, unless part of it is already sealed. */
  private complete(itemId: string, full: string): void {
    if (itemId !== this.itemId) {
      this.append(itemId, full);
      return;
    }
    const text = normalizeSource(full);
    const sealedPart = this.text.slice(this.itemStart, Math.max(this.itemStart, this.sealed));
    if (text.startsWith(sealedPart)) this.text = this.text.slice(0, this.itemStart) + text;
  }

  /** The unsealed text, which the live card shows. */
  private live(): string {
    return this.text.slice(this.sealed);
  }

  private schedule(): Promise<void> {
    if (this.done || this.broken || this.capped || this.queued) return Promise.resolve();
    if (!this.card && this.live().trim().length < OPEN_AT) return Promise.resolve();
    const wait = this.lastEdit + EDIT_EVERY_MS - this.clock.now();
    if (wait > 0) {
      this.timer ??= this.clock.setTimeout(() => {
        this.timer = undefined;
        void this.schedule();
      }, wait);
      return Promise.resolve();
    }
    this.queued = true;
    return this.background(() => this.update());
  }

  /** Seal what has grown too long, then open or edit the live card with the rest. */
  private async update(): Promise<void> {
    this.queued = false;
    if (this.done || this.broken) return;
    this.lastEdit = this.clock.now();
    const prepared = await this.sealWhileLong();
    const live = this.live();
    if (!this.card) {
      if (live.trim().length < OPEN_AT) return;
      const reply = renderPrepared(prepared);
      const message = await this.sendPart(reply, 0);
      this.card = { message, shown: reply.parts[0]!.text };
      this.emit(this.sealed > 0 ? "rotate" : "open", reply.parts[0]!.text.length);
      await this.answerLanded();
      return;
    }
    const reply = renderPrepared(prepared);
    const part = reply.parts[0];
    if (!part || part.text === this.card.shown) return;
    await this.editPart(this.card.message, reply, 0);
    this.card.shown = part.text;
    this.emit("edit", part.text.length);
    await this.answerLanded();
  }

  /** Seal cards while the live text is too long; returns the live text that is left, prepared. */
  private async sealWhileLong(): Promise<Prepared> {
    for (;;) {
      const prepared = prepare(this.live(), this.platform);
      const measure = measurePrepared(prepared);
      if (measure <= SEAL_AT) return prepared;
      const cut = this.sealCut(prepared, measure);
      if (!cut || cut.resume === undefined) return prepared;
      // Past max_reply_parts cards, nothing more is streamed: the whole answer goes as a file at the end.
      if (!this.roomForPart()) return prepared;
      const reply = rendered([cut], [], this.platform, true, this.cardLimit);
      if (this.card) await this.editPart(this.card.message, reply, 0);
      else {
        await this.sendPart(reply, 0);
        this.emit(this.sealed > 0 ? "rotate" : "open", cut.text.length);
      }
      this.emit("seal", cut.text.length);
      this.attachments.push(...attachmentsOf(prepared, cut));
      this.sealed += cut.resume;
      this.card = undefined;
      await this.answerLanded();
    }
  }

  /** Where to seal: a heading, else a paragraph, near SEAL_AT; anywhere on the ladder past the card maximum. */
  private sealCut(prepared: Prepared, measure: number): SplitPart | undefined {
    const { units, dialect } = prepared;
    const base = { sourceOnly: true, strict: true, floor: PARAGRAPH } as const;
    let step = nextPart(units, dialect, { ...base, limit: SEAL_AT, minFill: SEAL_AT / 2, headingMinFill: SEAL_AT / 4 });
    if (!step && measure > this.cardLimit) {
      step =
        nextPart(units, dialect, { ...base, limit: this.cardLimit, minFill: 0 }) ??
        nextPart(units, dialect, { ...base, floor: HARD, limit: this.cardLimit, minFill: 0 });
    }
    return step?.part;
  }

  /** The part of the final reply still to deliver: all of it unless it extends what was sealed. */
  private remainder(final: string): string {
    const sealedText = this.text.slice(0, this.sealed).trimEnd();
    if (!sealedText || !final.startsWith(sealedText)) return final;
    return final.slice(sealedText.length).replace(/^(?:[ \t]*\n)+/, "");
  }

  private scheduleStatus(): Promise<void> {
    if (this.done || this.broken || this.statusQueued || !this.port.capabilities.delete) return Promise.resolve();
    const wait = this.lastStatusEdit + EDIT_EVERY_MS - this.clock.now();
    if (wait > 0) {
      this.statusTimer ??= this.clock.setTimeout(() => {
        this.statusTimer = undefined;
        void this.scheduleStatus();
      }, wait);
      return Promise.resolve();
    }
    this.statusQueued = true;
    return this.background(() => this.showStatus());
  }

  /** Show the latest reasoning in the one status message. */
  private async showStatus(): Promise<void> {
    this.statusQueued = false;
    if (this.done || this.broken || this.reasoning.trim() === "") return;
    this.lastStatusEdit = this.clock.now();
    const tail = this.reasoning.length > STATUS_TAIL ? `…${this.reasoning.slice(-STATUS_TAIL).replace(/^\S*\s/, "")}` : this.reasoning;
    const reply = this.thinking(tail, this.cardLimit);
    const part = reply.parts[0];
    if (!part) return;
    if (!this.status) {
      this.status = { message: await this.sendPart(reply, 0, true), shown: part.text };
      return;
    }
    if (part.text === this.status.shown) return;
    await this.editPart(this.status.message, reply, 0);
    this.status.shown = part.text;
  }

  /** The answer is on screen: the status message goes, and later reasoning starts a new one. */
  private async answerLanded(): Promise<void> {
    this.reasoning = "";
    await this.dropStatus();
  }

  private async dropStatus(): Promise<void> {
    const status = this.status;
    this.status = undefined;
    if (status) await this.discard(status.message, status.shown.length);
  }

  private cancelTimers(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    if (this.statusTimer !== undefined) this.clock.clearTimeout(this.statusTimer);
    this.timer = undefined;
    this.statusTimer = undefined;
  }
}
