/**
 * Messages from senders who may not talk to the assistant cost nothing that
 * outlives them: they are refused before anything is recorded (no inbox
 * entry, no de-duplication key, no history), and the log says so without a
 * line per message — the first one of a quiet spell at once, then one line a
 * minute with how many were dropped from how many senders. A spam wave on a
 * public bot or a leaked Slack app then fills neither the disk nor the log.
 */
import { type Clock, systemClock, unrefTimer } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import type { GatewayChannel } from "../message/index.ts";

/** How often the dropped messages are summed up in the log. */
export const STRANGER_SUMMARY_MS = 60_000;
/**
 * How many distinct senders a minute's summary tells apart. A flood from a million made-up senders
 * would otherwise keep a million names in memory until the line is written; past this, it says
 * "at least".
 */
export const STRANGER_SENDERS_COUNTED = 10_000;

export class StrangerTally {
  private messages = 0;
  private readonly senders = new Set<string>();
  private timer: unknown = null;

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
    private readonly everyMs = STRANGER_SUMMARY_MS,
  ) {}

  /** A message from an unauthorized sender was dropped. */
  drop(channel: GatewayChannel, senderId: string): void {
    if (this.timer === null) {
      // The first of a spell is said at once (an owner pairing a new account looks for it); the rest are summed up.
      this.log.info("message from an unauthorized sender dropped", { channel, sender: senderId });
      this.timer = this.clock.setTimeout(() => this.summarize(), this.everyMs);
      unrefTimer(this.timer);
      return;
    }
    this.messages++;
    if (this.senders.size < STRANGER_SENDERS_COUNTED) this.senders.add(`${channel}:${senderId}`);
  }

  /** Say what was dropped since the first of the spell; the next drop after a quiet minute starts a new spell. */
  private summarize(): void {
    this.timer = null;
    if (this.messages === 0) return;
    const some = this.senders.size >= STRANGER_SENDERS_COUNTED ? "at least " : "";
    this.log.info(
      `${this.messages} more message${this.messages === 1 ? "" : "s"} from ${some}${this.senders.size} unauthorized sender${this.senders.size === 1 ? "" : "s"} dropped`,
      {
        messages: this.messages,
        senders: this.senders.size,
        window_s: Math.round(this.everyMs / 1000),
      },
    );
    this.messages = 0;
    this.senders.clear();
    // Keep summing while the flood lasts.
    this.timer = this.clock.setTimeout(() => this.summarize(), this.everyMs);
    unrefTimer(this.timer);
  }

  /** Stop the summary timer (shutdown). */
  close(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
