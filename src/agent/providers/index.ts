/**
 * The provider registry: one factory per wire format, picked by `api` in the
 * provider's config. Adding a wire format is one file and one line here.
 */
import type { ProviderConfig } from "../../config/schema.ts";
import { anthropicProvider } from "./anthropic.ts";
import { chatProvider } from "./chat.ts";
import { type ResponsesOptions, responsesProvider } from "./responses.ts";
import type { Provider, ProviderSettings } from "./types.ts";

export type { HttpDeps, HttpLimits } from "./http.ts";
export { DEFAULT_LIMITS } from "./http.ts";
export type { ReasoningSummary } from "./responses.ts";
export * from "./types.ts";

/** Everything a provider may be given besides its config: injected I/O, limits, and per-format options. */
export type ProviderDeps = ResponsesOptions;

type Api = NonNullable<ProviderConfig["api"]>;
type Factory = (name: string, config: ProviderSettings, deps: ProviderDeps) => Provider;

const FACTORIES: Record<Api, Factory> = {
  responses: responsesProvider,
  chat: chatProvider,
  anthropic: anthropicProvider,
};

/** Build the provider `name` for its config; `api` defaults to "responses", as in config loading. */
export function createProvider(name: string, config: ProviderSettings, deps: ProviderDeps = {}): Provider {
  // The config's timeouts, unless the caller (a test) sets its own.
  const limits = {
    ...(config.connect_timeout_ms !== undefined ? { connectTimeoutMs: config.connect_timeout_ms } : {}),
    ...(config.first_byte_timeout_ms !== undefined ? { firstByteTimeoutMs: config.first_byte_timeout_ms } : {}),
    ...(config.idle_timeout_ms !== undefined ? { idleTimeoutMs: config.idle_timeout_ms } : {}),
    ...deps.limits,
  };
  return FACTORIES[config.api ?? "responses"](name, config, { ...deps, limits });
}
