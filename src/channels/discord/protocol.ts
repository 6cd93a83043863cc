/**
 * Discord Gateway v10 rules, pure (Discord's developer docs, "Gateway"): the intents Fermix
 * identifies with, what a close code means — resume, identify anew, or stop
 * for good with a reason a person can act on — the jittered first heartbeat,
 * the wait after an Invalid Session, reconnect backoff, and how a frame off
 * the socket is read. The gateway client (gateway.ts) does the I/O.
 */
import type { GatewayIdentify, GatewayResume } from "discord-api-types/v10";
import { GatewayCloseCodes, GatewayIntentBits, GatewayOpcodes, GatewayVersion } from "./wire.ts";

/** Guilds, GuildMessages, DirectMessages and MessageContent: 37377. */
export const FERMIX_INTENTS = GatewayIntentBits.Guilds | GatewayIntentBits.GuildMessages | GatewayIntentBits.DirectMessages | GatewayIntentBits.MessageContent;

/**
 * The close code Fermix itself closes with when it means to resume (a zombie
 * connection, op 7, op 9 true, shutting down). Any code but 1000/1001 keeps
 * the session alive on Discord's side; 4200 is in the application range and
 * is not one Discord sends.
 */
export const RESUMABLE_CLOSE = 4200;

/** What to do after the socket closed. */
export type CloseAction = { kind: "resume" } | { kind: "identify" } | { kind: "stop"; reason: string };

const IDENTIFY_AGAIN = new Set<number>([
  GatewayCloseCodes.UnknownOpcode,
  GatewayCloseCodes.NotAuthenticated,
  GatewayCloseCodes.AlreadyAuthenticated,
  GatewayCloseCodes.InvalidSeq,
  GatewayCloseCodes.SessionTimedOut,
]);

/** The reasons behind the codes that end the adapter: each says what to change. */
const FATAL: Readonly<Record<number, string>> = {
  [GatewayCloseCodes.AuthenticationFailed]: "Discord rejected the bot token (close code 4004): set a valid bot_token (or DISCORD_BOT_TOKEN) and restart Fermix",
  [GatewayCloseCodes.InvalidShard]: "Discord rejected the shard Fermix identified with (close code 4010); Fermix runs one shard only",
  [GatewayCloseCodes.ShardingRequired]:
    "Discord requires sharding for this bot (close code 4011: it is in too many servers for one connection); Fermix runs one shard only",
  [GatewayCloseCodes.InvalidAPIVersion]: `Discord no longer accepts gateway v${GatewayVersion} (close code 4012): update Fermix`,
  [GatewayCloseCodes.InvalidIntents]: "Discord rejected the intents Fermix sent (close code 4013): update Fermix",
  [GatewayCloseCodes.DisallowedIntents]:
    "Discord refused a privileged intent (close code 4014): enable the Message Content intent for this bot in the Developer Portal (Bot → Privileged Gateway Intents), then restart Fermix",
};

/**
 * The close-code table: 4004 and 4010–4014 stop (no reconnect loop can fix
 * them); 4001, 4003, 4005, 4007 and 4009 need a new session; everything else
 * — 4000, 4002, 4008, a dropped connection (1006), a code we do not know — is
 * worth a resume, and Discord answers op 9 when it is not.
 */
export function closeAction(code: number): CloseAction {
  const fatal = FATAL[code];
  if (fatal) return { kind: "stop", reason: fatal };
  if (IDENTIFY_AGAIN.has(code)) return { kind: "identify" };
  return { kind: "resume" };
}

/** The first heartbeat waits `interval * jitter` (jitter in [0, 1)), so a fleet of clients does not beat in step. */
export function firstBeatDelay(intervalMs: number, random: () => number): number {
  return Math.floor(intervalMs * clamp01(random()));
}

/** After op 9 with d:false, Discord asks for a random wait of 1 to 5 seconds before a fresh Identify. */
export function invalidSessionDelay(random: () => number): number {
  return 1000 + Math.floor(4000 * clamp01(random()));
}

/** Reconnect backoff: exponential from `baseMs`, capped at `maxMs`, with jitter; never zero twice in a row. */
export interface Backoff {
  /** The ceiling of the first wait, in ms (default 1,000). */
  baseMs: number;
  /** The longest wait, in ms (default 60,000). */
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1000, maxMs: 60_000 };

/**
 * The wait before reconnect number `attempt` (0 = the first since the
 * connection was last healthy): anywhere up to `baseMs` for the first, then
 * between half and all of `baseMs * 2^attempt`, capped.
 */
export function reconnectDelay(attempt: number, backoff: Backoff, random: () => number): number {
  if (attempt <= 0) return Math.floor(backoff.baseMs * clamp01(random()));
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(ceiling * (0.5 + clamp01(random()) / 2));
}

/** The socket URL for a gateway URL from /gateway/bot or READY: `?v=10&encoding=json` added, nothing else changed. */
export function socketUrl(base: string): string {
  const url = new URL(base);
  if (url.pathname === "") url.pathname = "/";
  url.searchParams.set("v", GatewayVersion);
  url.searchParams.set("encoding", "json");
  return url.href;
}

/** The Identify payload: token, intents, and what Discord shows as the client. */
export function identifyPayload(token: string, platform: string): GatewayIdentify {
  return {
    op: GatewayOpcodes.Identify,
    d: { token, intents: FERMIX_INTENTS, properties: { os: platform, browser: "fermix", device: "fermix" } },
  };
}

/** The Resume payload for a stored session and the last sequence number Fermix has taken in. */
export function resumePayload(token: string, sessionId: string, seq: number | null): GatewayResume {
  // Discord's type says number; a session that never saw a dispatch resumes from 0.
  return { op: GatewayOpcodes.Resume, d: { token, session_id: sessionId, seq: seq ?? 0 } };
}

/** One frame off the socket, with the fields every payload has; null when it is not one. */
export interface Frame {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

/** Read a text frame; anything that is not a JSON object with a numeric `op` is null (and skipped). */
export function parseFrame(text: unknown): Frame | null {
  if (typeof text !== "string") return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const frame = value as Record<string, unknown>;
  if (typeof frame.op !== "number" || !Number.isInteger(frame.op)) return null;
  const s = typeof frame.s === "number" && Number.isSafeInteger(frame.s) && frame.s >= 0 ? frame.s : null;
  const t = typeof frame.t === "string" && frame.t.length > 0 ? frame.t : null;
  return { op: frame.op, d: frame.d, s, t };
}

/** The heartbeat interval from a Hello's `d`, in ms; null when it is missing or absurd. */
export function helloInterval(d: unknown): number | null {
  const interval = (d as { heartbeat_interval?: unknown } | null)?.heartbeat_interval;
  return typeof interval === "number" && Number.isFinite(interval) && interval > 0 && interval <= 10 * 60_000 ? interval : null;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(Math.max(x, 0), 0.999999) : 0;
}
