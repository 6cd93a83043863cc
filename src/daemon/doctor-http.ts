/**
 * `fermix doctor`'s row for where the HTTP server listens, when that is
 * beyond loopback: the status page, `/events`, `/metrics` and the health
 * report then need the dashboard token (src/http/access.ts), and the owner
 * should know before starting. Nothing on loopback (the port row says where).
 */
import { type HttpConfig, isLoopbackBind, resolveHttp } from "../config/http.ts";
import type { Env } from "../config/load.ts";

export interface HttpDoctorRow {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

/** A warning when the bind reaches beyond this machine; undefined on loopback, or when PORT is invalid (the port row says so). */
export function bindDoctorRow(env: Env, fromConfig: HttpConfig): HttpDoctorRow | undefined {
  let hostname: string;
  try {
    hostname = resolveHttp(env, fromConfig).hostname;
  } catch {
    return undefined;
  }
  if (isLoopbackBind(hostname)) return undefined;
  return {
    check: "http bind",
    status: "warn",
    detail:
      `${hostname} reaches beyond this machine: the status page, /events, /metrics and the health report need the dashboard token ` +
      "(`fermix run` prints a link with it; scrapers send Authorization: Bearer <token>, and [fermix_core.http] dashboard_token sets a fixed one). " +
      "Webhooks stay open (they are signed). Put a TLS reverse proxy in front.",
  };
}
