/**
 * The plain-text fallback: a message the platform rejects for its formatting
 * (Telegram "can't parse entities", Slack invalid_blocks / msg_too_long) is
 * sent once more as plain text, and the fault is logged as an error — it
 * means a renderer produced something the platform does not accept.
 */

import type { Logger } from "../kernel/log.ts";
import { FormattingRejected, type OutboundText, type ReplyPort, type SentMessage } from "../message/index.ts";

/** Send one message; on a formatting rejection send its plain version instead. Returns every message sent. */
export async function sendWithFallback(port: ReplyPort, message: OutboundText, plain: () => OutboundText[], logger?: Logger): Promise<SentMessage[]> {
  try {
    return [await port.sendText(message)];
  } catch (error) {
    if (!(error instanceof FormattingRejected)) throw error;
    logger?.error("the platform rejected a message's formatting; resent as plain text", { error, chars: message.text.length });
    const sent: SentMessage[] = [];
    for (const part of plain()) sent.push(await port.sendText(part));
    return sent;
  }
}

/** Edit a message; on a formatting rejection edit in its plain version (the first plain part). */
export async function editWithFallback(
  port: ReplyPort,
  target: SentMessage,
  message: OutboundText,
  plain: () => OutboundText[],
  logger?: Logger,
): Promise<void> {
  try {
    await port.editText(target, message);
  } catch (error) {
    if (!(error instanceof FormattingRejected)) throw error;
    logger?.error("the platform rejected an edit's formatting; edited as plain text", { error, chars: message.text.length });
    const [first] = plain();
    if (first) await port.editText(target, first);
  }
}
