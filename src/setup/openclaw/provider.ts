/**
 * The primary model (`agents.defaults.model`, `"provider/model"` or an
 * alias) and its provider as a Fermix provider, made primary through the
 * same step as `fermix setup` (providerChanges). The provider's base URL and
 * wire format come from `models.providers.<id>` when the config has one,
 * else from the few built-in OpenClaw providers whose endpoints are public
 * and OpenAI-compatible (https://docs.openclaw.ai/gateway/configuration-reference#custom-providers-and-base-urls);
 * its key from the auth profiles first, then the provider's variable, then
 * `apiKey` — the order OpenClaw itself uses.
 */
import type { OpenClawSource } from "../../channels/openclaw.ts";
import { PROVIDER_APIS } from "../../config/schema.ts";
import { isLocalUrl } from "../../config/urls.ts";
import { type ProviderAnswer, providerChanges } from "../changes.ts";
import { defaultAgent, type OpenClawHome } from "./home.ts";
import type { ConfigItem } from "./items.ts";
import { objectAt, objectOf } from "./json5.ts";
import { type ImportRow, row } from "./rows.ts";
import { settingText } from "./source.ts";

interface BuiltIn {
  baseUrl: string;
  api: string;
  keyVariable?: string;
}

/** OpenClaw's built-in providers that Fermix can reach with the endpoint OpenClaw uses. */
const BUILT_IN: Readonly<Record<string, BuiltIn>> = {
  openai: { baseUrl: "https://api.openai.com/v1", api: "openai-responses", keyVariable: "OPENAI_API_KEY" },
  anthropic: { baseUrl: "https://api.anthropic.com/v1", api: "anthropic-messages", keyVariable: "ANTHROPIC_API_KEY" },
  openrouter: { baseUrl: "https://openrouter.ai/api/v1", api: "openai-completions", keyVariable: "OPENROUTER_API_KEY" },
  groq: { baseUrl: "https://api.groq.com/openai/v1", api: "openai-completions", keyVariable: "GROQ_API_KEY" },
  mistral: { baseUrl: "https://api.mistral.ai/v1", api: "openai-completions", keyVariable: "MISTRAL_API_KEY" },
  xai: { baseUrl: "https://api.x.ai/v1", api: "openai-completions", keyVariable: "XAI_API_KEY" },
  ollama: { baseUrl: "http://127.0.0.1:11434/v1", api: "openai-completions" },
};

/** OpenClaw's `api` values and Fermix's wire format for each; one Fermix does not speak is absent. */
const WIRE: Readonly<Record<string, string>> = {
  "openai-responses": "responses",
  "openai-completions": "chat",
  ollama: "chat",
  "anthropic-messages": "anthropic",
};

/** "provider/model" → its parts; a bare name is an alias or (OpenClaw's old default) an Anthropic model. */
export function primaryModel(config: Record<string, unknown>): { provider: string; model: string; fallbacks: string[] } | undefined {
  const agentModel = defaultAgent(config)?.model;
  const setting = agentModel ?? objectAt(config, "agents.defaults")?.model;
  const primary = typeof setting === "string" ? setting : objectOf(setting)?.primary;
  if (typeof primary !== "string" || primary.trim() === "") return undefined;
  const fallbacks = objectOf(setting)?.fallbacks;
  const aliases = Object.entries(objectAt(config, "agents.defaults.models") ?? {});
  const ref = primary.includes("/") ? primary.trim() : (aliases.find(([, v]) => objectOf(v)?.alias === primary.trim())?.[0] ?? `anthropic/${primary.trim()}`);
  const slash = ref.indexOf("/");
  return {
    provider: ref.slice(0, slash),
    model: ref.slice(slash + 1),
    fallbacks: Array.isArray(fallbacks) ? fallbacks.filter((f): f is string => typeof f === "string") : [],
  };
}

export interface ProviderPlan {
  items: ConfigItem[];
  rows: ImportRow[];
}

