/**
 * What a channel declares for `fermix import openclaw` (src/setup/openclaw/):
 * how OpenClaw's section for the same platform — `channels.<name>` in
 * openclaw.json, one account's view of it — becomes this channel's keys,
 * how an OpenClaw allowlist entry becomes one of this channel's sender ids,
 * and how a cron job's delivery target becomes one of its chats. Each
 * channel's folder has its own `openclaw.ts` (read through its setup), so
 * the importer's shared steps never name a channel.
 *
 * Pure: the files and variables a section refers to are read through
 * `OpenClawSource`, which the importer hands in.
 */

/** What a channel's translation may read besides its section. */
export interface OpenClawSource {
  /**
   * A credential as OpenClaw writes one: a plain string (with `${VAR}`
   * substituted), or a SecretRef `{ source: "env", id }`; undefined when
   * absent or when it names something this import cannot read.
   */
  secret(value: unknown): string | undefined;
  /** A file the section names (a token file), `~` expanded; undefined when missing or unreadable. */
  readFile(path: string): string | undefined;
  /** A variable from OpenClaw's `env` block, its `.env`, or the shell running the import. */
  env(name: string): string | undefined;
}

/** Something OpenClaw had that does not carry over, and why. */
export interface OpenClawNote {
  what: string;
  why: string;
}

export interface OpenClawChannelImport {
  /** Keys of `[fermix_channels.<name>]`, credentials included (setup stores those as secrets). */
  values: Record<string, unknown>;
  /** Why the channel cannot be served from what OpenClaw has: its keys are imported and the channel is left off. */
  off?: string;
  skipped: OpenClawNote[];
  /** Steps left to the owner, one line each. */
  manual: string[];
}

/** Where a job's result goes on this channel. */
export interface OpenClawChat {
  chatId: string;
  threadId?: string;
}

export interface OpenClawChannel {
  /** The section (one account's keys, merged over the channel's shared ones) as this channel's keys. */
  translate(section: Readonly<Record<string, unknown>>, source: OpenClawSource): OpenClawChannelImport;
  /** An `allowFrom` entry as this channel's sender id; undefined when it names nobody Fermix can match (a username, a wildcard). */
  senderId(entry: string): string | undefined;
  /** A cron job's `delivery.to` as a chat here; a string says why it is not one. */
  chat(to: string): OpenClawChat | string;
  /** Whether a direct chat's id is the other person's own id: where a job without a target can reach the owner. */
  directChatIsSender: boolean;
}

/** A non-empty trimmed string at `key`, else undefined. */
export function textAt(section: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = section[key];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
