/**
 * What the web tools may reach, judged from config alone: the hosts
 * web_fetch may reach although they are private, its limits, and where
 * web_search sends a query with which key. The daemon builds the tools from
 * this and `fermix doctor` reports it, so they never disagree.
 */
import type { Config } from "./schema.ts";

export type SearchSettings =
  | { kind: "off" }
  /** A backend is chosen but cannot be used: web_search is not offered, and doctor says why. */
  | { kind: "unusable"; backend: "brave"; why: string }
  | { kind: "brave"; url: string; apiKey: string }
  | { kind: "searxng"; url: string };

export interface WebSettings {
  /** Host names and IP addresses (lower case, IPv6 without brackets) web_fetch may reach although they are not public. */
  allowHosts: readonly string[];
  /** One fetch's deadline, redirects and body included (ms). */
  timeoutMs: number;
  /** At most this many bytes of a body are read. */
  maxBytes: number;
  search: SearchSettings;
}

/** The web tools' settings in `config`. */
export function webSettings(config: Config): WebSettings {
  const web = config.fermix_core.web;
  return {
    allowHosts: web.allow_hosts.map((host) =>
      host
        .toLowerCase()
        .replace(/^\[(.*)\]$/, "$1")
        .replace(/\.$/, ""),
    ),
    timeoutMs: web.fetch_timeout_seconds * 1000,
    maxBytes: web.fetch_max_bytes,
    search: searchSettings(config),
  };
}

function searchSettings(config: Config): SearchSettings {
  const web = config.fermix_core.web;
  switch (web.search_backend) {
    case "":
      return { kind: "off" };
    case "brave":
      if (!web.brave_api_key) return { kind: "unusable", backend: "brave", why: "no brave_api_key (set it with fermix setup or BRAVE_API_KEY)" };
      return { kind: "brave", url: web.brave_url, apiKey: web.brave_api_key };
    case "searxng":
      // The loader refuses searxng without a URL (src/config/load.ts), so it is always there.
      return { kind: "searxng", url: web.searxng_url! };
  }
}
