/**
 * The `settings` table: small named values the process keeps between runs
 * (a channel's poll offset, a gateway session to resume, what a platform
 * told us about ourselves). One key, one text value; a write replaces it.
 */
import type { Database } from "bun:sqlite";

export class SettingsStore {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value under `key`, or undefined when none is kept. */
  get(key: string): string | undefined {
    const row = this.db.query("SELECT value FROM settings WHERE key = ?1").get(key) as { value: string } | null;
    return row?.value;
  }

  /** Keep `value` under `key`; runs inside the caller's transaction when there is one. */
  set(key: string, value: string): void {
    this.db
      .query(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
      )
      .run(key, value, this.now());
  }

  /** Forget `key` (nothing happens when it is not kept). */
  delete(key: string): void {
    this.db.query("DELETE FROM settings WHERE key = ?1").run(key);
  }
}
