/**
 * The setup page's form, both ways, as pure functions: what the form shows
 * for the config on disk, and what a submitted form changes. The steps and
 * keys are setup's own (src/setup/fields.ts), the answers become the same
 * SetupChange list the terminal wizard and the flags produce, and each
 * value is checked by the config loader (src/setup/validate.ts) — one
 * module, two faces.
 *
 * Form names: `provider.<key>` for the primary provider's keys (its table
 * name follows from the base URL, as in the terminal), the dotted config
 * key for everything else. Credentials are write-only: an empty secret
 * field keeps what is stored (or what was typed in an earlier attempt of
 * this session, kept on the server), and no secret is ever put in a page.
 *
 * A model server found on this machine (src/setup/probe.ts) is offered as
 * `provider.local`, whose value is `<base URL> <model>`: when one is chosen,
 * it is the provider (a chat API, no key needed), whatever the fields say.
 * Choosing Anthropic's API with OpenAI's default URL (or none) means
 * Anthropic's own URL, and the other way round. `fermix_core.fallback` is
 * the fallback order, names separated by commas.
 */
import { getPath } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { PROVIDER_APIS, type ProviderApi } from "../../config/schema.ts";
import {
  ANTHROPIC_BASE_URL,
  apiFor,
  channelChanges,
  fallbackOf,
  OPENAI_BASE_URL,
  primaryProviderName,
  providerChanges,
  providerNameFor,
} from "../../setup/changes.ts";
import {
  CHANNEL_FIELDS,
  coerceValue,
  FALLBACK_FIELDS,
  isSecretPath,
  REALTIME_FIELDS,
  SETUP_CHANNELS,
  type SetupChannel,
  type SetupField,
  TRANSCRIPTION_FIELDS,
  WEB_FIELDS,
} from "../../setup/fields.ts";
import type { SetupChange } from "../../setup/plan.ts";
import { type LocalServer, serverKindFor } from "../../setup/probe.ts";
import { valueProblem } from "../../setup/validate.ts";

type Table = Record<string, unknown>;

/** The provider keys the page asks for, in order. */
export const PROVIDER_KEYS = ["base_url", "api", "model", "api_key", "vision", "context_window"] as const;
export const TRANSCRIPTION_BACKEND_CHOICES = ["openai", "deepgram", "xai"] as const;
/** web_search's backends as the page offers them; "" is off. */
export const SEARCH_BACKEND_CHOICES = [
  ["", "Off (web_fetch still reads links)"],
  ["brave", "Brave Search API"],
  ["searxng", "A SearXNG instance"],
] as const;

export interface FormState {
  /** Text inputs and selects, by form name (never a secret). */
  values: Record<string, string>;
  /** Checkboxes, by form name. */
  checked: Record<string, boolean>;
  /** Secret fields with a value stored (or typed earlier in this session): the page says so, without the value. */
  secretsSet: Set<string>;
  /** Problems by form name, and ones that belong to no field. */
  errors: Record<string, string>;
  general: string[];
  /** Lines that are not problems, by form name (what pairing found, or why it found nobody). */
  notes: Record<string, { text: string; tone: "ok" | "warn" }>;
}

/** Computer use's keys on the page: a switch and the display. */
export const COMPUTER_ENABLED = "fermix_core.computer.enabled";
export const COMPUTER_DISPLAY = "fermix_core.computer.display";
/** The fallback order's field. */
export const FALLBACK_FIELD = FALLBACK_FIELDS[0]!;

/** The base URL a submitted API goes with: a hosted default URL follows the API chosen (OpenAI's does not speak Anthropic's, nor the reverse). */
function urlForApi(typed: string, api: ProviderApi | undefined): string {
  if (api === "anthropic" && (typed === "" || typed === OPENAI_BASE_URL)) return ANTHROPIC_BASE_URL;
  if (api !== undefined && api !== "anthropic" && typed === ANTHROPIC_BASE_URL) return OPENAI_BASE_URL;
  return typed || OPENAI_BASE_URL;
}

/** The form name of a local server's choice. */
export const LOCAL_CHOICE = "provider.local";

/** The value that chooses `model` on a found server. */
export const localChoiceValue = (server: LocalServer, model: string) => `${server.baseUrl} ${model}`;

