/**
 * The gate in front of the web setup wizard. A one-time launch token
 * (`?t=`, printed by `fermix run` when setup is required and by
 * `fermix setup --web`) is spent once, within its lifetime, for a session
 * cookie; anything else is refused with 403 before any setup code runs, so
 * an anonymous caller on the network cannot reconfigure Fermix. Each
 * session carries the CSRF token its forms must send back, and ends when
 * the wizard finishes.
 */
import { timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "fermix_setup";
/** A launch token's lifetime when none is configured (`[fermix_core.http] token_ttl_seconds`). */
export const TOKEN_TTL_MS = 15 * 60_000;
export const SESSION_TTL_MS = 60 * 60_000;

/** `bytes` random bytes (24 unless given) as base64url: a launch token, a session id, a dashboard token. */
export function randomToken(bytes = 24): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

/** Compare two secrets in constant time (for equal lengths). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export interface SetupSession {
  id: string;
  /** Sent back by every form of this session. */
  csrf: string;
  expires: number;
}

export interface SetupGateOptions {
  now?: () => number;
  /** A launch token's lifetime in ms, read when a token is issued (the config in force may change). */
  tokenTtlMs?: () => number;
}

/** One-time launch tokens and the sessions they open. */
export class SetupGate {
  private readonly tokens = new Map<string, number>();
  private readonly sessions = new Map<string, SetupSession>();
  private readonly now: () => number;
  private readonly tokenTtlMs: () => number;

  constructor(options: SetupGateOptions | (() => number) = {}) {
    const opts = typeof options === "function" ? { now: options } : options;
    this.now = opts.now ?? Date.now;
    this.tokenTtlMs = opts.tokenTtlMs ?? (() => TOKEN_TTL_MS);
  }

  /** A fresh launch token, valid once within its lifetime (`ttlMs`, else the configured one). */
  issueToken(ttlMs = this.tokenTtlMs()): string {
    this.forgetExpired();
    const token = randomToken();
    this.tokens.set(token, this.now() + ttlMs);
    return token;
  }

  /** How long a token issued now stays valid, in ms. */
  tokenLifetimeMs(): number {
    return this.tokenTtlMs();
  }

  /** Spend a launch token: a new session, or undefined when the token is unknown, used or expired. */
  redeem(token: string): SetupSession | undefined {
    for (const [candidate, expires] of this.tokens) {
      if (!sameSecret(candidate, token)) continue;
      this.tokens.delete(candidate);
      if (expires < this.now()) return undefined;
      const session = { id: randomToken(), csrf: randomToken(), expires: this.now() + SESSION_TTL_MS };
      this.sessions.set(session.id, session);
      return session;
    }
    return undefined;
  }

  /** The live session with this id, if any. */
  session(id: string | undefined): SetupSession | undefined {
    if (!id) return undefined;
    for (const [candidate, session] of this.sessions) {
      if (!sameSecret(candidate, id)) continue;
      if (session.expires >= this.now()) return session;
      this.sessions.delete(candidate);
      return undefined;
    }
    return undefined;
  }

  hasSession(id: string | undefined): boolean {
    return this.session(id) !== undefined;
  }

  /** The wizard finished (or was abandoned): the session's cookie opens nothing any more. */
  end(id: string): void {
    this.sessions.delete(id);
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [token, expires] of this.tokens) if (expires < now) this.tokens.delete(token);
    for (const [id, session] of this.sessions) if (session.expires < now) this.sessions.delete(id);
  }
}
