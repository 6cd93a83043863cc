/**
 * Every outbound message leaves through here: recorded in the durable outbox,
 * marked `sending`, sent through the channel's port (resent once as plain
 * text if the platform rejects its formatting), then marked with the
 * platform's id. The final reply, streaming, command replies, background
 * results and tool media all use this one path.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { Outbox, OutboxPart, OutboxPayload } from "../store/outbox.ts";
import {
  FormattingRejected,
  type GatewayChannel,
  type OutboundMedia,
  type OutboundText,
  type ReplyPort,
  type ReplyTarget,
  type SentMessage,
} from "../message/index.ts";

/** A reply rendered for one channel: its messages, the plain fallback of each, and oversized code blocks as files. */
export interface RenderedReply {
  parts: OutboundText[];
  attachments: Array<{ filename: string; mime: string; content: string }>;
  /** Part `index` again as plain text (one or more messages), for a platform that rejected its formatting. */
  fallback(index: number): OutboundText[];
}

export interface Presenter {
  /** Split → render → measure, for one channel. */
  render(markdown: string, channel: GatewayChannel): RenderedReply;
}

export interface DeliveryDeps {
  outbox: Outbox;
  presenter: Presenter;
  /** The channel's raw port for a target; undefined when the channel is not running. */
  rawPort: (channel: GatewayChannel, target: ReplyTarget) => ReplyPort | undefined;
  spoolDir: string;
  telemetry: Telemetry;
  log: Logger;
}

export class Delivery {
  constructor(private readonly deps: DeliveryDeps) {}

