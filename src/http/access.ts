/**
 * Who may ask the HTTP server what: one check before any route runs.
 *
 * - **The Host header.** Pages (`/`, `/setup`, `/talk`), `/events`, `/metrics` and
 *   the health probes answer only to an IP address (a DNS name cannot be
 *   one), a loopback name (`localhost`, `*.localhost`) or a name in
 *   `[fermix_core.http] allowed_hosts`; any other name is 421, and so is a
 *   request with no Host. A DNS-rebinding page (a name of the attacker's,
 *   made to resolve to 127.0.0.1) sends its own name, so it reads nothing.
 * - **The dashboard token**, when the server listens beyond loopback: the
 *   status page, the Talk page and its WebSocket, `/events`, `/metrics` and
 *   the health report need it, as a
 *   cookie (set by opening `/?token=…` once) or `Authorization: Bearer …`;
 *   without it, 401.
 *
 * Webhooks (`/webhook/…`) are signed and pass both: platforms reach them
 * through the owner's proxy under any name. `/health/live` needs no token
 * (a liveness probe); `/setup` has its own one-time gate
 * (src/http/setup/gate.ts).
 */
import { createHash } from "node:crypto";
import { hostNameKey, isHostName } from "../config/hostname.ts";
import { isIPv4, isIPv6 } from "../kernel/ip.ts";
import { cookieValue, overHttps } from "./cookies.ts";
import { jsonResponse } from "./health.ts";
import { sameSecret } from "./setup/gate.ts";

export const DASHBOARD_COOKIE = "fermix_dashboard";
/** How long the dashboard cookie lasts in the browser (a start token stops opening anything when fermix stops anyway). */
const COOKIE_MAX_AGE_SECONDS = 30 * 24 * 3600;

/** What the composition root hands the app: read per request, so a reload applies. */
export interface AccessPolicy {
  /** `[fermix_core.http] allowed_hosts`: names answered besides IP addresses and loopback names. */
  allowedHosts(): readonly string[];
  /**
   * The tokens that open the status page, `/events`, `/metrics` and the
   * health report. Present only when the server listens beyond loopback;
   * absent, none is asked for.
   */
  dashboardTokens?(): readonly string[];
}

/** What a route asks of a request: nothing (signed webhooks), an allowed Host, or an allowed Host and the dashboard token. */
export type RouteGate = "open" | "host" | "token";

/** The gate in front of `path`. Anything not named here (unknown paths too) asks for the most. */
export function gateFor(path: string): RouteGate {
  if (path.startsWith("/webhook/")) return "open";
  if (path === "/health/live" || path === "/setup" || path.startsWith("/setup/")) return "host";
  return "token";
}

/**
 * Whether a Host header names this server as a browser on this machine or
 * the owner's own names would: an IPv4 address, an IPv6 address in
 * brackets, `localhost` or a name under it, or a name in `allowed` (any
 * port, any case, a trailing dot ignored). A missing or malformed Host is
 * refused.
 */
export function hostAllowed(host: string | null | undefined, allowed: readonly string[]): boolean {
  const name = hostPart(host ?? "");
  if (name === undefined) return false;
  if (name.startsWith("[")) return isIPv6(name.slice(1, -1));
  if (isIPv4(name)) return true;
  if (!isHostName(name)) return false;
  const key = hostNameKey(name);
  if (key === "localhost" || key.endsWith(".localhost")) return true;
  return allowed.some((entry) => hostNameKey(entry) === key);
}

/** The host of a Host header without its port; undefined when it is not `host[:port]` or `[v6][:port]`. */
function hostPart(header: string): string | undefined {
  const match = /^(\[[^\]\s]+\]|[^\s:[\]/@,]+)(?::\d{1,5})?$/.exec(header.trim());
  return match?.[1];
}

/**
 * The router (Elysia) looks for the path from the URL's twelfth character
 * on, which is right only when the authority has four characters or more;
 * Bun builds the URL from the Host header. Where the two would read
 * different paths, a request could be judged by one path and served by
 * another: `serveHttp` rebuilds such a URL (src/http/server.ts), and the
 * check below refuses any that reaches the app anyway.
 */
const ROUTER_PATH_FROM = 11;