/** A chosen local server's base URL and model; undefined for "as typed in the fields". */
export function parseLocalChoice(value: string | undefined): { baseUrl: string; model: string } | undefined {
  const text = (value ?? "").trim();
  const space = text.indexOf(" ");
  if (space <= 0 || space === text.length - 1) return undefined;
  return { baseUrl: text.slice(0, space), model: text.slice(space + 1).trim() };
}

/** The provider name a local server is configured under, as the terminal names it (`ollama`…, else `local`). */
function localServerName(baseUrl: string): string {
  try {
    return serverKindFor(Number(new URL(baseUrl).port))?.id ?? "local";
  } catch {
    return "local";
  }
}

export interface FormContext {
  /** config.toml as parsed (what is written, without defaults). */
  file: Table;
  /** The config as loaded (defaults filled in). */
  config: Config;
  /** Whether config.toml exists (on a fresh home every channel starts unticked, as in the terminal). */
  exists: boolean;
  /** Stored secrets by dotted path. */
  secrets: Readonly<Record<string, string>>;
  /** Secrets typed in an earlier attempt of this session, by form name. */
  typed: Readonly<Record<string, string>>;
  /** Model servers found on this machine when the page was asked for. */
  servers?: readonly LocalServer[];
}

/** A channel's keys on the page: all but the enabled switch. */
export const channelFields = (name: SetupChannel) =>
  CHANNEL_FIELDS.filter((f) => f.path.startsWith(`fermix_channels.${name}.`) && !f.path.endsWith(".enabled"));
const enabledName = (name: SetupChannel) => `fermix_channels.${name}.enabled`;

function primaryOf(ctx: FormContext): { name: string; config: Config["fermix_core"]["providers"][string] } | undefined {
  const name = primaryProviderName(ctx.file);
  const config = name ? ctx.config.fermix_core.providers[name] : undefined;
  return name && config ? { name, config } : undefined;
}

const display = (value: unknown): string => (value === undefined ? "" : Array.isArray(value) ? value.join(", ") : String(value));

/** The form as the config on disk fills it. */
export function initialForm(ctx: FormContext): FormState {
  const values: Record<string, string> = {};
  const checked: Record<string, boolean> = {};
  const secretsSet = new Set<string>(Object.keys(ctx.typed));
  const primary = primaryOf(ctx);
  if (primary) {
    values["provider.base_url"] = primary.config.base_url;
    values["provider.api"] = primary.config.api ?? apiFor(primary.config.base_url);
    values["provider.model"] = primary.config.model;
    values["provider.context_window"] = String(primary.config.context_window);
    checked["provider.vision"] = primary.config.vision;
    if (primary.config.api_key) secretsSet.add("provider.api_key");
    const found = ctx.servers?.find((s) => s.baseUrl === primary.config.base_url && s.models.includes(primary.config.model));
    if (found) values[LOCAL_CHOICE] = localChoiceValue(found, primary.config.model);
  } else {
    // Nothing configured yet: a model server found on this machine is the first offer, as in the terminal.
    const found = ctx.servers?.find((s) => s.models.length > 0);
    values["provider.base_url"] = found?.baseUrl ?? OPENAI_BASE_URL;
    values["provider.api"] = found ? "chat" : "responses";
    values["provider.model"] = found?.models[0] ?? "";
    values["provider.context_window"] = "";
    checked["provider.vision"] = !found;
    if (found) values[LOCAL_CHOICE] = localChoiceValue(found, found.models[0]!);
  }
  for (const name of SETUP_CHANNELS) {
    const explicit = getPath(ctx.file, enabledName(name));
    checked[enabledName(name)] = typeof explicit === "boolean" ? explicit : ctx.exists && ctx.config.fermix_channels[name].enabled;
    for (const field of channelFields(name)) {
      if (isSecretPath(field.path)) {
        if (ctx.secrets[field.path] || getPath(ctx.file, field.path) !== undefined) secretsSet.add(field.path);
      } else values[field.path] = display(getPath(ctx.file, field.path));
    }
  }
  values[FALLBACK_FIELD.path] = display(getPath(ctx.file, FALLBACK_FIELD.path));
  for (const field of [...TRANSCRIPTION_FIELDS, ...WEB_FIELDS]) {
    if (isSecretPath(field.path)) {
      if (ctx.secrets[field.path]) secretsSet.add(field.path);
    } else values[field.path] = display(getPath(ctx.file, field.path));
  }
  checked[COMPUTER_ENABLED] = ctx.config.fermix_core.computer.enabled;
  values[COMPUTER_DISPLAY] = ctx.config.fermix_core.computer.display;
  checked[REALTIME_ENABLED] = ctx.config.fermix_core.realtime.enabled;
  for (const field of realtimeTextFields()) values[field.path] = display(getPath(ctx.file, field.path));
  return { values, checked, secretsSet, errors: {}, general: [], notes: {} };
}

