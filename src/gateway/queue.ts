/**
 * Per-conversation FIFO: one turn at a time per (channel, chat, thread);
 * different conversations run concurrently. Each turn gets an AbortSignal so
 * `/stop` can cancel the running one and drop the queued ones.
 */

export class TurnCancelled extends Error {
  override name = "TurnCancelled";
  constructor() {
    super("the turn was stopped before it ran");
  }
}

/** The daemon is shutting down: the turn is abandoned, and its inbox entry replays at the next start. */
export class ShutdownInterrupt extends Error {
  override name = "ShutdownInterrupt";
  constructor() {
    super("the daemon is shutting down");
  }
}

interface Queued<T> {
  run: (signal: AbortSignal) => Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

interface Lane {
  active?: AbortController;
  /** Settles when the running turn has returned (whatever it returned). */
  running?: Promise<void>;
  waiting: Queued<unknown>[];
}

/** What a stop did: how many turns it cancelled and dropped, and when the cancelled one has wound down. */
export interface Stopped {
  cancelled: number;
  dropped: number;
  /** Resolves once the cancelled turn has returned: nothing of it is sent after this. */
  settled: Promise<void>;
}

export class ConversationQueue {
  private readonly lanes = new Map<string, Lane>();

  /** Queue a turn; resolves with its result once it has run (rejects with TurnCancelled if stopped first). */
  enqueue<T>(key: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const lane = this.lanes.getOrInsertComputed(key, () => ({ waiting: [] }));
      lane.waiting.push({ run, resolve, reject } as Queued<unknown>);
      if (!lane.active) void this.drain(key, lane);
    });
  }

  /** Cancel the running turn and drop the queued ones; returns how many were affected and when it is over. */
  stop(key: string, reason: Error = new TurnCancelled()): Stopped {
    const lane = this.lanes.get(key);
    if (!lane) return { cancelled: 0, dropped: 0, settled: Promise.resolve() };
    const dropped = lane.waiting.splice(0);
    for (const item of dropped) item.reject(reason);
    const cancelled = lane.active && !lane.active.signal.aborted ? 1 : 0;
    lane.active?.abort(reason);
    return { cancelled, dropped: dropped.length, settled: lane.running ?? Promise.resolve() };
  }

  /** Stop every conversation (shutdown). */
  stopAll(reason: Error): void {
    for (const key of [...this.lanes.keys()]) this.stop(key, reason);
  }

  /** Turns running now and turns waiting behind them, over every conversation (the dashboard, /metrics). */
  counts(): { running: number; waiting: number } {
    let running = 0;
    let waiting = 0;
    for (const lane of this.lanes.values()) {
      if (lane.active) running++;
      waiting += lane.waiting.length;
    }
    return { running, waiting };
  }

  /** Keys of conversations with work running or waiting (a leak check in tests). */
  activeKeys(): string[] {
    return [...this.lanes.keys()];
  }

  private async drain(key: string, lane: Lane): Promise<void> {
    for (let next = lane.waiting.shift(); next; next = lane.waiting.shift()) {
      const controller = new AbortController();
      lane.active = controller;
      let run: Promise<unknown>;
      try {
        run = next.run(controller.signal);
      } catch (error) {
        run = Promise.reject(error);
      }
      lane.running = run.then(
        () => undefined,
        () => undefined,
      );
      try {
        next.resolve(await run);
      } catch (error) {
        next.reject(error);
      }
      lane.active = undefined;
      lane.running = undefined;
    }
    this.lanes.delete(key);
  }
}