/** Where the path of `url` starts: 0 for a bare path, -1 when there is none. */
function pathStart(url: string): number {
  if (url.startsWith("/")) return 0;
  const scheme = url.indexOf("://");
  return scheme < 0 ? -1 : url.indexOf("/", scheme + 3);
}

/** Whether the router reads the same path from `url` as the URL holds. */
export function routerReadsPath(url: string): boolean {
  return pathStart(url) === url.indexOf("/", ROUTER_PATH_FROM);
}

/** The path and query of `url` (a bare path is returned as it is). */
export function pathAndQuery(url: string): string {
  const start = pathStart(url);
  return start < 0 ? "/" : url.slice(start);
}

/** The path of `url`, without its query or fragment. */
export const pathOf = (url: string) => {
  const rest = pathAndQuery(url);
  const end = rest.search(/[?#]/);
  return end < 0 ? rest : rest.slice(0, end);
};

/** The Host a request was sent to: its header, else (a request made in-process, as tests do) its URL's. */
function requestHost(request: Request): string | undefined {
  const header = request.headers.get("host");
  if (header !== null) return header;
  try {
    return new URL(request.url).host;
  } catch {
    return undefined;
  }
}

const misdirected = () =>
  jsonResponse({ error: "Misdirected Request", hint: "this server does not answer to that host name: add it to [fermix_core.http] allowed_hosts" }, 421);

function unauthorized(): Response {
  const response = jsonResponse(
    { error: "Unauthorized", hint: "open the dashboard link `fermix run` printed (it sets a cookie), or send Authorization: Bearer <token>" },
    401,
  );
  response.headers.set("www-authenticate", 'Bearer realm="fermix"');
  return response;
}

/** A token as the cookie carries it: hashed, so the cookie is never the token itself and always cookie-safe. */
function cookieDigest(token: string): string {
  return createHash("sha256").update(`fermix dashboard\0${token}`).digest("base64url");
}

/** Whether `digest` is the digest of one of `tokens`, in constant time (every token is compared, each at one length). */
function isDigestOf(digest: string, tokens: readonly string[]): boolean {
  let found = false;
  for (const token of tokens) found = sameSecret(digest, cookieDigest(token)) || found;
  return found;
}

const isToken = (candidate: string, tokens: readonly string[]) => isDigestOf(cookieDigest(candidate), tokens);

/** Whether the request carries a token: `Authorization: Bearer`, or the cookie a token link set. */
function hasDashboardToken(request: Request, tokens: readonly string[]): boolean {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (bearer !== undefined && isToken(bearer, tokens)) return true;
  const cookie = cookieValue(request.headers.get("cookie"), DASHBOARD_COOKIE);
  return cookie !== undefined && isDigestOf(cookie, tokens);
}

/**
 * `GET …?token=<token>`: a valid token becomes an HttpOnly, SameSite=Strict
 * cookie and the browser is sent to the same address without it (out of the
 * address bar and history); a wrong one is 401.
 */
function redeemLink(request: Request, token: string, tokens: readonly string[]): Response {
  if (!isToken(token, tokens)) return unauthorized();
  const target = new URL(pathAndQuery(request.url), "http://fermix.invalid");
  target.searchParams.delete("token");
  const cookie = `${DASHBOARD_COOKIE}=${cookieDigest(token)}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${COOKIE_MAX_AGE_SECONDS}${overHttps(request) ? "; Secure" : ""}`;
  return new Response(null, {
    status: 303,
    headers: { location: `${target.pathname}${target.search}`, "set-cookie": cookie, "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}

/** The answer for a request the policy refuses (400, 421, 401, or the 303 of a token link), or undefined to let its route run. */
export function checkAccess(request: Request, policy: AccessPolicy): Response | undefined {
  if (!routerReadsPath(request.url)) return jsonResponse({ error: "Bad Request" }, 400);
  const gate = gateFor(pathOf(request.url));
  if (gate === "open") return undefined;
  if (!hostAllowed(requestHost(request), policy.allowedHosts())) return misdirected();
  if (gate === "host" || !policy.dashboardTokens) return undefined;
  const tokens = policy.dashboardTokens();
  const query = pathAndQuery(request.url).includes("token=") ? new URL(pathAndQuery(request.url), "http://fermix.invalid").searchParams.get("token") : null;
  if (query !== null && request.method === "GET") return redeemLink(request, query, tokens);
  return hasDashboardToken(request, tokens) ? undefined : unauthorized();
}
