/**
 * Fetching a URL from the daemon without letting it reach what only the
 * daemon can reach. web_fetch runs in the daemon, not in the command
 * sandbox, so these checks are its boundary:
 *
 * - http and https only, no user name or password in the URL;
 * - the host is resolved here, once per hop, and every address it resolves
 *   to must be public (./address.ts) unless the host is listed in
 *   `[fermix_core.web] allow_hosts`; a name with one private answer among
 *   public ones is refused whole;
 * - the connection goes to the address that was checked: the request is
 *   made to the IP address itself, with the Host header set to the name and,
 *   for https, TLS's server name (SNI) and certificate check set to the name
 *   too. Nothing resolves the name a second time, so a DNS answer that
 *   changes between the check and the connection (DNS rebinding) cannot
 *   slip in;
 * - redirects are not followed by fetch: each Location is judged like the
 *   first URL, at most `maxRedirects` times;
 * - the body is read up to `maxBytes` (after decompression) and the rest is
 *   never downloaded; the whole fetch has one deadline.
 */
import { describeError } from "../../../kernel/errors.ts";
import { ipFamily } from "../../../kernel/ip.ts";
import { VERSION } from "../../../version.ts";
import { ToolError } from "../errors.ts";
import { isAddress, kindWords, nonPublicKind } from "./address.ts";

/** A URL web_fetch will not reach: the model is told why, and nothing was connected to. */
export class WebRefused extends ToolError {
  override name = "WebRefused";
}

/** Every address a host name resolves to. */
export type Resolver = (host: string) => Promise<string[]>;

/** Where one request goes: the checked address, and the name it is asked for. */
export interface Target {
  /** The URL as asked, for messages and for resolving a relative Location. */
  url: URL;
  /** The same URL with the checked IP address as its host: what is connected to. */
  connectUrl: URL;
  /** The Host header: the URL's host and port as asked. */
  host: string;
  /** For https to a name: the TLS server name and the name the certificate must carry. */
  serverName?: string;
  address: string;
}

/** Makes one request to a checked target, following no redirect. */
export type Transport = (target: Target, init: { headers: Record<string, string>; signal: AbortSignal }) => Promise<Response>;

export interface ReachPolicy {
  /** Hosts (names or addresses, lower case, IPv6 without brackets) that may be private. */
  allowHosts: readonly string[];
  resolve?: Resolver;
}

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every answer. */
export const systemResolver: Resolver = async (host) => {
  // Loaded at the first lookup: node:dns costs an idle daemon memory it would spend on nothing (docs/performance.md).
  const { lookup } = await import("node:dns/promises");
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
};

/**
 * Bun's fetch to the checked address: the Host header and TLS's server name
 * (SNI, and the name the certificate is verified against) set to the name
 * asked for. `ca` adds a trusted certificate authority (tests).
 */
export function bunTransport(options: { ca?: string } = {}): Transport {
  return (target, init) =>
    fetch(target.connectUrl, {
      method: "GET",
      headers: { ...init.headers, host: target.host },
      redirect: "manual",
      signal: init.signal,
      ...(target.serverName || options.ca
        ? { tls: { ...(target.serverName ? { serverName: target.serverName } : {}), ...(options.ca ? { ca: options.ca } : {}) } }
        : {}),
    });
}

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();

/** Where `url` may be connected to, or a WebRefused saying why not. */
export async function reach(url: URL, policy: ReachPolicy): Promise<Target> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new WebRefused(`only http and https URLs are fetched, not ${url.protocol}`);
  if (url.username !== "" || url.password !== "") throw new WebRefused("a URL with a user name or password in it is not fetched");
  const host = bare(url.hostname).replace(/\.$/, "");
  const allowed = policy.allowHosts.includes(host);
  let addresses: string[];
  if (isAddress(host)) addresses = [host];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch (error) {
      throw new ToolError(`${host} could not be resolved (${describeError(error)})`);
    }
    if (addresses.length === 0) throw new ToolError(`${host} has no address`);
  }
  if (!allowed) {
    for (const address of addresses) {
      const kind = nonPublicKind(address);
      if (!kind) continue;
      const what = address === host ? `${host} is ${kindWords(kind)}` : `${host} resolves to ${address}, ${kindWords(kind)}`;
      throw new WebRefused(
        `${what}: web_fetch reaches only public addresses (the owner can allow a host of their own network in [fermix_core.web] allow_hosts)`,
      );
    }
  }
  const address = addresses[0]!;
  const connectUrl = new URL(url.href);
  connectUrl.hostname = ipFamily(address) === 6 ? `[${address}]` : address;
  return {
    url,
    connectUrl,
    host: url.host,
    address,
    ...(url.protocol === "https:" && !isAddress(host) ? { serverName: host } : {}),
  };
}

export interface FetchLimits {
  maxBytes: number;
  maxRedirects: number;
  timeoutMs: number;
}

/** What came back, read within the limits. */
export interface Fetched {
  /** The URL asked for first. */
  requested: URL;
  /** Where the body came from, after redirects. */
  finalUrl: URL;
  status: number;
  /** The Content-Type header, lower case ("" when absent). */
  contentType: string;
  body: Uint8Array;
  /** The body was longer than maxBytes; only the first maxBytes were read. */
  cut: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const HEADERS = {
  "user-agent": `Fermix/${VERSION} (web_fetch; a personal assistant reading a page its owner asked about)`,
  accept: "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
};

/** GET `url` within the reach policy and the limits, following redirects one checked hop at a time. */
export async function guardedFetch(url: URL, limits: FetchLimits, policy: ReachPolicy & { transport?: Transport; signal?: AbortSignal }): Promise<Fetched> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const signal = policy.signal ? AbortSignal.any([policy.signal, deadline]) : deadline;
  const transport = policy.transport ?? bunTransport();
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      const target = await reach(current, policy);
      let response: Response;
      try {
        response = await transport(target, { headers: HEADERS, signal });
      } catch (error) {
        if (signal.aborted) throw error;
        throw new ToolError(`could not fetch ${current.href}: ${describeError(error)}`);
      }
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location !== null) {
        await response.body?.cancel();
        if (hop >= limits.maxRedirects) throw new ToolError(`${url.href} redirected more than ${limits.maxRedirects} times; stopped at ${current.href}`);
        try {
          current = new URL(location, current);
        } catch {
          throw new ToolError(`${current.href} redirected to something that is not a URL`);
        }
        continue;
      }
      const { body, cut } = await readLimited(response, limits.maxBytes);
      return {
        requested: url,
        finalUrl: current,
        status: response.status,
        contentType: (response.headers.get("content-type") ?? "").toLowerCase(),
        body,
        cut,
      };
    }
  } catch (error) {
    if (deadline.aborted && !policy.signal?.aborted) throw new ToolError(`${url.href} did not answer within ${Math.round(limits.timeoutMs / 1000)} s`);
    throw error;
  }
}

/** At most `maxBytes` of the body; the rest is not downloaded. */
async function readLimited(response: Response, maxBytes: number): Promise<{ body: Uint8Array; cut: boolean }> {
  if (!response.body) return { body: new Uint8Array(), cut: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - length;
    if (value.length > room) {
      chunks.push(value.subarray(0, room));
      length += room;
      cut = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    length += value.length;
  }
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return { body, cut };
}
