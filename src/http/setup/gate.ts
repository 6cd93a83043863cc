/**
 * The gate in front of the web setup wizard. A one-time launch token (`?t=`)
 * opens a session cookie; anything else is refused with 403 before any setup
 * code runs, so an anonymous caller on the network cannot reconfigure Fermix.
 */
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";

const SESSION_COOKIE = "fermix_setup";
const TOKEN_TTL_MS = 15 * 60_000;
const SESSION_TTL_MS = 60 * 60_000;

function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** One-time launch tokens and the sessions they open. */
export class SetupGate {
  private readonly tokens = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A fresh launch token, valid once within its TTL. */
  issueToken(ttlMs = TOKEN_TTL_MS): string {
    const token = randomToken();
    this.tokens.set(token, this.now() + ttlMs);
    return token;
  }

  /** Spend a launch token: returns a new session id, or undefined when the token is not valid. */
  redeem(token: string): string | undefined {
    for (const [candidate, expires] of this.tokens) {
      if (!sameSecret(candidate, token)) continue;
      this.tokens.delete(candidate);
      if (expires < this.now()) return undefined;
      const session = randomToken();
      this.sessions.set(session, this.now() + SESSION_TTL_MS);
      return session;
    }
    return undefined;
  }

  hasSession(session: string | undefined): boolean {
    if (!session) return false;
    for (const [candidate, expires] of this.sessions) {
      if (sameSecret(candidate, session)) return expires >= this.now();
    }
    return false;
  }
}

const forbidden = () =>
  new Response("setup authorization required\n", {
    status: 403,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });

function sessionFrom(cookieHeader: string | null): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === SESSION_COOKIE) return rest.join("=");
  }
  return undefined;
}

export function setupRoutes(gate: SetupGate) {
  return new Elysia({ name: "setup", precompile: true }).all("/setup", ({ request, query }) => {
    const fromCookie = sessionFrom(request.headers.get("cookie"));
    let setCookie: string | undefined;
    if (!gate.hasSession(fromCookie)) {
      const session = typeof query.t === "string" ? gate.redeem(query.t) : undefined;
      if (!session) return forbidden();
      setCookie = `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/setup; Max-Age=${SESSION_TTL_MS / 1000}`;
    }
    const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" };
    if (setCookie) headers["set-cookie"] = setCookie;
    return new Response(
      "<!doctype html><title>Fermix setup</title><p>The web setup wizard is not available in this build yet. Run <code>fermix setup</code> in a terminal.</p>\n",
      { status: 200, headers },
    );
  });
}
