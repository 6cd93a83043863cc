/**
 * Answers into config changes: what each setup step decided (a provider, a
 * channel's values, a transcription backend) as the list of keys to write.
 * Both faces answer the same steps, so both end here; flags are answers too.
 */
import { profileOf } from "../channels/registry.ts";
import { getPath } from "../config/load.ts";
import { CHANNEL_NAMES, type ProviderApi } from "../config/schema.ts";
import { ALL_FIELDS, coerceValue, PROVIDER_FIELDS, PROVIDER_SLOT, type SetupChannel, type SetupField } from "./fields.ts";
import type { SetupChange } from "./plan.ts";
import { serverKindFor } from "./probe.ts";

type Table = Record<string, unknown>;

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** The flag that names the provider being configured (not a config key: it picks the table). */
export const PROVIDER_NAME_FLAG = "provider-name";

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
  return serverKindFor(Number(url.port))?.id ?? "custom";
}

/** The wire format a URL most likely speaks: OpenAI's own API is Responses, every compatible server speaks chat. */
export function apiFor(baseUrl: string): "responses" | "chat" {
  return providerNameFor(baseUrl) === "openai" ? "responses" : "chat";
}

/** The primary provider's name in a config table, if any. */
export function primaryProviderName(file: Table): string | undefined {
  const providers = getPath(file, "fermix_core.providers");
  if (!providers || typeof providers !== "object") return undefined;
  const entries = Object.entries(providers as Table);
  return (entries.find(([, p]) => (p as Table)?.primary === true) ?? entries[0])?.[0];
}

/** Make `answer` the primary provider: its keys, `primary = true`, and no other provider marked primary. */
export function providerChanges(file: Table, answer: ProviderAnswer): SetupChange[] {
  const at = (key: string) => `fermix_core.providers.${answer.name}.${key}`;
  const changes: SetupChange[] = [
    { path: at("api"), value: answer.api },
    { path: at("base_url"), value: answer.base_url },
    { path: at("model"), value: answer.model },
    { path: at("primary"), value: true },
  ];
  if (answer.api_key !== undefined) changes.push({ path: at("api_key"), value: answer.api_key });
  if (answer.vision !== undefined) changes.push({ path: at("vision"), value: answer.vision });
  if (answer.context_window !== undefined) changes.push({ path: at("context_window"), value: answer.context_window });
  return [...changes, ...demoteOthers(file, answer.name)];
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
 * the one the base URL suggests, else the current primary, and make it primary.
 * On a fresh home a channel that is on by default but needs credentials
 * (its setup's `offUntilNamed`: Telegram) is written off unless a flag names it.
 */
export function changesFromFlags(flags: Readonly<Record<string, string>>, file: Table, freshHome: boolean): SetupChange[] {
  const byFlag = new Map<string, SetupField>(ALL_FIELDS.map((f) => [f.flag, f]));
  for (const flag of Object.keys(flags)) {
    if (flag !== PROVIDER_NAME_FLAG && !byFlag.has(flag)) throw new UnknownFlag(`unknown option "--${flag}"`);
  }
  const changes: SetupChange[] = [];

  const providerFlags = PROVIDER_FIELDS.filter((f) => flags[f.flag] !== undefined);
  if (providerFlags.length > 0 || flags[PROVIDER_NAME_FLAG] !== undefined) {
    const baseUrl = flags["provider-base-url"]?.trim();
    const name = flags[PROVIDER_NAME_FLAG]?.trim() || (baseUrl ? providerNameFor(baseUrl) : (primaryProviderName(file) ?? "openai"));
    const existing = getPath(file, `fermix_core.providers.${name}`);
    for (const field of providerFlags) changes.push({ path: field.path.replace(PROVIDER_SLOT, name), value: coerceValue(field.kind, flags[field.flag]!) });
    if (flags["provider-api"] === undefined && existing === undefined && baseUrl) {
      changes.push({ path: `fermix_core.providers.${name}.api`, value: apiFor(baseUrl) });
    }
    changes.push({ path: `fermix_core.providers.${name}.primary`, value: true }, ...demoteOthers(file, name));
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
