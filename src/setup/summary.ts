/**
 * What is configured now, in words, per setup step: each step of the wizard
 * (and of the web page) shows it before asking. Secrets appear only as "set".
 */
import { profileOf } from "../channels/registry.ts";
import { channelReadiness } from "../config/channels.ts";
import { resolveHttp } from "../config/http.ts";
import type { Env } from "../config/load.ts";
import { realtimeProviderName } from "../config/realtime.ts";
import type { Config } from "../config/schema.ts";
import type { SetupChannel } from "./fields.ts";

export function describeProvider(config: Config): string {
  const entries = Object.entries(config.fermix_core.providers);
  const primary = entries.find(([, p]) => p.primary) ?? entries[0];
  if (!primary) return "none configured";
  const [name, p] = primary;
  const key = p.api_key ? "key set" : "no key";
  const { fallback } = config.fermix_core;
  const spare = entries.length - 1 - fallback.length;
  const others = [
    ...(fallback.length > 0 ? [`fallback ${fallback.join(", then ")}`] : []),
    ...(spare > 0 ? [`${spare} more provider${spare > 1 ? "s" : ""}`] : []),
  ]
    .map((part) => `; ${part}`)
    .join("");
  return `${name}: ${p.model} at ${p.base_url} (${p.api ?? "responses"}, ${key}, vision ${p.vision ? "on" : "off"})${others}`;
}

export function describeChannel(config: Config, name: SetupChannel): string {
  const profile = profileOf(name);
  const readiness = channelReadiness(config, name, profile);
  if (readiness.kind === "disabled") return "off";
  const section = config.fermix_channels[name] as Record<string, unknown>;
  const owner = typeof section.owner_user_id === "string" ? `owner ${section.owner_user_id}` : undefined;
  const allowed = profile.allowlistKey === undefined ? [] : ((section[profile.allowlistKey] as string[] | undefined) ?? []);
  const who = [owner, allowed.length > 0 ? `${allowed.length} allowed` : undefined].filter(Boolean).join(", ");
  if (readiness.kind === "unconfigured") return `on, but missing ${readiness.missing.join(", ")}${who ? ` (${who})` : ""}`;
  if (readiness.kind === "refused") return "on, but nobody may talk to it (no owner or allowlist)";
  return `on, ${who}`;
}

export function describeTranscription(config: Config): string {
  const t = config.fermix_core.transcription;
  if (!t.backend && !t.model && !t.api_key) return "not set up (voice notes use openai with the openai provider's key, if any)";
  return `${t.backend ?? "openai"}${t.model ? `, ${t.model}` : ""}, ${t.api_key ? "key set" : "no key of its own"}`;
}

export function describeRealtime(config: Config): string {
  const r = config.fermix_core.realtime;
  if (!r.enabled) return "off";
  const provider = realtimeProviderName(config) ?? "no provider yet";
  return `on: ${provider}, ${r.model}, voice ${r.voice}`;
}

export function describeWebSearch(config: Config): string {
  const web = config.fermix_core.web;
  switch (web.search_backend) {
    case "":
      return "off (web_fetch still reads the links you send)";
    case "brave":
      return `Brave Search API, ${web.brave_api_key ? "key set" : "no key yet"}`;
    case "searxng":
      return `SearXNG at ${web.searxng_url}`;
  }
}

export function describeComputer(config: Config): string {
  const c = config.fermix_core.computer;
  if (!c.enabled) return "off";
  return c.display === "virtual" ? `on, a virtual display ${c.width}×${c.height}` : "on, this machine's display (DISPLAY)";
}

/** Where a webhook channel's platform must send events (its route, `path`): the local address, and the public one to register. */
export function webhookHint(config: Config, env: Env, path: string): string {
  const { hostname, port } = resolveHttp(env, config.fermix_core.http);
  return (
    `Register https://<your public host>${path} with the platform, served by a TLS reverse proxy ` +
    `that forwards to http://${hostname}:${port}${path}. ` +
    `The daemon listens on ${hostname}; set FERMIX_HTTP_BIND (or [fermix_core.http] bind) to an address the proxy reaches.`
  );
}
