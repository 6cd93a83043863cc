/**
 * Recording outbound parts: a Markdown reply rendered for its channel and
 * written to the outbox (with the plain-text fallback of each message), text
 * files spooled to disk and recorded as attachments. Nothing here sends.
 *
 * A reply over `max_reply_parts` messages becomes its first part, a line
 * saying so, and the whole answer as `answer.md`. A spooled file is named by
 * the part number it is recorded as, so two files of one reply never share a
 * path, and recording the same part again writes the same file.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GatewayChannel, OutboundMedia, ReplyButton, ReplyTarget } from "../../message/index.ts";
import type { Outbox, OutboxPart, OutboxPayload, OutboxPurpose } from "../../store/outbox.ts";
import { type Presenter, readSetting, type Setting, type TextFile } from "./types.ts";

export const DEFAULT_MAX_PARTS = 12;

export interface RecorderDeps {
  outbox: Outbox;
  presenter: Presenter;
  spoolDir: string;
  /** Over this many messages a reply is its first part and the whole answer as a file (max_reply_parts). */
  maxParts: Setting;
  /** The time before which nothing may be sent to a chat (a platform's Retry-After), epoch ms; 0: none. */
  gate: (channel: GatewayChannel, target: ReplyTarget) => number;
  now: () => number;
}

export interface RecordOptions {
  /** The first part number; default: after the reply's last part. */
  firstPart?: number;
  /** Ride under the reply's last text part, on channels that have buttons. */
  buttons?: ReplyButton[];
  /** Default `reply`. */
  purpose?: OutboxPurpose;
}

export class Recorder {
  constructor(private readonly deps: RecorderDeps) {}

  /** Render a Markdown reply and record its parts; returns them, to be sent in order. */
  record(channel: GatewayChannel, target: ReplyTarget, replyKey: string, markdown: string, options: RecordOptions = {}): OutboxPart[] {
    const { presenter } = this.deps;
    const start = options.firstPart ?? this.deps.outbox.nextPart(replyKey);
    const rendered = presenter.render(markdown, channel);
    let payloads: OutboxPayload[];
    if (rendered.parts.length > readSetting(this.deps.maxParts)) {
      // Hundreds of messages help nobody: the first part, a line saying so, and the whole answer as a file.
      const note = presenter.render(`_The whole answer is long (${rendered.parts.length} messages), so it is attached as a file: answer.md._`, channel)
        .parts[0]!;
      payloads = [
        { kind: "text", message: rendered.parts[0]!, fallback: rendered.fallback(0) },
        { kind: "text", message: { ...note, notify: false } },
        this.spool(replyKey, start + 2, { filename: "answer.md", mime: "text/markdown", content: markdown, inline: false }),
      ];
    } else {
      payloads = rendered.parts.map((message, i) => ({ kind: "text", message, fallback: rendered.fallback(i) }));
      for (const file of rendered.attachments) payloads.push(this.spool(replyKey, start + payloads.length, file));
    }
    if (options.buttons?.length) withButtons(payloads, options.buttons);
    return this.deps.outbox.record(replyKey, channel, target, payloads, {
      firstPart: start,
      ...this.notBefore(channel, target),
      ...(options.purpose ? { purpose: options.purpose } : {}),
    });
  }

  /** Record text files to send after a reply (code blocks set aside while streaming). */
  recordFiles(channel: GatewayChannel, target: ReplyTarget, replyKey: string, files: readonly TextFile[], purpose?: OutboxPurpose): OutboxPart[] {
    if (files.length === 0) return [];
    const start = this.deps.outbox.nextPart(replyKey);
    const payloads = files.map((file, i) => this.spool(replyKey, start + i, file));
    return this.deps.outbox.record(replyKey, channel, target, payloads, {
      firstPart: start,
      ...this.notBefore(channel, target),
      ...(purpose ? { purpose } : {}),
    });
  }

  /** Write a text file to the spool and describe it as a media part (with its text inline, for when the file cannot go). */
  private spool(replyKey: string, part: number, file: TextFile): OutboxPayload {
    const dir = join(this.deps.spoolDir, replyKey.replace(/[^A-Za-z0-9_.-]/g, "_"));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${part}-${file.filename}`);
    writeFileSync(path, file.content, { mode: 0o600 });
    const media: OutboundMedia = { kind: "document", path, filename: file.filename, mime: file.mime, notify: false };
    return file.inline !== false ? { kind: "media", media, inline: file.content } : { kind: "media", media };
  }

  private notBefore(channel: GatewayChannel, target: ReplyTarget): { notBefore?: number } {
    const gate = this.deps.gate(channel, target);
    return gate > this.deps.now() ? { notBefore: gate } : {};
  }
}

/** Put buttons under the last text part (and under the last message of its plain-text fallback). */
function withButtons(payloads: OutboxPayload[], buttons: ReplyButton[]): void {
  const last = payloads.findLast((p) => p.kind === "text");
  if (last?.kind !== "text") return;
  last.message = { ...last.message, buttons };
  const fallback = last.fallback;
  if (fallback?.length) fallback[fallback.length - 1] = { ...fallback[fallback.length - 1]!, buttons };
}
