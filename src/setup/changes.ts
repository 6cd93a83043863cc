/**
 * Answers into config changes: what each setup step decided (a provider, a
 * channel's values, a transcription backend) as the list of keys to write.
 * Both faces answer the same steps, so both end here; flags are answers too.
 */
import { profileOf } from "../channels/registry.ts";
import { getPath } from "../config/load.ts";
import { CHANNEL_NAMES, DEFAULT_BASE_URLS, type ProviderApi } from "../config/schema.ts";
import { ALL_FIELDS, coerceValue, FALLBACK_FLAG, PROVIDER_FIELDS, PROVIDER_SLOT, type SetupChannel, type SetupField } from "./fields.ts";
import type { SetupChange } from "./plan.ts";
import { KNOWN_SERVERS, serverKindFor } from "./probe.ts";

type Table = Record<string, unknown>;

export const OPENAI_BASE_URL = DEFAULT_BASE_URLS.responses;
export const ANTHROPIC_BASE_URL = DEFAULT_BASE_URLS.anthropic;

/** The flag that names the provider being configured (not a config key: it picks the table). */
export const PROVIDER_NAME_FLAG = "provider-name";
/** The flag that picks a known provider (`--provider anthropic`): its table name, wire format and URL. */
export const PROVIDER_FLAG = "provider";

/** A provider setup knows by name: how the wizard, the page and `--provider` offer it. */
export interface KnownProvider {
  label: string;
  api: ProviderApi;
  base_url: string;
  /** The model offered first. */
  model: string;
  context_window: number;
}

/** The hosted providers setup offers by name; a local server is offered when it answers (src/setup/probe.ts). */
export const KNOWN_PROVIDERS: Readonly<Record<"openai" | "anthropic", KnownProvider>> = {
  openai: { label: "OpenAI", api: "responses", base_url: OPENAI_BASE_URL, model: "gpt-5.1", context_window: 400_000 },
  anthropic: { label: "Anthropic (Claude)", api: "anthropic", base_url: ANTHROPIC_BASE_URL, model: "claude-sonnet-4-5", context_window: 200_000 },
};

/** What `--provider <name>` brings: a hosted provider's, or a local server's usual address (speaking chat); nothing for another name. */
function presetFor(name: string): Pick<KnownProvider, "api" | "base_url"> | undefined {
  if (Object.hasOwn(KNOWN_PROVIDERS, name)) return KNOWN_PROVIDERS[name as keyof typeof KNOWN_PROVIDERS];
  const server = KNOWN_SERVERS.find((k) => k.id === name);
  return server ? { api: "chat", base_url: `http://127.0.0.1:${server.port}/v1` } : undefined;
}

export interface ProviderAnswer {
  /** The provider's table name; see providerNameFor. */
  name: string;
  api: ProviderApi;
  base_url: string;
  model: string;
  /** Undefined: keep what is stored (or none, for a local server). */
  api_key?: string;
  vision?: boolean;
  context_window?: number;
}

/** A provider's table name from its URL: `openai`, the local server's kind (`ollama`…), else `custom`. */
export function providerNameFor(baseUrl: string | undefined): string {
  if (!baseUrl) return "openai";
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return "custom";
  }
  if (url.hostname === "api.openai.com") return "openai";
  if (url.hostname === "api.anthropic.com") return "anthropic";
  return serverKindFor(Number(url.port))?.id ?? "custom";
}

/** The wire format a URL most likely speaks: OpenAI's own API is Responses, Anthropic's its Messages, every compatible server chat. */
export function apiFor(baseUrl: string): ProviderApi {
  const name = providerNameFor(baseUrl);
  return name === "openai" ? "responses" : name === "anthropic" ? "anthropic" : "chat";
}

/** The fallback list in a config table ([] when none). */
export function fallbackOf(file: Table): string[] {
  const list = getPath(file, "fermix_core.fallback");
  return Array.isArray(list) ? list.filter((n): n is string => typeof n === "string") : [];
}

/** A provider made primary leaves the fallback list (the primary is always tried first; config loading refuses it there). */
function leaveFallback(file: Table, primary: string): SetupChange[] {
  const list = fallbackOf(file);
  return list.includes(primary) ? [{ path: "fermix_core.fallback", value: list.filter((n) => n !== primary) }] : [];
}

/** The primary provider's name in a config table, if any. */
export function primaryProviderName(file: Table): string | undefined {
  const providers = getPath(file, "fermix_core.providers");
  if (!providers || typeof providers !== "object") return undefined;
  const entries = Object.entries(providers as Table);
  return (entries.find(([, p]) => (p as Table)?.primary === true) ?? entries[0])?.[0];
}

/**
 * Write `answer`'s keys. As the primary (default): `primary = true`, no other
 * provider marked primary, and out of the fallback list. As a fallback: added
 * at the end of the list (where it is not already).
 */
