/**
 * The kinds of turn the engine runs, and how they differ — as data, so one
 * engine keeps one rule for tools, faults, health, history and delivery:
 *
 * - `conversation`: a message in a conversation, answered live (typing, the
 *   channel's streaming, the "still waiting" status), its request and answer
 *   in history; `/stop` ends it; a crash replays it.
 * - `ultra`: the same, worked on by ultra mode's parts; it shows its own
 *   progress, so no waiting status.
 * - `background`: `/background` work — detached (history is read, the request
 *   not written), its result one message at the end; `/stop` ends it.
 * - `scheduled`: a job's run — like background work, but `/stop` never
 *   touches it (only a shutdown interrupts it, and it runs again at the next
 *   start).
 */
import type { OutboxPurpose } from "../../store/outbox.ts";
import type { TurnMode } from "../roles.ts";

export type TurnKind = "conversation" | "ultra" | "background" | "scheduled";

export interface TurnKindRules {
  /** The role table's kind of turn: which tools its audience may be offered. */
  tools: TurnMode;
  /** Answered live: typing, the channel's streaming, the request written to history first, a crash replays it. */
  live: boolean;
  /** A silence of `waiting_notice_ms` at any point shows the "still waiting" status. */
  waitingNotice: boolean;
  /** `/stop` in its conversation ends it. */
  stoppable: boolean;
  /** What its answer is in the outbox: how it is retried, and named if it cannot be delivered. */
  purpose: OutboxPurpose;
}

export const TURN_KINDS: Readonly<Record<TurnKind, TurnKindRules>> = {
  conversation: { tools: "foreground", live: true, waitingNotice: true, stoppable: true, purpose: "reply" },
  ultra: { tools: "ultra_part", live: true, waitingNotice: false, stoppable: true, purpose: "reply" },
  background: { tools: "background", live: false, waitingNotice: false, stoppable: true, purpose: "background" },
  scheduled: { tools: "scheduled", live: false, waitingNotice: false, stoppable: false, purpose: "job" },
};

/**
 * How a detached turn's one message reads: its answer and its failure under
 * a heading ("**Background task #3 finished**", "⏰ _Scheduled job #2_"), and
 * the tag its answer carries in history so a later turn knows where it came from.
 */
export interface DetachedFrame {
  answer(text: string): string;
  failure(message: string): string;
  historyTag: string;
}
