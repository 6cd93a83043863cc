/**
 * One recorded part through one port: marked `sending` (from here a crash
 * means "maybe sent", and it is never sent again), sent — a text the
 * platform rejects for its formatting goes once more as its plain-text
 * fallback — then marked with the platform's id. Counted in telemetry, and
 * told to health when it goes through. Failures are thrown to the caller.
 */
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { FormattingRejected, type GatewayChannel, type ReplyPort, type SentMessage } from "../../message/index.ts";
import type { Outbox, OutboxPart, OutboxPayload } from "../../store/outbox.ts";
import type { SendHealth } from "./health.ts";

export interface PartSenderDeps {
  outbox: Outbox;
  health: SendHealth;
  telemetry: Telemetry;
  log: Logger;
}

export class PartSender {
  constructor(private readonly deps: PartSenderDeps) {}

  async send(part: OutboxPart, port: ReplyPort): Promise<SentMessage> {
    const { outbox, telemetry } = this.deps;
    const started = performance.now();
    const channel = part.channel;
    outbox.markSending(part.id);
    let sent: SentMessage;
    try {
      sent = part.payload.kind === "text" ? await this.sendText(channel, part.payload, port) : await port.sendMedia(part.payload.media);
    } catch (error) {
      if (part.payload.kind === "media") {
        telemetry.emit("channel.media_send_error", {
          measurements: { count: 1 },
          metadata: { channel, kind: part.payload.media.kind, reason: error instanceof Error ? error.name : "error" },
        });
      }
      telemetry.emit("channel.reply", {
        measurements: { duration_ms: performance.now() - started, parts: 1 },
        metadata: { channel, kind: part.payload.kind, ok: false },
      });
      throw error;
    }
    outbox.markSent(part, sent.id);
    this.deps.health.delivered(channel, part.target);
    telemetry.emit("channel.message", { measurements: { count: 1 }, metadata: { channel, direction: "outbound" } });
    telemetry.emit("channel.reply", {
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
