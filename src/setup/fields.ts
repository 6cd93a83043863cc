/**
 * The keys setup manages, once for both faces: the terminal wizard and its
 * flags (`fermix setup --<channel>-bot-token …`), and the web page. Each field
 * is a config key with the flag that sets it and how a typed-in string
 * becomes a TOML value. A channel's keys are declared in its folder.
 * Validation is not here: the config loader does it (see plan.ts), so a bad
 * value fails with the loader's own message.
 */
import { profileOf } from "../channels/registry.ts";
import type { ChannelField, FieldKind } from "../channels/setup.ts";
import { CHANNEL_NAMES, type ChannelName, SECRET_KEYS } from "../config/schema.ts";

export type { FieldKind } from "../channels/setup.ts";

export interface SetupField {
  /** The flag, without the leading dashes: `telegram-bot-token`. */
  flag: string;
  /** The dotted config key; `<provider>` stands for the provider being configured. */
  path: string;
  kind: FieldKind;
  /** One line for `--help` and the web form. */
  help: string;
}

/** Where a provider's keys live; `<provider>` in a field path is replaced with its name. */
export const PROVIDER_SLOT = "<provider>";

const provider = (flag: string, key: string, kind: FieldKind, help: string): SetupField => ({
  flag,
  path: `fermix_core.providers.${PROVIDER_SLOT}.${key}`,
  kind,
  help,
});
const channelField = (name: ChannelName, field: ChannelField): SetupField => ({
  flag: `${name}-${field.flag ?? field.key.replaceAll("_", "-")}`,
  path: `fermix_channels.${name}.${field.key}`,
  kind: field.kind,
  help: field.help,
});

export const PROVIDER_FIELDS: readonly SetupField[] = [
  provider(
    "provider-base-url",
    "base_url",
    "string",
    "the provider's API root, e.g. https://api.anthropic.com/v1 or http://127.0.0.1:11434/v1; default from --provider",
  ),
  provider("provider-api", "api", "string", "responses (OpenAI), anthropic, or chat (OpenAI-compatible servers); default from --provider or the URL"),
  provider("model", "model", "string", "the model name"),
  provider("api-key", "api_key", "string", "the provider's API key (optional for a local server); stored as a secret"),
  provider("vision", "vision", "boolean", "whether the model takes images (true/false)"),
  provider("context-window", "context_window", "integer", "the model's context window in tokens"),
];

/**
 * Every channel's keys, as its folder declares them (src/channels/<name>/setup.ts),
 * in the order of the config schema's channel tables.
 */
export const CHANNEL_FIELDS: readonly SetupField[] = CHANNEL_NAMES.flatMap((name) =>
  (profileOf(name).setup?.fields ?? []).map((field) => channelField(name, field)),
);

/** The flag of the fallback order. */
export const FALLBACK_FLAG = "fallback";

/** Which providers answer when the primary cannot, in order. */
export const FALLBACK_FIELDS: readonly SetupField[] = [
  { flag: FALLBACK_FLAG, path: "fermix_core.fallback", kind: "list", help: "providers that answer when the primary cannot, in order (their table names)" },
];

export const TRANSCRIPTION_FIELDS: readonly SetupField[] = [
  { flag: "transcription-backend", path: "fermix_core.transcription.backend", kind: "string", help: "openai, xai or deepgram" },
  { flag: "transcription-model", path: "fermix_core.transcription.model", kind: "string", help: "the speech-to-text model" },
  {
    flag: "transcription-api-key",
    path: "fermix_core.transcription.api_key",
    kind: "string",
    help: "the backend's API key; stored as a secret",
  },
];

export const WEB_FIELDS: readonly SetupField[] = [
  { flag: "search-backend", path: "fermix_core.web.search_backend", kind: "string", help: 'brave or searxng (web_search); "" turns it off' },
  { flag: "brave-api-key", path: "fermix_core.web.brave_api_key", kind: "string", help: "the Brave Search API key; stored as a secret" },
  { flag: "searxng-url", path: "fermix_core.web.searxng_url", kind: "string", help: "your SearXNG instance, e.g. http://127.0.0.1:8888 (format=json allowed)" },
];

export const HTTP_FIELDS: readonly SetupField[] = [
  { flag: "http-bind", path: "fermix_core.http.bind", kind: "string", help: "address to listen on (0.0.0.0 behind a TLS proxy); needs a restart" },
  { flag: "http-port", path: "fermix_core.http.port", kind: "integer", help: "port to listen on (default 4030); needs a restart" },
];

/** Computer use: the assistant drives a desktop (docs/computer-use.md). */
export const COMPUTER_FIELDS: readonly SetupField[] = [
  {
    flag: "computer-enabled",
    path: "fermix_core.computer.enabled",
    kind: "boolean",
    help: "let the assistant drive a desktop, the owner's alone (true/false)",
  },
  {
    flag: "computer-display",
    path: "fermix_core.computer.display",
    kind: "string",
    help: "virtual (a private Xvfb display) or host (this machine's X11 DISPLAY)",
  },
];

/** Realtime voice: talk with the assistant live (docs/realtime.md). */
export const REALTIME_FIELDS: readonly SetupField[] = [
  {
    flag: "realtime-enabled",
    path: "fermix_core.realtime.enabled",
    kind: "boolean",
    help: "talk with the assistant live, by voice: fermix talk and the /talk page (true/false)",
  },
  {
    flag: "realtime-provider",
    path: "fermix_core.realtime.provider",
    kind: "string",
    help: "the provider whose realtime API answers (an OpenAI-kind one); default: the primary",
  },
  { flag: "realtime-model", path: "fermix_core.realtime.model", kind: "string", help: "the realtime model (default gpt-realtime)" },
  { flag: "realtime-voice", path: "fermix_core.realtime.voice", kind: "string", help: "the voice it speaks with (default marin)" },
];

export const ALL_FIELDS: readonly SetupField[] = [
  ...PROVIDER_FIELDS,
  ...FALLBACK_FIELDS,
  ...CHANNEL_FIELDS,
  ...TRANSCRIPTION_FIELDS,
  ...WEB_FIELDS,
  ...COMPUTER_FIELDS,
  ...REALTIME_FIELDS,
  ...HTTP_FIELDS,
];

/** The channels setup asks about (those with wizard questions), in the order it asks. */
export const SETUP_CHANNELS: readonly ChannelName[] = CHANNEL_NAMES.filter((name) => profileOf(name).setup?.ask !== undefined);
export type SetupChannel = ChannelName;

/** Whether a dotted config key holds a credential: those go to the secret store, never into config.toml. */
export function isSecretPath(path: string): boolean {
  if (/^fermix_core\.providers\.[^.]+\.api_key$/.test(path)) return true;
  return SECRET_KEYS.some(([section, key]) => `${section}.${key}` === path);
}

/**
 * A typed-in string as the TOML value for its kind. A string that is not a
 * valid value of the kind is returned unchanged, so the loader reports it
 * with its usual message ("… = "soon" is not valid: expected true or false").
 */
export function coerceValue(kind: FieldKind, raw: string): unknown {
  const text = raw.trim();
  switch (kind) {
    case "integer":
      return /^-?\d+$/.test(text) ? Number(text) : text;
    case "boolean":
      if (/^(true|yes|on|1)$/i.test(text)) return true;
      if (/^(false|no|off|0)$/i.test(text)) return false;
      return text;
    case "list":
      return text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    case "string":
      return text;
  }
}
