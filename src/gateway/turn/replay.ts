/**
 * A conversation turn replayed after a crash squares its answer with what
 * its first attempt already delivered: where the channel can take messages
 * back and every one of them has its id, what was shown is withdrawn and the
 * new answer replaces it; otherwise only the rest of the answer is sent — or
 * the whole, introduced by one line saying why it comes again. A part caught
 * mid-send counts as delivered: it may have arrived, and is never sent again
 * (docs/operations.md). An answer the first attempt committed to history is
 * not asked of the model again.
 */
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ReplyPort } from "../../message/index.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import type { OutboxPart } from "../../store/outbox.ts";
import { remainderAfter } from "../reconcile.ts";

/** The one line that opens a replayed answer on a channel that cannot take back what the first attempt sent. */
export const RESTART_INTRO = "_(I was restarted while answering; here is the complete answer.)_";

/** The answer a crashed attempt already committed: history ends with this request and its answer. */
export function committedAnswer(conversations: ConversationStore, conversation: string, text: string): string | undefined {
  const [request, answer] = conversations.history(conversation).slice(-2);
  return request?.role === "user" && request.text === text && answer?.role === "assistant" ? answer.text : undefined;
}

/** Withdraw what a crashed attempt showed, on a channel that can delete. */
export async function withdraw(port: ReplyPort, earlier: readonly OutboxPart[], log: Logger): Promise<void> {
  let removed = 0;
  for (const part of earlier) {
    if (part.platformId === null) continue;
    try {
      await port.deleteMessage({ id: part.platformId });
      removed++;
    } catch (error) {
      log.warn("could not remove a message of an interrupted reply", { error: describeError(error) });
    }
  }
  log.info("replayed turn removed what its interrupted attempt had shown", { removed });
}

/**
 * A replayed answer squared with what its first attempt delivered on a
 * channel that cannot take messages back: when the new answer starts with
 * what was delivered, only the rest is sent; otherwise the whole new answer,
 * introduced by one line saying why it comes again.
 */
export function squared(answer: string, earlier: readonly OutboxPart[]): string {
  const sources = earlier.map((part) => (part.payload.kind === "text" ? part.payload.message.source : undefined));
  const delivered = sources.every((s) => s !== undefined) ? sources.join("") : undefined;
  if (delivered !== undefined) {
    const rest = remainderAfter(answer, delivered);
    if (rest !== undefined) return rest;
  }
  return `${RESTART_INTRO}\n\n${answer}`;
}
