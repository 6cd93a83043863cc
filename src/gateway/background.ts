/**
 * Detached background work (`/background`, scheduled job runs): at most 8 at
 * once daemon-wide. Past that, `/background` is refused — not queued — while
 * a scheduled job waits its turn (`startWhenFree`). Each task remembers the
 * conversation it came from, so `/tasks` lists them there and `/stop` stops
 * them — all but a scheduled job's run, which `/stop` never touches (only a
 * shutdown interrupts it).
 */

export const BACKGROUND_LIMIT = 8;
const RECENT_KEPT = 20;

export interface BackgroundTask {
  id: number;
  conversation: string;
  prompt: string;
  state: "running" | "done" | "failed" | "stopped";
  /** `/stop` in its conversation ends it (false for a scheduled job's run). */
  stoppable: boolean;
  startedAt: number;
  finishedAt?: number;
}

export class BackgroundLimitReached extends Error {
  override name = "BackgroundLimitReached";
  constructor(readonly limit: number) {
    super(`at most ${limit} background tasks run at once`);
  }
}

export class BackgroundWork {
  private nextId = 1;
  private readonly running = new Map<number, { task: BackgroundTask; controller: AbortController; over: Promise<void> }>();
  private readonly finished: BackgroundTask[] = [];
  /** Work waiting for a free slot, first come first served. */
  private readonly waiting: Array<{ start: () => void }> = [];

  constructor(
    readonly limit = BACKGROUND_LIMIT,
    private readonly now: () => number = Date.now,
  ) {}

  /** Start a task; throws BackgroundLimitReached when `limit` are already running. */
  start(conversation: string, prompt: string, work: (signal: AbortSignal, task: BackgroundTask) => Promise<void>, stoppable = true): BackgroundTask {
    if (this.running.size >= this.limit) throw new BackgroundLimitReached(this.limit);
    const task: BackgroundTask = { id: this.nextId++, conversation, prompt, state: "running", stoppable, startedAt: this.now() };
    const controller = new AbortController();
    const over = work(controller.signal, task).then(
      () => this.finish(task, controller.signal.aborted ? "stopped" : "done"),
      () => this.finish(task, controller.signal.aborted ? "stopped" : "failed"),
    );
    this.running.set(task.id, { task, controller, over });
    return task;
  }

  /**
   * Start a task as soon as fewer than `limit` run: work that must not be
   * dropped (a scheduled job's run) waits its turn instead of being refused.
   * Rejects with the signal's reason if `signal` aborts while it waits.
   */
  startWhenFree(
    conversation: string,
    prompt: string,
    work: (signal: AbortSignal, task: BackgroundTask) => Promise<void>,
    options: { signal?: AbortSignal; stoppable: boolean },
  ): Promise<BackgroundTask> {
    const { signal, stoppable } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running.size < this.limit && this.waiting.length === 0) return Promise.resolve(this.start(conversation, prompt, work, stoppable));
    return new Promise((resolve, reject) => {
      const entry = {
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.start(conversation, prompt, work, stoppable));
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Work waiting for a free slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Running and recent tasks started from a conversation, newest first. */
  list(conversation: string): BackgroundTask[] {
    const running = [...this.running.values()].map((r) => r.task);
    return [...running, ...this.finished].filter((t) => t.conversation === conversation).sort((a, b) => b.id - a.id);
  }

  /**
   * `/stop` in a conversation: stop its running tasks that `/stop` reaches
   * (not a scheduled job's run); with no conversation (a shutdown), every
   * task. How many, and when they have all wound down.
   */
  stop(conversation?: string): { stopped: number; settled: Promise<void> } {
    const over: Promise<void>[] = [];
    for (const { task, controller, over: done } of this.running.values()) {
      if (conversation !== undefined && (task.conversation !== conversation || !task.stoppable)) continue;
      controller.abort();
      over.push(done);
    }
    return { stopped: over.length, settled: Promise.all(over).then(() => undefined) };
  }

  get active(): number {
    return this.running.size;
  }

  private finish(task: BackgroundTask, state: BackgroundTask["state"]): void {
    this.running.delete(task.id);
    task.state = state;
    task.finishedAt = this.now();
    this.finished.unshift(task);
    this.finished.splice(RECENT_KEPT);
    while (this.running.size < this.limit && this.waiting.length > 0) this.waiting.shift()!.start();
  }
}
