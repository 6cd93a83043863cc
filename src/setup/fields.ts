/**
 * The keys setup manages, once for both faces: the terminal wizard and its
 * flags (`fermix setup --telegram-bot-token …`), and the web page. Each field
 * is a config key with the flag that sets it and how a typed-in string
 * becomes a TOML value. Validation is not here: the config loader does it
 * (see plan.ts), so a bad value fails with the loader's own message.
 */
import { SECRET_KEYS } from "../config/schema.ts";

export type FieldKind = "string" | "integer" | "boolean" | "list";

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
const channel = (name: string, key: string, kind: FieldKind, help: string, flag = key.replaceAll("_", "-")): SetupField => ({
  flag: `${name}-${flag}`,
  path: `fermix_channels.${name}.${key}`,
  kind,
  help,
});

export const PROVIDER_FIELDS: readonly SetupField[] = [
  provider("provider-base-url", "base_url", "string", "the provider's API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1"),
  provider("provider-api", "api", "string", "responses (OpenAI) or chat (OpenAI-compatible servers); default from the URL"),
  provider("model", "model", "string", "the model name"),
  provider("api-key", "api_key", "string", "the provider's API key (optional for a local server); stored as a secret"),
  provider("vision", "vision", "boolean", "whether the model takes images (true/false)"),
  provider("context-window", "context_window", "integer", "the model's context window in tokens"),
];

export const CHANNEL_FIELDS: readonly SetupField[] = [
  channel("telegram", "enabled", "boolean", "serve Telegram (true/false; on by default)"),
  channel("telegram", "bot_token", "string", "the bot token from @BotFather; stored as a secret"),
  channel("telegram", "owner_user_id", "string", "your numeric Telegram user id (what /whoami shows)", "owner"),
  channel("telegram", "allowed_user_ids", "list", "other user ids that may talk to the bot, comma-separated"),
  channel("telegram", "api_root", "string", "a self-hosted Bot API server (default https://api.telegram.org)"),
  channel("whatsapp", "enabled", "boolean", "serve WhatsApp (Cloud API webhooks)"),
  channel("whatsapp", "access_token", "string", "the Cloud API access token; stored as a secret"),
  channel("whatsapp", "phone_number_id", "string", "the sending phone number's id"),
  channel("whatsapp", "verify_token", "string", "the webhook verify token you choose; stored as a secret"),
  channel("whatsapp", "app_secret", "string", "the Meta app secret (webhook signatures); stored as a secret"),
  channel("whatsapp", "owner_user_id", "string", "your WhatsApp number, digits only", "owner"),
  channel("whatsapp", "allowed_sender_ids", "list", "other numbers that may talk to it, comma-separated"),
  channel("whatsapp", "graph_api_base", "string", "the Graph API root (default https://graph.facebook.com/v21.0)"),
  channel("slack", "enabled", "boolean", "serve Slack (Events API webhooks)"),
  channel("slack", "bot_token", "string", "the xoxb- bot token; stored as a secret"),
  channel("slack", "signing_secret", "string", "the app's signing secret; stored as a secret"),
  channel("slack", "owner_user_id", "string", "your Slack member id (U…)", "owner"),
  channel("slack", "allowed_user_ids", "list", "other member ids that may talk to it, comma-separated"),
  channel("slack", "api_url", "string", "the Web API root (default https://slack.com/api/)"),
  channel("discord", "enabled", "boolean", "serve Discord"),
  channel("discord", "bot_token", "string", "the bot token; stored as a secret"),
  channel("discord", "bot_user_id", "string", "the bot's own user id"),
  channel("discord", "owner_user_id", "string", "your Discord user id", "owner"),
  channel("discord", "allowed_user_ids", "list", "other user ids that may talk to it, comma-separated"),
  channel("discord", "api_base", "string", "the REST API root (default https://discord.com/api/v10)"),
  channel("signal", "enabled", "boolean", "serve Signal (through signal-cli)"),
  channel("signal", "account", "string", "the bot's registered number, e.g. +15550001111"),
  channel("signal", "cli_path", "string", "the signal-cli executable (default signal-cli on PATH)"),
  channel("signal", "owner_user_id", "string", "your Signal number or UUID", "owner"),
  channel("signal", "allowed_sender_ids", "list", "other numbers or UUIDs that may talk to it, comma-separated"),
  channel("acp", "enabled", "boolean", "serve editors over the ACP socket (on by default)"),
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

export const HTTP_FIELDS: readonly SetupField[] = [
  { flag: "http-bind", path: "fermix_core.http.bind", kind: "string", help: "address to listen on (0.0.0.0 behind a TLS proxy); needs a restart" },
  { flag: "http-port", path: "fermix_core.http.port", kind: "integer", help: "port to listen on (default 4030); needs a restart" },
];

export const ALL_FIELDS: readonly SetupField[] = [...PROVIDER_FIELDS, ...CHANNEL_FIELDS, ...TRANSCRIPTION_FIELDS, ...HTTP_FIELDS];

/** The chat channels setup configures, in the order it asks. */
export const SETUP_CHANNELS = ["telegram", "whatsapp", "slack", "discord", "signal"] as const;
export type SetupChannel = (typeof SETUP_CHANNELS)[number];

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
