/**
 * The workspace sandbox's state in SQLite (migration 8): path grants, the
 * env allow/deny/set rules run_command's environment is built from, the
 * command presets switched on, and the network setting. Every change records
 * who made it (`<channel>:<sender>`) and when. What the rules mean is the
 * agent's business (src/agent/sandbox/); this is only where they are kept.
 */
import type { Database } from "bun:sqlite";

export type GrantMode = "ro" | "rw";

/** A path outside the workspace the tools may reach. */
export interface Grant {
  /** Absolute, with symlinks resolved. */
  path: string;
  mode: GrantMode;
  grantedBy: string;
  /** Epoch ms. */
  grantedAt: number;
}

export type EnvRuleKind = "allow" | "deny" | "set";

/** One environment rule: pass a daemon variable through, keep one out, or set a value. */
export interface EnvRule {
  name: string;
  rule: EnvRuleKind;
  /** For `set`. */
  value?: string;
  changedBy: string;
  changedAt: number;
}

/** Everything the sandbox keeps, read at once. */
export interface SandboxState {
  grants: Grant[];
  env: EnvRule[];
  /** Names of the presets switched on. */
  presets: string[];
  /** The network setting; undefined until `/sandbox network` sets it (the config default applies). */
  network: boolean | undefined;
}

export class SandboxStore {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  state(): SandboxState {
    return { grants: this.grants(), env: this.env(), presets: this.presets(), network: this.network() };
  }

  grants(): Grant[] {
    const rows = this.db.query("SELECT path, mode, granted_by, granted_at FROM sandbox_grants ORDER BY path").all() as Array<{
      path: string;
      mode: GrantMode;
      granted_by: string;
      granted_at: number;
    }>;
    return rows.map((r) => ({ path: r.path, mode: r.mode, grantedBy: r.granted_by, grantedAt: r.granted_at }));
  }

  /** Add a grant, or change the mode of an existing one. */
  grant(path: string, mode: GrantMode, by: string): void {
    this.db
      .query(
        `INSERT INTO sandbox_grants (path, mode, granted_by, granted_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (path) DO UPDATE SET mode = excluded.mode, granted_by = excluded.granted_by, granted_at = excluded.granted_at`,
      )
      .run(path, mode, by, this.now());
  }

  /** Remove a grant; false when there was none for that path. */
  revoke(path: string): boolean {
    return this.db.query("DELETE FROM sandbox_grants WHERE path = ?1").run(path).changes > 0;
  }

  env(): EnvRule[] {
    const rows = this.db.query("SELECT name, rule, value, changed_by, changed_at FROM sandbox_env ORDER BY name").all() as Array<{
      name: string;
      rule: EnvRuleKind;
      value: string | null;
      changed_by: string;
      changed_at: number;
    }>;
    return rows.map((r) => ({
      name: r.name,
      rule: r.rule,
      ...(r.value !== null ? { value: r.value } : {}),
      changedBy: r.changed_by,
      changedAt: r.changed_at,
    }));
  }

  /** Set the one rule for a variable name (a name has at most one: allow, deny or set). */
  setEnv(name: string, rule: EnvRuleKind, by: string, value?: string): void {
    this.db
      .query(
        `INSERT INTO sandbox_env (name, rule, value, changed_by, changed_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name) DO UPDATE SET rule = excluded.rule, value = excluded.value, changed_by = excluded.changed_by, changed_at = excluded.changed_at`,
      )
      .run(name, rule, rule === "set" ? (value ?? "") : null, by, this.now());
  }

  /** Drop the rule for a name; false when there was none. */
  clearEnv(name: string): boolean {
    return this.db.query("DELETE FROM sandbox_env WHERE name = ?1").run(name).changes > 0;
  }

  presets(): string[] {
    return (this.db.query("SELECT name FROM sandbox_presets ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
  }

  /** Switch a preset on or off; returns whether anything changed. */
  setPreset(name: string, on: boolean, by: string): boolean {
    if (!on) return this.db.query("DELETE FROM sandbox_presets WHERE name = ?1").run(name).changes > 0;
    return this.db.query("INSERT OR IGNORE INTO sandbox_presets (name, enabled_by, enabled_at) VALUES (?1, ?2, ?3)").run(name, by, this.now()).changes > 0;
  }

  network(): boolean | undefined {
    const row = this.db.query("SELECT value FROM sandbox_settings WHERE key = 'network'").get() as { value: string } | null;
    return row ? row.value === "on" : undefined;
  }

  setNetwork(on: boolean, by: string): void {
    this.db
      .query(
        `INSERT INTO sandbox_settings (key, value, changed_by, changed_at) VALUES ('network', ?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, changed_by = excluded.changed_by, changed_at = excluded.changed_at`,
      )
      .run(on ? "on" : "off", by, this.now());
  }

  /** Whether the owner switched the changing and sending tools on for this shared chat. */
  sharedToolsOn(channel: string, chatId: string): boolean {
    return this.db.query("SELECT 1 FROM sandbox_shared_chats WHERE channel = ?1 AND chat_id = ?2").get(channel, chatId) !== null;
  }

  /** Switch them on or off for one shared chat; returns whether anything changed. */
  setSharedTools(channel: string, chatId: string, on: boolean, by: string): boolean {
    if (!on) return this.db.query("DELETE FROM sandbox_shared_chats WHERE channel = ?1 AND chat_id = ?2").run(channel, chatId).changes > 0;
    return (
      this.db
        .query("INSERT OR IGNORE INTO sandbox_shared_chats (channel, chat_id, enabled_by, enabled_at) VALUES (?1, ?2, ?3, ?4)")
        .run(channel, chatId, by, this.now()).changes > 0
    );
  }

  /** The shared chats that have them on, as `<channel>:<chat id>`. */
  sharedChats(): string[] {
    return (
      this.db.query("SELECT channel, chat_id FROM sandbox_shared_chats ORDER BY channel, chat_id").all() as Array<{ channel: string; chat_id: string }>
    ).map((r) => `${r.channel}:${r.chat_id}`);
  }
}
