/** Where the HTTP server listens: `FERMIX_HTTP_BIND` (default 127.0.0.1) and `PORT` (default 4030). */
import { ConfigError } from "./errors.ts";
import type { Env } from "./load.ts";

export const DEFAULT_PORT = 4030;
export const DEFAULT_BIND = "127.0.0.1";

export interface HttpSettings {
  hostname: string;
  port: number;
}

export function resolveHttp(env: Env): HttpSettings {
  const bind = env.FERMIX_HTTP_BIND?.trim() || DEFAULT_BIND;
  const rawPort = env.PORT?.trim();
  if (rawPort === undefined || rawPort === "") return { hostname: bind, port: DEFAULT_PORT };
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || !Number.isInteger(port) || port > 65_535) {
    throw new ConfigError("the environment", [{ key: "PORT", value: rawPort, allowed: "an integer from 0 to 65535" }]);
  }
  return { hostname: bind, port };
}
