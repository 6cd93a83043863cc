/**
 * The config in force, in one place: every consumer that outlives a reload
 * (button presses, job targets, the time zone, the sandbox, streaming, trust)
 * holds this and reads it when it acts, never a value captured at start.
 * A reload replaces what it returns; nothing else keeps a copy.
 */
import type { LoadedConfig } from "./index.ts";
import type { Config } from "./schema.ts";

export class LiveConfig {
  constructor(private current: LoadedConfig) {}

  /** The loaded config in force now (paths, secrets store, warnings with it). */
  get loaded(): LoadedConfig {
    return this.current;
  }

  /** The settings in force now. */
  get config(): Config {
    return this.current.config;
  }

  /** A reload: from now on every reader sees `next`. */
  replace(next: LoadedConfig): void {
    this.current = next;
  }
}
