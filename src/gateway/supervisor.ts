/**
 * A bounded supervisor for work handed off after acknowledging a platform:
 * it caps how much is in flight (so a flood is answered 503 and retried later
 * instead of exhausting memory) and never lets a task's failure escape.
 */

import { describeError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";

export class TaskSupervisor {
  private running = 0;
  private readonly idle: Array<() => void> = [];

  constructor(
    readonly capacity: number,
    private readonly log: Logger,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  /** Whether `n` more tasks fit under the capacity now. */
  hasRoom(n: number): boolean {
    return this.running + n <= this.capacity;
  }

  /** Start all tasks, or none when they would pass the capacity. */
  tryStartAll(tasks: Array<() => Promise<void>>, force = false): boolean {
    if (!force && this.running + tasks.length > this.capacity) return false;
    for (const task of tasks) {
      this.running++;
      void task()
        .catch((error) => this.log.error("supervised task failed", { error: describeError(error) }))
        .finally(() => {
          this.running--;
          if (this.running === 0) for (const wake of this.idle.splice(0)) wake();
        });
    }
    return true;
  }

  /** Resolves when nothing is in flight (or at once). */
  whenIdle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }
}
