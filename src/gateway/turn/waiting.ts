/**
 * The "still waiting" status: after `waiting_notice_ms` without a word from
 * the model — before its first word or at any later point of the turn (a
 * model that writes a few words and then stalls) — one interim message tells
 * the reader the answer is still coming. When the model speaks again it is
 * removed where the channel can delete messages, and a later silence shows
 * it again; where the channel cannot, it is shown at most once per turn, so
 * a stuttering model does not fill the chat. It goes straight through the
 * channel, not the outbox: a status is not part of the answer.
 */

import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ReplyPort, SentMessage } from "../../message/index.ts";
import { WAITING_NOTICE } from "./faults.ts";

export interface SilenceWatch {
  /** The model said something: the status goes, and the silence is counted again from now. */
  heard(): void;
  /** The turn is over: the status goes, and nothing more is shown. */
  close(): Promise<void>;
}

const NEVER: SilenceWatch = { heard() {}, close: async () => {} };

/** Watch a turn's silence on `port`; `ms` of 0 or less: never show anything. */
export function watchSilence(port: ReplyPort, ms: number, signal: AbortSignal, log: Logger): SilenceWatch {
  if (ms <= 0) return NEVER;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let notice: Promise<SentMessage | undefined> | undefined;
  let shown = 0;
  let over = false;
  const show = () => {
    if (over || signal.aborted || notice) return;
    if (shown > 0 && !port.capabilities.delete) return;
    shown++;
    notice = port.sendText({ text: WAITING_NOTICE, notify: false, linkPreview: false, plain: true }).catch((error: unknown) => {
      log.warn("could not show the waiting status", { error: describeError(error) });
      return undefined;
    });
  };
  const arm = () => {
    clearTimeout(timer);
    if (!over) timer = setTimeout(show, ms);
  };
  const withdraw = async () => {
    const sent = await notice;
    notice = undefined;
    if (sent && port.capabilities.delete) await port.deleteMessage(sent).catch(() => {});
  };
  arm();
  return {
    heard() {
      if (over) return;
      arm();
      if (notice) void withdraw();
    },
    async close() {
      over = true;
      clearTimeout(timer);
      await withdraw();
    },
  };
}
