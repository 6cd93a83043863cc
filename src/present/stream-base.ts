/**
 * What every streaming mode shares: one queue so port calls never overlap or
 * reorder, the single notification of a reply, telemetry, the "💭" status
 * messages, and sending rendered text with the plain-text fallback.
 */
import type { ChannelName } from "../config/schema.ts";
import { type Clock, systemClock } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry, TelemetryEvents } from "../kernel/telemetry.ts";
import type { OutboundText, ReplyPort, SentMessage } from "../message/index.ts";
import type { ProviderEvent } from "../message/stream.ts";
import { type AttachmentSender, type DeliverOptions, deliverReply, sendAttachments } from "./deliver.ts";
import { editWithFallback, sendWithFallback } from "./fallback.ts";
import type { TextProfile } from "./measure.ts";
import { type RenderedReply, renderReply, type TextAttachment } from "./render.ts";

/** What a streamer drives and reports to. */
export interface StreamerOptions {
  port: ReplyPort;
  /** Streaming happens on real channel turns only, never on a local surface (the terminal, an editor). */
  channel: ChannelName;
  /** The channel's dialect, limit and way of counting length. */
  platform: TextProfile;
  /** Carried on every channel.stream telemetry event. */
  sessionId: string;
  clock?: Clock;
  telemetry?: Telemetry;
  logger?: Logger;
  /** How code blocks too big for a message are sent; default: a temporary file through the port. */
  sendAttachment?: AttachmentSender;
  /**
   * Deliver what streaming could not: once a send of the stream fails, the
   * rest of the reply (Markdown) and the code blocks still owed go here, whole
   * — the gateway records them in its outbox, where an outage is retried.
   * Default: sent through the port once.
   */
  fallback?: (markdown: string, attachments: TextAttachment[]) => Promise<void>;
  /**
   * The most answer messages one reply streams (max_reply_parts): past it,
   * nothing more is streamed and the whole answer follows as a Markdown file,
   * saying so. Default: no cap.
   */
  maxParts?: number;
}

/** The phases of the channel.stream telemetry event. */
export type StreamPhase = TelemetryEvents["channel.stream"]["metadata"]["phase"];

/** Drives one turn's reply port from provider events. */
export interface Streamer {
  /** Feed one provider event; resolves once the port calls it caused are done. */
  push(event: ProviderEvent): Promise<void>;
  /** Deliver the final reply (Markdown) and remove status messages. */
  finish(finalMarkdown: string): Promise<void>;
  /** /stop: cancel timers, delete the live unsealed card and status messages; later calls do nothing. */
  stop(): Promise<void>;
  /**
   * The model's stream broke mid-answer: what the reader has seen stays,
   * sealed and marked as cut off (nothing they read disappears), status
   * messages go, and nothing more is streamed. Later calls do nothing.
   */
  cut(): Promise<void>;
  /** Resolves when every queued port call has finished. */
  idle(): Promise<void>;
}

/** Prefix of reasoning status messages. */
export const THINKING = "💭";

/** What ends the visible text of an answer the model's stream cut off. */
export const CUT_OFF = " …\n\n_(cut off)_";

