/**
 * Where the HTTP server listens: `FERMIX_HTTP_BIND` and `PORT`, else the
 * config's `[fermix_core.http]` bind and port, else 127.0.0.1:4030; and
 * whether that address keeps it on this machine (loopback) or opens it to a
 * network, where its pages need the dashboard token (src/http/access.ts).
 */
import { isIPv4, isIPv6 } from "../kernel/ip.ts";
import { ConfigError } from "./errors.ts";
import type { Env } from "./load.ts";

export const DEFAULT_PORT = 4030;
export const DEFAULT_BIND = "127.0.0.1";

export interface HttpSettings {
  hostname: string;
  port: number;
}

/** The `[fermix_core.http]` keys, when a config is at hand. */
export interface HttpConfig {
  bind?: string | undefined;
  port?: number | undefined;
}

export function resolveHttp(env: Env, fromConfig: HttpConfig = {}): HttpSettings {
  const bind = env.FERMIX_HTTP_BIND?.trim() || fromConfig.bind || DEFAULT_BIND;
  const rawPort = env.PORT?.trim();
  if (rawPort === undefined || rawPort === "") return { hostname: bind, port: fromConfig.port ?? DEFAULT_PORT };
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || !Number.isInteger(port) || port > 65_535) {
    throw new ConfigError("the environment", [{ key: "PORT", value: rawPort, allowed: "an integer from 0 to 65535" }]);
  }
  return { hostname: bind, port };
}

/**
 * Whether a bind address is loopback only: 127.0.0.0/8, ::1 or localhost.
 * Anything else (0.0.0.0, ::, a LAN address, any other name, even one that
 * happens to resolve to 127.0.0.1) counts as reaching beyond this machine.
 */
export function isLoopbackBind(bind: string): boolean {
  const host = bind
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost" || host === "localhost.") return true;
  if (isIPv4(host)) return host.startsWith("127.");
  if (isIPv6(host)) return new URL(`http://[${host}]/`).hostname === "[::1]";
  return false;
}