export interface Submitted {
  changes: SetupChange[];
  /** The form as submitted (secrets left out), to show again with its errors. */
  form: FormState;
  /** Secrets typed this time, by form name: kept in the session if the attempt fails. */
  typed: Record<string, string>;
  /** Whether the provider changed, and which channels' keys (what a live check looks at). */
  providerChanged: boolean;
  channelsChanged: SetupChannel[];
}

/** A submitted form into changes, each value checked by the loader; problems land on their fields. */
export function submittedForm(input: Readonly<Record<string, string>>, ctx: FormContext): Submitted {
  const form: FormState = { values: {}, checked: {}, secretsSet: new Set(), errors: {}, general: [], notes: {} };
  const typed: Record<string, string> = {};
  const text = (name: string) => (input[name] ?? "").trim();
  const secret = (name: string): string | undefined => {
    const now = text(name);
    if (now !== "") typed[name] = now;
    const value = now || ctx.typed[name];
    if (value) form.secretsSet.add(name);
    return value || undefined;
  };
  const check = (name: string, path: string, value: unknown) => {
    const problem = valueProblem(path, value);
    if (problem) form.errors[name] = problem;
  };

  // Step 1: the provider.
  const changes: SetupChange[] = [];
  const primary = primaryOf(ctx);
  for (const key of PROVIDER_KEYS) if (key !== "api_key" && key !== "vision") form.values[`provider.${key}`] = text(`provider.${key}`);
  form.checked["provider.vision"] = input["provider.vision"] !== undefined;
  const local = parseLocalChoice(input[LOCAL_CHOICE]);
  if (local) {
    form.values[LOCAL_CHOICE] = text(LOCAL_CHOICE);
    form.values["provider.base_url"] = local.baseUrl;
    form.values["provider.model"] = local.model;
    form.values["provider.api"] = "chat";
  }
  const apiChosen = PROVIDER_APIS.find((a) => a === text("provider.api"));
  const baseUrl = local?.baseUrl ?? urlForApi(text("provider.base_url"), apiChosen);
  const model = local?.model ?? text("provider.model");
  const apiKey = secret("provider.api_key");
  if (primary?.config.api_key) form.secretsSet.add("provider.api_key");
  let providerChanged = false;
  if (model === "" && primary) form.errors["provider.model"] = "a model name is needed (the provider stays as it is if you leave every field unchanged)";
  if (model !== "") {
    const name = primary && primary.config.base_url === baseUrl ? primary.name : local ? localServerName(baseUrl) : providerNameFor(baseUrl);
    const at = (key: string) => `fermix_core.providers.${name}.${key}`;
    const api = local ? "chat" : (apiChosen ?? apiFor(baseUrl));
    const windowText = text("provider.context_window");
    const contextWindow = windowText === "" ? undefined : coerceValue("integer", windowText);
    check("provider.base_url", at("base_url"), baseUrl);
    check("provider.model", at("model"), model);
    if (contextWindow !== undefined) check("provider.context_window", at("context_window"), contextWindow);
    const vision = form.checked["provider.vision"]!;
    const same =
      primary !== undefined &&
      name === primary.name &&
      model === primary.config.model &&
      api === (primary.config.api ?? apiFor(primary.config.base_url)) &&
      vision === primary.config.vision &&
      (contextWindow === undefined || contextWindow === primary.config.context_window) &&
      apiKey === undefined;
    if (!same) {
      providerChanged = true;
      changes.push(
        ...providerChanges(ctx.file, {
          name,
          api,
          base_url: baseUrl,
          model,
          vision,
          ...(apiKey !== undefined ? { api_key: apiKey } : {}),
          ...(typeof contextWindow === "number" ? { context_window: contextWindow } : {}),
        }),
      );
    }
  }

  // The fallback order: written only when it changed (a provider made primary leaves it by itself).
  const fallback = fieldValue(FALLBACK_FIELD, input, ctx, form, secret);
  if (fallback !== KEEP && !Bun.deepEquals(fallback ?? [], fallbackOf(ctx.file))) changes.push({ path: FALLBACK_FIELD.path, value: fallback });

  // Step 2: the channels, their owners and credentials.
  const channelsChanged: SetupChannel[] = [];
  for (const name of SETUP_CHANNELS) {
    const enabled = input[enabledName(name)] !== undefined;
    form.checked[enabledName(name)] = enabled;
    const values: Record<string, unknown> = {};
    for (const field of channelFields(name)) {
      const value = fieldValue(field, input, ctx, form, secret);
      if (value === KEEP) continue;
      values[field.path.slice(`fermix_channels.${name}.`.length)] = value;
      if (value !== undefined) check(field.path, field.path, value);
    }
    // `enabled` is written only when it changes what is in force (a channel on by default, unticked, is written off).
    const wasEnabled = ctx.config.fermix_channels[name].enabled;
    const keyChanges = channelChanges(name, enabled, values).filter((change) => change.path !== enabledName(name) || enabled !== wasEnabled);
    if (keyChanges.length > 0) channelsChanged.push(name);
    changes.push(...keyChanges);
  }

  // Step 3: voice notes; step 4: web search.
  for (const field of [...TRANSCRIPTION_FIELDS, ...WEB_FIELDS]) {
    const value = fieldValue(field, input, ctx, form, secret);
    if (value === KEEP) continue;
    if (value !== undefined) check(field.path, field.path, value);
    changes.push({ path: field.path, value });
  }

  // Step 5: computer use — written only where it changes what is in force.
  const computer = ctx.config.fermix_core.computer;
  const computerOn = input[COMPUTER_ENABLED] !== undefined;
  form.checked[COMPUTER_ENABLED] = computerOn;
  form.values[COMPUTER_DISPLAY] = text(COMPUTER_DISPLAY) || computer.display;
  if (computerOn !== computer.enabled) changes.push({ path: COMPUTER_ENABLED, value: computerOn });
  if (form.values[COMPUTER_DISPLAY] !== computer.display) {
    check(COMPUTER_DISPLAY, COMPUTER_DISPLAY, form.values[COMPUTER_DISPLAY]);
    changes.push({ path: COMPUTER_DISPLAY, value: form.values[COMPUTER_DISPLAY] });
  }

  // Step 6: realtime voice; `enabled` is written only when it changes what is in force.
  const realtimeOn = input[REALTIME_ENABLED] !== undefined;
  form.checked[REALTIME_ENABLED] = realtimeOn;
  if (realtimeOn !== ctx.config.fermix_core.realtime.enabled) changes.push({ path: REALTIME_ENABLED, value: realtimeOn });
  for (const field of realtimeTextFields()) {
    const value = fieldValue(field, input, ctx, form, secret);
    if (value === KEEP) continue;
    if (value !== undefined) check(field.path, field.path, value);
    changes.push({ path: field.path, value });
  }
  return { changes, form, typed, providerChanged, channelsChanged };
}

