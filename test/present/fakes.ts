/**
 * Test doubles for the streaming engine: a reply port that records every
 * call (and can reject formatting or refuse deletes), and a fake clock whose
 * timers run only when the test advances time.
 */
import { Logger, type LogSink, Redactor } from "../../src/kernel/log.ts";
import {
  FormattingRejected,
  type OutboundMedia,
  type OutboundText,
  type ReplyCapabilities,
  type ReplyPort,
  type SentMessage,
} from "../../src/message/index.ts";

export interface PortCall {
  op: "send" | "edit" | "delete" | "media";
  id: string;
  at: number;
  text?: string;
  notify?: boolean;
  linkPreview?: boolean;
  plain?: boolean;
  filename?: string;
}

export class RecordingPort implements ReplyPort {
  readonly calls: PortCall[] = [];
  readonly capabilities: ReplyCapabilities;
  /** Messages by id: their current text and whether they were deleted. */
  readonly messages = new Map<string, { text: string; deleted: boolean; plain: boolean }>();
  /** Formatted texts for which the port throws FormattingRejected. */
  rejectFormatting: (text: string) => boolean = () => false;
  private next = 0;

  constructor(
    private readonly clock: { now(): number },
    capabilities: Partial<ReplyCapabilities> = {},
  ) {
    this.capabilities = { edit: true, delete: true, react: false, media: true, typing: false, ...capabilities };
  }

  async sendText(message: OutboundText): Promise<SentMessage> {
    await Promise.resolve();
    if (!message.plain && this.rejectFormatting(message.text)) throw new FormattingRejected("can't parse entities");
    const id = `m${++this.next}`;
    this.messages.set(id, { text: message.text, deleted: false, plain: message.plain });
    this.calls.push({
      op: "send",
      id,
      at: this.clock.now(),
      text: message.text,
      notify: message.notify,
      linkPreview: message.linkPreview,
      plain: message.plain,
    });
    return { id };
  }

  async editText(target: SentMessage, message: OutboundText): Promise<void> {
    await Promise.resolve();
    if (!this.capabilities.edit) throw new Error("this port cannot edit");
    if (!message.plain && this.rejectFormatting(message.text)) throw new FormattingRejected("can't parse entities");
    const current = this.messages.get(target.id);
    if (!current || current.deleted) throw new Error(`edit of unknown message ${target.id}`);
    current.text = message.text;
    current.plain = message.plain;
    this.calls.push({ op: "edit", id: target.id, at: this.clock.now(), text: message.text, plain: message.plain, linkPreview: message.linkPreview });
  }

  async deleteMessage(target: SentMessage): Promise<void> {
    await Promise.resolve();
    if (!this.capabilities.delete) throw new Error("this port cannot delete");
    const current = this.messages.get(target.id);
    if (!current || current.deleted) throw new Error(`delete of unknown message ${target.id}`);
    current.deleted = true;
    this.calls.push({ op: "delete", id: target.id, at: this.clock.now() });
  }

  async react(): Promise<void> {}

  async sendMedia(media: OutboundMedia): Promise<SentMessage> {
    const id = `m${++this.next}`;
    const content = await Bun.file(media.path).text();
    this.messages.set(id, { text: content, deleted: false, plain: true });
    this.calls.push({ op: "media", id, at: this.clock.now(), filename: media.filename, notify: media.notify, text: content });
    return { id };
  }

  async typing(): Promise<void> {}

  /** The texts still on screen, in the order they were sent. */
  visible(): string[] {
    return [...this.messages.values()].filter((m) => !m.deleted).map((m) => m.text);
  }

  sends(): PortCall[] {
    return this.calls.filter((c) => c.op === "send");
  }

  edits(id?: string): PortCall[] {
    return this.calls.filter((c) => c.op === "edit" && (id === undefined || c.id === id));
  }

  deletes(): PortCall[] {
    return this.calls.filter((c) => c.op === "delete");
  }
}

/** A logger that keeps its lines. */
export function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink: LogSink = { write: (line) => void lines.push(line) };
  return { logger: new Logger(sink, "debug", new Redactor()), lines };
}

/** Visible length of Telegram HTML: tags removed, the four entities counted as one. */
export function telegramVisible(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}
