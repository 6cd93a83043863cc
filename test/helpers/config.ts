/**
 * Builders of config.toml fragments for tests, so each test names only the
 * values it cares about. A fragment is one or more whole TOML tables ending in
 * a newline; join fragments with `+`. Field names are the TOML keys in
 * camelCase; a field left undefined is left out of the file, so the config
 * loader's default applies exactly as if the test had not written the key.
 */

type TomlValue = string | number | boolean | readonly string[] | undefined;

/** A value as TOML: strings are quoted (JSON escapes are valid TOML escapes), lists are lists of strings. */
const tomlValue = (value: Exclude<TomlValue, undefined>): string =>
  Array.isArray(value) ? `[${value.map((v) => JSON.stringify(v)).join(", ")}]` : JSON.stringify(value);

/** One `[name]` table with the keys whose value is defined, in the order given. */
export function tomlTable(name: string, keys: Record<string, TomlValue>): string {
  const lines = Object.entries(keys).flatMap(([key, value]) => (value === undefined ? [] : [`${key} = ${tomlValue(value)}`]));
  return `\n[${name}]\n${lines.map((line) => `${line}\n`).join("")}`;
}

/** Telegram off: it is on by default, and an enabled Telegram with no token is `unconfigured`, so health is never ready. */
export const TELEGRAM_OFF = tomlTable("fermix_channels.telegram", { enabled: false });
/** ACP off: it is on by default, and a test that drives no editor needs no control socket. */
export const ACP_OFF = tomlTable("fermix_channels.acp", { enabled: false });
/** Both default-on channels off: what a test that only exercises a provider or a webhook channel wants. */
export const CHANNELS_OFF = TELEGRAM_OFF + ACP_OFF;

export interface ProviderOptions {
  /** The provider's table name (`fermix_core.providers.<name>`); default `fake`. */
  name?: string;
  api?: "chat" | "responses" | "anthropic";
  /** Default `fake-model`, the one model the fake lists at /models (it answers whatever name is sent). */
  model?: string;
  apiKey?: string;
  vision?: boolean;
  primary?: boolean;
  /** How long the server may take to answer at all (ms); short in failover tests. */
  connectTimeoutMs?: number;
}

/** A provider whose base_url is `modelUrl` (the fake model server), named `fake` unless given. */
export function providerToml(modelUrl: string, options: ProviderOptions = {}): string {
  const { name = "fake", api, model = "fake-model", apiKey, vision, primary, connectTimeoutMs } = options;
  return tomlTable(`fermix_core.providers.${name}`, {
    api,
    base_url: modelUrl,
    model,
    api_key: apiKey,
    vision,
    primary,
    connect_timeout_ms: connectTimeoutMs,
  });
}

/** The keyed `openai` provider the webhook tests configure (a dummy key; the base_url still goes to the fake). */
export const OPENAI_TEST: ProviderOptions = { name: "openai", model: "gpt-test", apiKey: "sk-test-0000000000" };

export interface SlackOptions {
  /** Default true: Slack is off unless the file turns it on. */
  enabled?: boolean;
  botToken: string;
  /** Optional only so a test can leave it out on purpose. */
  signingSecret?: string;
  ownerUserId?: string;
  /** The Slack fake's `apiUrl`; left out, replies would go to slack.com. */
  apiUrl?: string;
}

/** A Slack channel table, enabled unless `enabled: false`. */
export function slackToml(o: SlackOptions): string {
  return tomlTable("fermix_channels.slack", {
    enabled: o.enabled ?? true,
    bot_token: o.botToken,
    signing_secret: o.signingSecret,
    owner_user_id: o.ownerUserId,
    api_url: o.apiUrl,
  });
}

export interface WhatsAppOptions {
  /** Default true: WhatsApp is off unless the file turns it on. */
  enabled?: boolean;
  accessToken: string;
  phoneNumberId: string;
  verifyToken: string;
  appSecret: string;
  ownerUserId?: string;
  allowedSenderIds?: readonly string[];
  /** The WhatsApp fake's `graphBase(version)`; left out, calls would go to graph.facebook.com. */
  graphApiBase?: string;
  albumDebounceMs?: number;
  maxMessageAgeHours?: number;
}

/** A WhatsApp Cloud API channel table, enabled unless `enabled: false`. */
export function whatsappToml(o: WhatsAppOptions): string {
  return tomlTable("fermix_channels.whatsapp", {
    enabled: o.enabled ?? true,
    access_token: o.accessToken,
    phone_number_id: o.phoneNumberId,
    verify_token: o.verifyToken,
    app_secret: o.appSecret,
    owner_user_id: o.ownerUserId,
    allowed_sender_ids: o.allowedSenderIds,
    graph_api_base: o.graphApiBase,
    album_debounce_ms: o.albumDebounceMs,
    max_message_age_hours: o.maxMessageAgeHours,
  });
}

