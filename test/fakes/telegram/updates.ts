/**
 * The pending-update queue behind `getUpdates`, with the Bot API's long-poll
 * rules: an offset confirms (and forgets) every update below it, a negative
 * offset keeps only the last |offset| updates, `limit` caps the batch,
 * `timeout` holds the request until an update is queued, and a second poller
 * ends the first one's request with 409 Conflict, as Telegram does.
 */
import type { Update } from "grammy/types";

/** An update without its id; the queue assigns increasing update_ids. */
export type UpdateBody = Omit<Update, "update_id">;

/** Update types delivered when `allowed_updates` was never set or set to []. */
const OPT_IN_ONLY = new Set(["chat_member", "message_reaction", "message_reaction_count"]);

export type PollOutcome = { kind: "updates"; updates: Update[] } | { kind: "conflict" };

interface Waiter {
  limit: number;
  /** null: answer with whatever is deliverable now. */
  wake(outcome: PollOutcome | null): void;
}

export interface PollParams {
  offset?: number;
  limit?: number;
  /** Seconds. */
  timeout?: number;
  allowed_updates?: string[];
}

export class UpdateQueue {
  private pending: Update[] = [];
  private nextId: number;
  private waiter: Waiter | null = null;
  /** The types the bot last asked for; undefined means the default set. */
  allowed: string[] | undefined;
  /** The offset of the most recent getUpdates call, for "resumed from" assertions. */
  lastOffset: number | undefined;

  constructor(
    firstUpdateId: number,
    private readonly maxPollMs: number | undefined,
  ) {
    this.nextId = firstUpdateId;
  }

  /** Queue an update and answer a waiting long poll at once. */
  push(body: UpdateBody): Update {
    const update = { update_id: this.nextId++, ...body } as Update;
    this.pending.push(update);
    if (this.waiter && this.take(this.waiter.limit).length > 0) this.waiter.wake(null);
    return update;
  }

  /** Updates queued and not yet confirmed. */
  get size(): number {
    return this.pending.length;
  }

  /** Forget everything pending (deleteWebhook with drop_pending_updates). */
  drop(): void {
    this.pending = [];
  }

  /** Answer a waiting poll with no updates (used when the fake shuts down). */
  release(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.wake({ kind: "updates", updates: [] });
  }

  /** End a waiting poll with 409, as a second poller does on the real server. */
  conflictWaiting(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.wake({ kind: "conflict" });
  }

  private isAllowed(update: Update): boolean {
    const type = Object.keys(update).find((k) => k !== "update_id") ?? "";
    if (this.allowed === undefined || this.allowed.length === 0) return !OPT_IN_ONLY.has(type);
    return this.allowed.includes(type);
  }

  private confirm(offset: number): void {
    if (offset < 0) {
      this.pending = this.pending.slice(offset);
      return;
    }
    this.pending = this.pending.filter((u) => u.update_id >= offset);
  }

  /** Up to `limit` deliverable updates (they stay pending until a later offset confirms them). */
  private take(limit: number): Update[] {
    // Types the bot did not ask for are never delivered; drop them as the server does.
    this.pending = this.pending.filter((u) => this.isAllowed(u));
    return this.pending.slice(0, limit);
  }

  /** One getUpdates call. `signal` is the HTTP request's: a client that hung up stops waiting. */
  async poll(params: PollParams, signal: AbortSignal): Promise<PollOutcome> {
    if (params.allowed_updates !== undefined) this.allowed = params.allowed_updates;
    this.lastOffset = params.offset;
    if (params.offset !== undefined && params.offset !== 0) this.confirm(params.offset);
    const limit = Math.min(100, Math.max(1, params.limit ?? 100));
    const ready = this.take(limit);
    const timeoutMs = Math.max(0, params.timeout ?? 0) * 1000;
    if (ready.length > 0 || timeoutMs === 0) return { kind: "updates", updates: ready };
    // Only one poll may wait: the newer request terminates the older one.
    this.conflictWaiting();
    const holdMs = this.maxPollMs === undefined ? timeoutMs : Math.min(timeoutMs, this.maxPollMs);
    return new Promise<PollOutcome>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter: Waiter = {
        limit,
        wake: (outcome) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          if (this.waiter === waiter) this.waiter = null;
          resolve(outcome ?? { kind: "updates", updates: this.take(limit) });
        },
      };
      const onAbort = () => waiter.wake({ kind: "updates", updates: [] });
      if (signal.aborted) return resolve({ kind: "updates", updates: [] });
      this.waiter = waiter;
      timer = setTimeout(() => waiter.wake(null), holdMs);
      signal.addEventListener("abort", onAbort);
    });
  }
}