/** The primary model's provider as one config item (or the rows saying why not). */
export function planProvider(home: OpenClawHome, source: OpenClawSource, fermixConfig: Record<string, unknown>): ProviderPlan {
  const rows: ImportRow[] = [];
  const primary = primaryModel(home.config);
  if (!primary) {
    if (home.configFound) rows.push(row("skipped", "model provider", "openclaw.json names no primary model (agents.defaults.model)"));
    return { items: [], rows };
  }
  const what = `provider ${primary.provider}`;
  for (const profile of home.authProfiles.filter((p) => p.provider !== primary.provider)) {
    rows.push(row("skipped", `auth profile ${profile.id}`, `for ${profile.provider}, not the primary model's provider: only that one is imported`));
  }
  const custom = objectOf(objectAt(home.config, "models.providers")?.[primary.provider]);
  const builtIn = BUILT_IN[primary.provider];
  const baseUrl = settingText(source, custom?.baseUrl) ?? builtIn?.baseUrl;
  const openclawApi = typeof custom?.api === "string" ? custom.api : (builtIn?.api ?? "openai-completions");
  const wire = WIRE[openclawApi];
  if (!baseUrl) {
    rows.push(
      row("skipped", what, `OpenClaw's built-in ${primary.provider} provider has no OpenAI-compatible endpoint Fermix knows; set one up with fermix setup`),
    );
    return { items: [], rows };
  }
  if (!wire || !(PROVIDER_APIS as readonly string[]).includes(wire)) {
    rows.push(row("skipped", what, `its API (${openclawApi}) is not one Fermix speaks (${PROVIDER_APIS.join(", ")}); set up a provider with fermix setup`));
    return { items: [], rows };
  }
  const url = openclawApi === "ollama" && !/\/v1\/?$/.test(baseUrl) ? `${baseUrl.replace(/\/+$/, "")}/v1` : baseUrl.replace(/\/+$/, "");
  const key = providerKey(home, source, primary.provider, builtIn?.keyVariable, custom?.apiKey);
  const name = primary.provider.replace(/[^A-Za-z0-9_-]/g, "-");
  const entry = Array.isArray(custom?.models) ? custom.models.map(objectOf).find((m) => m?.id === primary.model) : undefined;
  const answer: ProviderAnswer = {
    name,
    api: wire as ProviderAnswer["api"],
    base_url: url,
    model: primary.model,
    ...(key.value ? { api_key: key.value } : {}),
    ...(typeof entry?.contextWindow === "number" && Number.isInteger(entry.contextWindow) && entry.contextWindow > 0
      ? { context_window: entry.contextWindow }
      : {}),
    ...(Array.isArray(entry?.input) ? { vision: entry.input.includes("image") } : {}),
  };
  const existing = Object.keys(objectAt(fermixConfig, "fermix_core.providers") ?? {}).filter((n) => n !== name);
  rows.push(...key.rows);
  if (!key.value && !isLocalUrl(url)) {
    rows.push(row("manual", `${what} key`, `Give its API key: fermix setup --yes --reconfigure --provider-name ${name} --api-key <key>`));
  }
  if (primary.fallbacks.length > 0) {
    rows.push(
      row("skipped", "fallback models", `${primary.fallbacks.join(", ")}: only the primary model is imported; add others as providers with fermix setup`),
    );
  }
  const detail = `${primary.model} at ${url} (${wire}${key.value ? `, key from ${key.from}, stored as a secret` : ""}), primary`;
  return {
    items: [
      {
        what,
        detail,
        changes: providerChanges(fermixConfig, answer),
        ...(existing.length > 0 ? { conflict: `Fermix already has a provider (${existing.join(", ")})` } : {}),
      },
    ],
    rows,
  };
}

/** The provider's key, and where it came from (never the key in words). */
function providerKey(
  home: OpenClawHome,
  source: OpenClawSource,
  provider: string,
  variable: string | undefined,
  apiKey: unknown,
): { value?: string; from?: string; rows: ImportRow[] } {
  const rows: ImportRow[] = [];
  const order = home.authOrder[provider] ?? [];
  const profiles = home.authProfiles.filter((p) => p.provider === provider).sort((a, b) => rank(order, a.id) - rank(order, b.id));
  for (const profile of profiles) {
    if (profile.type !== "api_key") {
      rows.push(
        row("skipped", `auth profile ${profile.id}`, `a ${profile.type} sign-in (a subscription, not an API key) cannot carry over: Fermix needs an API key`),
      );
      continue;
    }
    const value = source.secret(profile.secret);
    if (value) return { value, from: `auth profile ${profile.id}`, rows };
    rows.push(row("skipped", `auth profile ${profile.id}`, "its key is kept somewhere this import cannot read (a file or command SecretRef)"));
  }
  const fromVariable = variable ? source.env(variable) : undefined;
  if (fromVariable && variable) return { value: fromVariable, from: variable, rows };
  const fromConfig = source.secret(apiKey);
  if (fromConfig) return { value: fromConfig, from: `models.providers.${provider}.apiKey`, rows };
  return { rows };
}

function rank(order: readonly string[], id: string): number {
  const at = order.indexOf(id);
  return at === -1 ? order.length : at;
}