/** The form name of realtime voice's switch. */
export const REALTIME_ENABLED = "fermix_core.realtime.enabled";
/** Realtime voice's keys on the page besides its switch. */
export const realtimeTextFields = () => REALTIME_FIELDS.filter((f) => f.path !== REALTIME_ENABLED);

const KEEP = Symbol("keep");

/** One field's new value: KEEP (nothing to write), undefined (remove the key), or the value. */
function fieldValue(
  field: SetupField,
  input: Readonly<Record<string, string>>,
  ctx: FormContext,
  form: FormState,
  secret: (name: string) => string | undefined,
): unknown {
  if (isSecretPath(field.path)) {
    const value = secret(field.path);
    if (ctx.secrets[field.path]) form.secretsSet.add(field.path);
    return value === undefined ? KEEP : value;
  }
  const raw = (input[field.path] ?? "").trim();
  form.values[field.path] = raw;
  const before = getPath(ctx.file, field.path);
  if (raw === "") return before === undefined ? KEEP : undefined;
  const value = coerceValue(field.kind, raw);
  return Bun.deepEquals(before, value) ? KEEP : value;
}

/** The form name a loader issue's key belongs to (a list's entry belongs to the list's field). */
export function formNameFor(key: string): string {
  const provider = /^fermix_core\.providers\.[^.]+\.(.+)$/.exec(key);
  return provider ? `provider.${provider[1]}` : key.replace(/\[\d+\]$/, "");
}
