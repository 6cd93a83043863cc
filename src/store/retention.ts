/**
 * Bounded disk: what the database keeps, and for how long. Idempotency keys
 * live their de-duplication window (per channel, by the config in force when
 * the sweep runs: src/store/idempotency.ts); finished outbox parts and inbox entries
 * that never completed are kept for the configured days, then deleted, with
 * the spooled files of the replies that went; confirmation codes decided
 * or expired longer ago than they are remembered go too. One sweep, run at
 * start and every few minutes by the composition root.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { CODES_KEPT_MS, type ConfirmationStore } from "./confirmations.ts";
import type { IdempotencyStore } from "./idempotency.ts";
import type { Inbox } from "./inbox.ts";
import type { Outbox } from "./outbox.ts";

export interface RetentionPolicy {
  outboxDays: number;
  inboxDays: number;
}

export interface SweepResult {
  idempotency: number;
  outbox: number;
  inbox: number;
  spool: number;
  codes: number;
}

const DAY_MS = 24 * 60 * 60_000;

export interface SweepDeps {
  idempotency: IdempotencyStore;
  outbox: Outbox;
  inbox: Inbox;
  /** Where reply attachments are spooled (one folder per reply). */
  spoolDir: string;
  /** Confirmation codes (absent: none kept here). */
  codes?: ConfirmationStore;
  now: () => number;
}

/**
 * Delete what is past its keeping time. `inbox: false` leaves pending inbox
 * entries alone (at start, before they are replayed).
 */
export function sweep(deps: SweepDeps, policy: RetentionPolicy, options: { inbox: boolean } = { inbox: true }): SweepResult {
  const now = deps.now();
  const outboxCutoff = now - policy.outboxDays * DAY_MS;
  return {
    idempotency: deps.idempotency.sweep(),
    outbox: deps.outbox.sweep(outboxCutoff),
    inbox: options.inbox ? deps.inbox.sweep(now - policy.inboxDays * DAY_MS) : 0,
    spool: sweepSpool(deps.spoolDir, outboxCutoff),
    codes: deps.codes ? deps.codes.sweep(now - CODES_KEPT_MS) : 0,
  };
}

/** Remove spooled reply folders untouched since `cutoff`: their parts were sent (or given up) long ago. */
function sweepSpool(dir: string, cutoff: number): number {
  let removed = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const path = join(dir, name);
    try {
      if (statSync(path).mtimeMs < cutoff) {
        rmSync(path, { recursive: true, force: true });
        removed++;
      }
    } catch {
      // Gone meanwhile, or not ours to read: nothing to sweep.
    }
  }
  return removed;
}
