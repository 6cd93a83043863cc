/**
 * `[fermix_core.realtime]` resolved: which provider's realtime API a voice
 * session talks to, at which WebSocket address, with which model and voice.
 * The provider must be an OpenAI-kind one (its `api` is `responses` or
 * `chat`): the realtime wire is OpenAI's. Its endpoint is the provider's
 * `base_url` with the ws/wss scheme and `/realtime` appended, the model in
 * the query (`?model=…`). The loader refuses any other kind with an error
 * naming the key, so a daemon never starts on a voice setting it cannot use.
 */
import type { ConfigIssue } from "./errors.ts";
import type { Config, PROVIDER_APIS, ProviderConfig } from "./schema.ts";

/** What a voice session needs of the config in force. */
export interface RealtimeSettings {
  /** The provider's table name. */
  provider: string;
  /** `wss://…/realtime?model=…` (ws:// for an http base_url). */
  url: string;
  apiKey?: string;
  model: string;
  voice: string;
  instructionsExtra: string;
  maxSessionMs: number;
}

/** The provider APIs that are OpenAI's kind (its realtime API beside them): not Anthropic's. */
const OPENAI_KINDS: readonly string[] = ["responses", "chat"] satisfies readonly (typeof PROVIDER_APIS)[number][];

/** The provider a voice session uses: the one named, else the primary; undefined when there is none. */
export function realtimeProviderName(config: Config): string | undefined {
  const named = config.fermix_core.realtime.provider;
  if (named !== undefined) return named;
  const providers = Object.entries(config.fermix_core.providers);
  return (providers.find(([, p]) => p.primary === true) ?? providers[0])?.[0];
}

/** The realtime endpoint of a provider: its base_url with ws/wss and `/realtime`, the model in the query. */
export function realtimeUrl(provider: Pick<ProviderConfig, "base_url">, model: string): string {
  const url = new URL(provider.base_url);
  url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/realtime`;
  url.searchParams.set("model", model);
  return url.href;
}

/** The settings of a voice session, or undefined when realtime is off or names no usable provider. */
export function realtimeSettings(config: Config): RealtimeSettings | undefined {
  const section = config.fermix_core.realtime;
  if (!section.enabled) return undefined;
  const name = realtimeProviderName(config);
  const provider = name === undefined ? undefined : config.fermix_core.providers[name];
  if (name === undefined || provider === undefined || !OPENAI_KINDS.includes(provider.api ?? "responses")) return undefined;
  return {
    provider: name,
    url: realtimeUrl(provider, section.model),
    ...(provider.api_key ? { apiKey: provider.api_key } : {}),
    model: section.model,
    voice: section.voice,
    instructionsExtra: section.instructions_extra,
    maxSessionMs: section.max_session_minutes * 60_000,
  };
}

/**
 * What is wrong with `[fermix_core.realtime]` in a config the schema
 * accepted: a provider that is not configured, or not of an OpenAI kind.
 * Checked only while realtime is enabled; with no provider at all, setup is
 * required anyway and nothing is said here.
 */
export function realtimeIssues(config: Config): ConfigIssue[] {
  const section = config.fermix_core.realtime;
  if (!section.enabled) return [];
  const names = Object.keys(config.fermix_core.providers);
  const name = realtimeProviderName(config);
  if (name === undefined) return [];
  const provider = config.fermix_core.providers[name];
  const kinds = `an OpenAI-kind provider (api ${OPENAI_KINDS.join(" or ")})`;
  if (provider === undefined) {
    return [{ key: "fermix_core.realtime.provider", value: name, allowed: `the name of a configured provider (${names.join(", ")}), ${kinds}` }];
  }
  const api = provider.api ?? "responses";
  if (!OPENAI_KINDS.includes(api)) {
    const how = section.provider === undefined ? "the primary provider" : `provider ${name}`;
    return [{ key: "fermix_core.realtime.provider", value: name, allowed: `${kinds}: ${how} has api ${api}` }];
  }
  return [];
}