  /** Render a Markdown reply and record its parts; returns them to be sent with `send`. */
  record(channel: GatewayChannel, target: ReplyTarget, replyKey: string, markdown: string, firstPart?: number): OutboxPart[] {
    const rendered = this.deps.presenter.render(markdown, channel);
    const payloads: OutboxPayload[] = rendered.parts.map((message, i) => ({ kind: "text", message, fallback: rendered.fallback(i) }));
    rendered.attachments.forEach((file, i) => {
      const dir = join(this.deps.spoolDir, replyKey.replace(/[^A-Za-z0-9_.-]/g, "_"));
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, `${i}-${file.filename}`);
      writeFileSync(path, file.content, { mode: 0o600 });
      payloads.push({ kind: "media", media: { kind: "document", path, filename: file.filename, mime: file.mime, notify: false } });
    });
    return this.deps.outbox.record(replyKey, channel, target, payloads, firstPart);
  }

  /** Send recorded parts in order; stops at the first failure (the rest are marked failed). */
  async send(parts: OutboxPart[], port?: ReplyPort): Promise<boolean> {
    for (const [i, part] of parts.entries()) {
      if (part.state !== "pending") continue;
      const target = port ?? this.deps.rawPort(part.channel, part.target);
      if (!target) {
        for (const rest of parts.slice(i)) this.deps.outbox.markFailed(rest.id, `channel ${part.channel} is not running`);
        this.deps.log.error("reply not delivered: channel not running", { channel: part.channel, reply: part.replyKey });
        return false;
      }
      try {
        await this.sendPart(part, target);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.deps.outbox.markFailed(part.id, reason);
        for (const rest of parts.slice(i + 1)) if (rest.state === "pending") this.deps.outbox.markFailed(rest.id, "an earlier part failed");
        this.deps.log.error("reply part failed", { channel: part.channel, reply: part.replyKey, part: part.part, error: reason });
        return false;
      }
    }
    return true;
  }

  /** Render, record and send a Markdown message now (command replies, notices, background results). */
  async say(channel: GatewayChannel, target: ReplyTarget, replyKey: string, markdown: string, port?: ReplyPort): Promise<boolean> {
    // A say key names one whole message: recorded from part 0, so saying it again (a message replayed
    // after a crash between the send and its inbox entry's completion) finds the parts sent and sends nothing.
    return this.send(this.record(channel, target, replyKey, markdown, 0), port);
  }

  /**
   * A port for one reply whose new messages go through the outbox: what the
   * streaming engine and the tools use. Edits, deletes, reactions and typing
   * change no message count and pass straight through.
   */
  durablePort(channel: GatewayChannel, target: ReplyTarget, replyKey: string, raw: ReplyPort): ReplyPort {
    const viaOutbox = async (payload: OutboxPayload): Promise<SentMessage> => {
      const [part] = this.deps.outbox.record(replyKey, channel, target, [payload]);
      return this.sendPart(part!, raw);
    };
    return {
      capabilities: raw.capabilities,
      sendText: (message) => viaOutbox({ kind: "text", message }),
      sendMedia: (media) => viaOutbox({ kind: "media", media }),
      // The streaming engine resends rejected formatting as plain text itself: pass rejections up.
      editText: (sent, message) => raw.editText(sent, message),
      deleteMessage: (sent) => raw.deleteMessage(sent),
      react: (messageId, emoji) => raw.react(messageId, emoji),
      typing: () => raw.typing(),
    };
  }

  /** At start: parts caught mid-send are never re-sent; parts never attempted are sent now. */
  async resume(): Promise<{ resumed: number; unknown: number }> {
    const { resume, unknown } = this.deps.outbox.recover();
    if (unknown > 0) this.deps.log.warn("outbox parts interrupted mid-send are not re-sent", { parts: unknown });
    const byReply = new Map<string, OutboxPart[]>();
    for (const part of resume) byReply.set(part.replyKey, [...(byReply.get(part.replyKey) ?? []), part]);
    for (const parts of byReply.values()) await this.send(parts);
    if (resume.length > 0) this.deps.log.info("outbox resumed", { parts: resume.length, replies: byReply.size });
    return { resumed: resume.length, unknown };
  }

  private async sendPart(part: OutboxPart, port: ReplyPort): Promise<SentMessage> {
    const started = performance.now();
    const channel = part.channel;
    this.deps.outbox.markSending(part.id);
    let sent: SentMessage;
    try {
      sent =
        part.payload.kind === "text"
          ? await this.sendText(part.channel, part.payload, port)
          : await port.sendMedia(part.payload.media as OutboundMedia);
    } catch (error) {
      this.deps.outbox.markFailed(part.id, error instanceof Error ? error.message : String(error));
      if (part.payload.kind === "media") {
        this.deps.telemetry.emit("channel.media_send_error", {
          measurements: { count: 1 },
          metadata: { channel, kind: part.payload.media.kind, reason: error instanceof Error ? error.name : "error" },
        });
      }
      this.deps.telemetry.emit("channel.reply", {
        measurements: { duration_ms: performance.now() - started, parts: 1 },
        metadata: { channel, kind: part.payload.kind, ok: false },
      });
      throw error;
    }
    this.deps.outbox.markSent(part.id, sent.id);
    this.deps.telemetry.emit("channel.message", { measurements: { count: 1 }, metadata: { channel, direction: "outbound" } });
    this.deps.telemetry.emit("channel.reply", {
      measurements: { duration_ms: performance.now() - started, parts: 1 },
      metadata: { channel, kind: part.payload.kind, ok: true },
    });
    return sent;
  }

  /**
   * Send a recorded text part; if the platform rejects its formatting, log the
   * fault and send its plain-text fallback once instead (the first message's id
   * stands for the part).
   */
  private async sendText(channel: GatewayChannel, payload: Extract<OutboxPayload, { kind: "text" }>, port: ReplyPort): Promise<SentMessage> {
    try {
      return await port.sendText(payload.message);
    } catch (error) {
      if (!(error instanceof FormattingRejected) || payload.message.plain || !payload.fallback?.length) throw error;
      this.deps.log.error("platform rejected the formatting; resending as plain text", { channel, error: error.message });
      let first: SentMessage | undefined;
      for (const message of payload.fallback) {
        const sent = await port.sendText(message);
        first ??= sent;
      }
      return first!;
    }
  }
}