export function providerChanges(file: Table, answer: ProviderAnswer, role: "primary" | "fallback" = "primary"): SetupChange[] {
  const at = (key: string) => `fermix_core.providers.${answer.name}.${key}`;
  const changes: SetupChange[] = [
    { path: at("api"), value: answer.api },
    { path: at("base_url"), value: answer.base_url },
    { path: at("model"), value: answer.model },
  ];
  if (answer.api_key !== undefined) changes.push({ path: at("api_key"), value: answer.api_key });
  if (answer.vision !== undefined) changes.push({ path: at("vision"), value: answer.vision });
  if (answer.context_window !== undefined) changes.push({ path: at("context_window"), value: answer.context_window });
  if (role === "fallback") {
    const list = fallbackOf(file);
    return list.includes(answer.name) ? changes : [...changes, { path: "fermix_core.fallback", value: [...list, answer.name] }];
  }
  return [...changes, { path: at("primary"), value: true }, ...demoteOthers(file, answer.name), ...leaveFallback(file, answer.name)];
}

function demoteOthers(file: Table, keep: string): SetupChange[] {
  const providers = (getPath(file, "fermix_core.providers") ?? {}) as Table;
  return Object.entries(providers)
    .filter(([name, p]) => name !== keep && (p as Table)?.primary === true)
    .map(([name]) => ({ path: `fermix_core.providers.${name}.primary`, value: false }));
}

/** One channel's answers: on or off, and its keys (credentials included). */
export function channelChanges(name: SetupChannel, enabled: boolean, values: Readonly<Record<string, unknown>> = {}): SetupChange[] {
  return [
    { path: `fermix_channels.${name}.enabled`, value: enabled },
    ...Object.entries(values).map(([key, value]) => ({ path: `fermix_channels.${name}.${key}`, value })),
  ];
}

export class UnknownFlag extends Error {
  override name = "UnknownFlag";
}

/**
 * Flags (name without dashes → raw string) into changes. A channel named by
 * any of its flags is turned on unless `--<channel>-enabled` says otherwise;
 * provider flags configure the provider named by `--provider-name`, else
 * `--provider` (a known one brings its wire format and URL: openai,
 * anthropic, ollama…), else the one the base URL suggests, else the current
 * primary, and make it primary (out of the fallback list, unless
 * `--fallback` sets the list).
 * On a fresh home a channel that is on by default but needs credentials
 * (its setup's `offUntilNamed`: Telegram) is written off unless a flag names it.
 */
export function changesFromFlags(flags: Readonly<Record<string, string>>, file: Table, freshHome: boolean): SetupChange[] {
  const byFlag = new Map<string, SetupField>(ALL_FIELDS.map((f) => [f.flag, f]));
  for (const flag of Object.keys(flags)) {
    if (flag !== PROVIDER_NAME_FLAG && flag !== PROVIDER_FLAG && !byFlag.has(flag)) throw new UnknownFlag(`unknown option "--${flag}"`);
  }
  const changes: SetupChange[] = [];

  const providerFlags = PROVIDER_FIELDS.filter((f) => flags[f.flag] !== undefined);
  const picked = flags[PROVIDER_FLAG]?.trim() || undefined;
  if (providerFlags.length > 0 || flags[PROVIDER_NAME_FLAG] !== undefined || picked !== undefined) {
    const baseUrl = flags["provider-base-url"]?.trim();
    const name = flags[PROVIDER_NAME_FLAG]?.trim() || picked || (baseUrl ? providerNameFor(baseUrl) : (primaryProviderName(file) ?? "openai"));
    const existing = getPath(file, `fermix_core.providers.${name}`) as Table | undefined;
    for (const field of providerFlags) changes.push({ path: field.path.replace(PROVIDER_SLOT, name), value: coerceValue(field.kind, flags[field.flag]!) });
    // A known provider brings its wire format and address, unless the flags or the table already say.
    const preset = picked ? presetFor(picked) : undefined;
    if (flags["provider-api"] === undefined && existing?.api === undefined && (preset || (existing === undefined && baseUrl))) {
      changes.push({ path: `fermix_core.providers.${name}.api`, value: preset?.api ?? apiFor(baseUrl!) });
    }
    if (preset && baseUrl === undefined && existing?.base_url === undefined) {
      changes.push({ path: `fermix_core.providers.${name}.base_url`, value: preset.base_url });
    }
    changes.push({ path: `fermix_core.providers.${name}.primary`, value: true }, ...demoteOthers(file, name));
    if (flags[FALLBACK_FLAG] === undefined) changes.push(...leaveFallback(file, name));
  }

  for (const field of ALL_FIELDS) {
    if (field.path.includes(PROVIDER_SLOT) || flags[field.flag] === undefined) continue;
    changes.push({ path: field.path, value: coerceValue(field.kind, flags[field.flag]!) });
  }

  for (const channel of CHANNEL_NAMES) {
    const setup = profileOf(channel).setup;
    if (!setup) continue;
    const named = ALL_FIELDS.some((f) => f.path.startsWith(`fermix_channels.${channel}.`) && flags[f.flag] !== undefined);
    const explicit = flags[`${channel}-enabled`] !== undefined;
    if (named && !explicit) changes.push({ path: `fermix_channels.${channel}.enabled`, value: true });
    if (!named && freshHome && setup.offUntilNamed) changes.push({ path: `fermix_channels.${channel}.enabled`, value: false });
  }
  return changes;
}