/** WhatsApp against a loopback Graph API fake, with its owner: the usual end-to-end set-up. */
export function whatsappFakeToml(
  wa: { token: string; phoneNumberId: string; graphBase(version?: string): string },
  o: { appSecret: string; ownerUserId: string; verifyToken: string },
): string {
  return whatsappToml({
    accessToken: wa.token,
    phoneNumberId: wa.phoneNumberId,
    verifyToken: o.verifyToken,
    appSecret: o.appSecret,
    ownerUserId: o.ownerUserId,
    graphApiBase: wa.graphBase(),
  });
}

export interface TelegramOptions {
  /** Written only when given: Telegram is on by default. */
  enabled?: boolean;
  botToken: string;
  /** The Telegram fake's `url`; left out, polling would go to api.telegram.org. */
  apiRoot?: string;
  ownerUserId?: string;
  allowedUserIds?: readonly string[];
  commandAllowlist?: readonly string[];
}

/** A Telegram channel table (long polling against `apiRoot`). */
export function telegramToml(o: TelegramOptions): string {
  return tomlTable("fermix_channels.telegram", {
    enabled: o.enabled,
    bot_token: o.botToken,
    api_root: o.apiRoot,
    owner_user_id: o.ownerUserId,
    allowed_user_ids: o.allowedUserIds,
    command_allowlist: o.commandAllowlist,
  });
}

export interface TranscriptionOptions {
  backend?: "openai" | "xai" | "deepgram";
  /** A speech-to-text fake's `url` (it ends in /v1). */
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  maxFileMb?: number;
  timeoutMs?: number;
}

/** A `[fermix_core.transcription]` table. */
export function transcriptionToml(o: TranscriptionOptions): string {
  return tomlTable("fermix_core.transcription", {
    backend: o.backend,
    base_url: o.baseUrl,
    api_key: o.apiKey,
    model: o.model,
    max_file_mb: o.maxFileMb,
    timeout_ms: o.timeoutMs,
  });
}

export interface SignalOptions {
  /** Default true: Signal is off unless the file turns it on. */
  enabled?: boolean;
  account: string;
  /** The fake signal-cli's wrapper (`cliPath` of test/fakes/signal.ts); left out, `signal-cli` on PATH. */
  cliPath?: string;
  attachmentsDir?: string;
  ownerUserId?: string;
  allowedSenderIds?: readonly string[];
  streaming?: "off" | "draft" | "block";
}

/** A Signal channel table (a signal-cli jsonRpc child), enabled unless `enabled: false`. */
export function signalToml(o: SignalOptions): string {
  return tomlTable("fermix_channels.signal", {
    enabled: o.enabled ?? true,
    account: o.account,
    cli_path: o.cliPath,
    attachments_dir: o.attachmentsDir,
    owner_user_id: o.ownerUserId,
    allowed_sender_ids: o.allowedSenderIds,
    streaming: o.streaming,
  });
}

export interface DiscordOptions {
  /** Default true: Discord is off unless the file turns it on. */
  enabled?: boolean;
  botToken: string;
  botUserId?: string;
  ownerUserId?: string;
  allowedUserIds?: readonly string[];
  /** The Discord fake's `apiBase`; left out, the gateway URL would be asked of discord.com. */
  apiBase?: string;
  streaming?: "off" | "draft" | "block";
}

/** A Discord channel table (a gateway connection found through `api_base`), enabled unless `enabled: false`. */
export function discordToml(o: DiscordOptions): string {
  return tomlTable("fermix_channels.discord", {
    enabled: o.enabled ?? true,
    bot_token: o.botToken,
    bot_user_id: o.botUserId,
    owner_user_id: o.ownerUserId,
    allowed_user_ids: o.allowedUserIds,
    api_base: o.apiBase,
    streaming: o.streaming,
  });
}

export interface RealtimeOptions {
  /** Default true. */
  enabled?: boolean;
  /** A provider's table name. */
  provider?: string;
  model?: string;
  voice?: string;
  instructionsExtra?: string;
  maxSessionMinutes?: number;
}

/** The `[fermix_core.realtime]` table: realtime voice on, through `provider`. */
export function realtimeToml(o: RealtimeOptions = {}): string {
  return tomlTable("fermix_core.realtime", {
    enabled: o.enabled ?? true,
    provider: o.provider,
    model: o.model,
    voice: o.voice,
    instructions_extra: o.instructionsExtra,
    max_session_minutes: o.maxSessionMinutes,
  });
}