/** The shared half of every streaming mode. */
export abstract class StreamBase {
  protected readonly port: ReplyPort;
  protected readonly channel: ChannelName;
  protected readonly platform: TextProfile;
  protected readonly clock: Clock;
  protected readonly logger: Logger | undefined;
  /** The turn is over (finished or stopped): nothing more is sent. */
  protected done = false;
  /** The reply's one notifying message has been sent. */
  protected notified = false;
  /** A send of the stream failed: nothing more is streamed, and the rest is delivered whole at the end. */
  protected broken = false;
  /** Answer messages sent so far (status and 💭 messages not counted). */
  protected answerParts = 0;
  /** The reply reached max_reply_parts: nothing more is streamed; the whole answer goes as a file at the end. */
  protected capped = false;
  /** Code blocks set aside while streaming, sent after the reply. */
  protected readonly attachments: TextAttachment[] = [];
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly options: StreamerOptions) {
    this.port = options.port;
    this.channel = options.channel;
    this.platform = options.platform;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
  }

  /** Run port work after everything queued before it; the returned promise carries its outcome. */
  protected serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Queue streaming work whose failure must not break the turn: the stream is marked broken and the rest goes whole at the end. */
  protected background(work: () => Promise<void>): Promise<void> {
    return this.serial(async () => {
      try {
        await work();
      } catch (error) {
        this.markBroken(error);
      }
    });
  }

  /** Resolves when every queued port call has finished. */
  idle(): Promise<void> {
    return this.serial(async () => {});
  }

  protected emit(phase: StreamPhase, chars: number): void {
    this.options.telemetry?.emit("channel.stream", {
      measurements: { chars },
      metadata: { channel: this.channel, phase, session_id: this.options.sessionId },
    });
  }

  protected deliverOptions(): DeliverOptions {
    const options: DeliverOptions = {};
    if (this.logger) options.logger = this.logger;
    if (this.options.sendAttachment) options.sendAttachment = this.options.sendAttachment;
    return options;
  }

  /** Send part `index` of a rendered reply; the first answer message of the turn is the one that notifies. */
  protected async sendPart(reply: RenderedReply, index: number, silent = false): Promise<SentMessage> {
    const part: OutboundText = { ...reply.parts[index]!, notify: !silent && !this.notified };
    if (!silent) {
      this.notified = true;
      this.answerParts++;
    }
    const fallback = () => reply.fallback(index).map((p, i) => ({ ...p, notify: part.notify && i === 0 }));
    const sent = await sendWithFallback(this.port, part, fallback, this.logger);
    return sent.at(-1)!;
  }

  protected editPart(target: SentMessage, reply: RenderedReply, index: number): Promise<void> {
    return editWithFallback(this.port, target, reply.parts[index]!, () => reply.fallback(index), this.logger);
  }

  /** Delete a message the stream sent, best effort: a failed delete must not fail the turn. */
  protected async discard(target: SentMessage, chars: number): Promise<void> {
    try {
      await this.port.deleteMessage(target);
      this.emit("discard", chars);
    } catch (error) {
      this.logger?.warn("could not delete a streamed message", { error, channel: this.channel });
    }
  }

  /** Send the attachments gathered while streaming plus `more`, each once. */
  protected async flushAttachments(more: readonly TextAttachment[] = []): Promise<void> {
    const all = this.takeAttachments(more);
    try {
      await sendAttachments(this.port, this.platform, all, this.deliverOptions());
    } catch (error) {
      // The gateway's sender records attachments durably and never throws here; through a bare port, say so.
      this.logger?.error("a code block could not be sent as a file", { error, channel: this.channel });
    }
  }

  /** The attachments still owed, plus `more`, each once; the list is emptied. */
  protected takeAttachments(more: readonly TextAttachment[] = []): TextAttachment[] {
    const seen = new Set<string>();
    const all = [...this.attachments, ...more].filter((a) => {
      const key = `${a.filename}\u0000${a.content}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    this.attachments.length = 0;
    return all;
  }

  /** A send failed: note it once in the log; the stream stops sending and the rest goes whole at the end. */
  protected markBroken(error: unknown): void {
    if (!this.broken) this.logger?.warn("streaming a reply failed; the rest will be delivered whole", { error, channel: this.channel });
    this.broken = true;
  }

  /** Whether one more answer message may be streamed; past the cap, the stream is capped for good. */
  protected roomForPart(): boolean {
    const max = this.options.maxParts;
    if (max !== undefined && this.answerParts >= max) this.capped = true;
    return !this.capped;
  }

  /** Whether `more` answer messages would take the reply past max_reply_parts. */
  protected overCap(more: number): boolean {
    const max = this.options.maxParts;
    return max !== undefined && this.answerParts + more > max;
  }

  /** The reply outgrew max_reply_parts: a line saying so and the whole answer as a Markdown file. */
  protected async deliverWholeAsFile(finalMarkdown: string): Promise<void> {
    this.attachments.length = 0;
    await this.deliverRest(
      `_The whole answer is long (more than ${this.options.maxParts ?? this.answerParts} messages), so all of it is in the attached file answer.md._`,
      [{ filename: "answer.md", mime: "text/markdown", content: finalMarkdown, inline: false }],
    );
  }

  /** Deliver the rest of a reply whose streaming broke, with the code blocks still owed: through the fallback, else the port. */
  protected async deliverRest(markdown: string, attachments: TextAttachment[]): Promise<void> {
    if (markdown.trim() === "" && attachments.length === 0) return;
    if (this.options.fallback) return this.options.fallback(markdown, attachments);
    if (markdown.trim() !== "") await deliverReply(this.port, this.platform, markdown, { ...this.deliverOptions(), notify: !this.notified });
    this.notified = true;
    await sendAttachments(this.port, this.platform, attachments, this.deliverOptions());
  }

  /** Render reasoning as a status message text. */
  protected thinking(text: string, limit?: number): RenderedReply {
    return renderReply(`${THINKING} ${text.trim()}`, this.platform, limit ? { limit, notify: false } : { notify: false });
  }
}
