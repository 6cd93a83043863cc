/**
 * Sending a rendered reply through a reply port: the parts in order, each
 * with the plain-text fallback, then the code blocks set aside as text-file
 * attachments. This is the non-streamed send path; the streaming engine uses
 * the same pieces.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../kernel/log.ts";
import type { ReplyPort, SentMessage } from "../message/index.ts";
import { sendWithFallback } from "./fallback.ts";
import type { TextProfile } from "./measure.ts";
import { plainChunks, type RenderedReply, type RenderOptions, renderReply, type TextAttachment } from "./render.ts";

/** Sends one attachment; the gateway may pass its own (e.g. through its outbox). */
export type AttachmentSender = (attachment: TextAttachment) => Promise<void>;

/** Where delivery logs faults and how it sends attachments. */
export interface DeliverOptions {
  logger?: Logger;
  sendAttachment?: AttachmentSender;
}

/** Send every part of a rendered reply, then its attachments. Returns the messages sent. */
export async function sendRendered(port: ReplyPort, platform: TextProfile, reply: RenderedReply, options: DeliverOptions = {}): Promise<SentMessage[]> {
  const sent: SentMessage[] = [];
  for (const [index, part] of reply.parts.entries()) {
    sent.push(...(await sendWithFallback(port, part, () => reply.fallback(index), options.logger)));
  }
  await sendAttachments(port, platform, reply.attachments, options);
  return sent;
}

/** Render and send a whole reply: the path for replies that do not stream. */
export async function deliverReply(
  port: ReplyPort,
  platform: TextProfile,
  markdown: string,
  options: DeliverOptions & RenderOptions = {},
): Promise<SentMessage[]> {
  return sendRendered(port, platform, renderReply(markdown, platform, options), options);
}

/** Send attachments after a reply, through the given sender or as temporary files. */
export async function sendAttachments(
  port: ReplyPort,
  platform: TextProfile,
  attachments: readonly TextAttachment[],
  options: DeliverOptions = {},
): Promise<void> {
  const send = options.sendAttachment ?? tempFileSender(port, platform, options.logger);
  for (const attachment of attachments) await send(attachment);
}

/**
 * The default attachment sender: the text goes into a temporary file sent as
 * a document. A port that takes no media gets the text itself, as plain
 * messages within the channel's limit, so nothing is lost.
 */
export function tempFileSender(port: ReplyPort, platform: TextProfile, logger?: Logger): AttachmentSender {
  return async (attachment) => {
    if (!port.capabilities.media) {
      for (const part of plainChunks(`${attachment.filename}:\n${attachment.content}`, platform)) await port.sendText(part);
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), "fermix-attachment-"));
    try {
      const path = join(dir, attachment.filename);
      await Bun.write(path, attachment.content);
      await port.sendMedia({ kind: "document", path, filename: attachment.filename, mime: attachment.mime, notify: false });
    } catch (error) {
      logger?.error("could not send a code block as a file", { error, filename: attachment.filename });
      throw error;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}
