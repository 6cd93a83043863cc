/**
 * The configuration schema: one TypeBox definition that is both the type of a
 * loaded config and its validator. Every key of DESIGN.md "Configuration" is
 * here, with its default.
 */
import { FormatRegistry, type SchemaOptions, type Static, type TLiteral, type TSchema, type TUnion, Type } from "@sinclair/typebox";
import { isTimeZone } from "./timezone.ts";

// `[fermix_core] timezone` is checked against the zones the runtime knows, so a typo stops the load naming the key.
FormatRegistry.Set("timezone", isTimeZone);

/** A union of string literals, typed as the union of its values. */
const literals = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnion<TLiteral<T[number]>[]> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

export const STREAMING_MODES = ["off", "draft", "block"] as const;
export type StreamingMode = (typeof STREAMING_MODES)[number];
export const PROVIDER_APIS = ["responses", "chat"] as const;
export const TRANSCRIPTION_BACKENDS = ["openai", "xai", "deepgram"] as const;
export type TranscriptionBackend = (typeof TRANSCRIPTION_BACKENDS)[number];

const Streaming = literals(STREAMING_MODES);
const Id = Type.String({ minLength: 1 });
const IdList = Type.Array(Id, { default: [] });
const Url = Type.String({ minLength: 1, pattern: "^https?://" });
const Secret = Type.String({ minLength: 1 });
const DebounceMs = Type.Integer({ minimum: 0, maximum: 60_000, default: 3000 });

export const ProviderSchema = Type.Object({
  api: Type.Optional(literals(PROVIDER_APIS)),
  base_url: Type.String({ minLength: 1, pattern: "^https?://", default: "https://api.openai.com/v1" }),
  model: Type.String({ minLength: 1 }),
  api_key: Type.Optional(Secret),
  primary: Type.Optional(Type.Boolean()),
  context_window: Type.Integer({ minimum: 1, default: 128_000 }),
  vision: Type.Boolean({ default: true }),
  connect_timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000, default: 10_000 }),
  first_byte_timeout_ms: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 60_000 }),
  idle_timeout_ms: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 90_000 }),
});

const CompactionSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.85 }),
  },
  { default: {} },
);

const TranscriptionSchema = Type.Object(
  {
    backend: Type.Optional(
      literals(TRANSCRIPTION_BACKENDS, { description: "Speech-to-text backend for voice notes and audio: openai (default), xai or deepgram." }),
    ),
    model: Type.Optional(
      Type.String({
        minLength: 1,
        description: "Transcription model: default gpt-4o-mini-transcribe (openai) or nova-3 (deepgram); xai is modelless and ignores it.",
      }),
    ),
    api_key: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "The backend's key. Unset: OPENAI_API_KEY / XAI_API_KEY / DEEPGRAM_API_KEY by backend; for openai also the key of the provider named openai when it serves the same base_url.",
      }),
    ),
    max_file_mb: Type.Number({
      exclusiveMinimum: 0,
      maximum: 2048,
      default: 20,
      description: "Audio larger than this (MB) is refused with a reply, by its declared size before any download where the channel gives one.",
    }),
    base_url: Type.Optional(
      Type.String({
        ...Url,
        description: "The API root including its version (a proxy, a local OpenAI-compatible whisper server); default per backend.",
      }),
    ),
    timeout_ms: Type.Integer({
      minimum: 1,
      maximum: 600_000,
      default: 60_000,
      description: "How long one transcription request may take before it is abandoned (ms).",
    }),
  },
  { default: {} },
);

const DeliverySchema = Type.Object(
  {
    retry_horizon_minutes: Type.Number({ exclusiveMinimum: 0, maximum: 7 * 24 * 60, default: 15 }),
    waiting_notice_ms: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 20_000 }),
  },
  { default: {} },
);

const RetentionSchema = Type.Object(
  {
    outbox_days: Type.Number({ exclusiveMinimum: 0, maximum: 3650, default: 7 }),
    inbox_days: Type.Number({ exclusiveMinimum: 0, maximum: 3650, default: 7 }),
  },
  { default: {} },
);

const MemorySchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: true,
      description: "Long-term memory: the remember/recall/forget tools, and relevant remembered facts in each turn's instructions. Off: neither (what is kept stays in the database).",
    }),
    prompt_items: Type.Integer({
      minimum: 0,
      maximum: 100,
      default: 5,
      description: "At most this many remembered facts, the most relevant to the new message, go into a turn's instructions (0: none).",
    }),
    prompt_chars: Type.Integer({
      minimum: 0,
      maximum: 100_000,
      default: 2000,
      description: "At most this many characters of remembered facts go into a turn's instructions; compaction counts them against the context window like history.",
    }),
  },
  { default: {} },
);

const JobsSchema = Type.Object(
  {
    default_target: Type.Optional(
      Type.String({
        minLength: 3,
        pattern: "^(telegram|whatsapp|slack|discord|signal):.+$",
        description:
          'Where results of scheduled jobs made on surfaces that cannot receive a later message (fermix ask, fermix chat, ACP) are delivered, as "<channel>:<chat id>" (e.g. "telegram:123456789"). Unset: such jobs need an explicit target.',
      }),
    ),
  },
  { default: {} },
);

const UltraSchema = Type.Object(
  {
    max_parts: Type.Integer({
      minimum: 1,
      maximum: 16,
      default: 4,
      description: "/ultra: the planner splits a request into at most this many independent parts, each worked on by its own sub-turn.",
    }),
    concurrency: Type.Integer({
      minimum: 1,
      maximum: 16,
      default: 4,
      description: "/ultra: at most this many parts are worked on at the same time; the others wait for a free slot.",
    }),
    max_tokens: Type.Integer({
      minimum: 1000,
      maximum: 10_000_000,
      default: 200_000,
      description:
        "/ultra: the token ceiling for one whole ultra turn (planner, workers, merge; input and output tokens as the provider reports them). Past it, unfinished parts are stopped and the merge works with what is done, and says so.",
    }),
  },
  { default: {} },
);

const SkillsSchema = Type.Object(
  {
    park_after_days: Type.Number({
      exclusiveMinimum: 0,
      maximum: 3650,
      default: 30,
      description:
        "A skill not used for this many days (counted from its last use, or from when it became active) is parked: no longer offered in the system prompt until `/skills unpark NAME`. Fractions of a day are allowed.",
    }),
  },
  { default: {} },
);

const SandboxSchema = Type.Object(
  {
    network: Type.Boolean({
      default: false,
      description: "Whether run_command may use the network, until `/sandbox network on|off` sets it (that setting, kept in the database, wins).",
    }),
    confirm_ttl_seconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 300,
      description: "How long a `/confirm TOKEN` code of a risky /sandbox change stays valid (seconds).",
    }),
    access_request_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 300,
      description: "How long a turn waits for the owner to answer the agent's request_access before it goes on with \"timed out\" (seconds).",
    }),
    command_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 3600,
      default: 120,
      description: "The longest a run_command may run before it is killed (seconds); the model may ask for less.",
    }),
    command_output_limit_bytes: Type.Integer({
      minimum: 1024,
      maximum: 10_000_000,
      default: 32_768,
      description: "How much of a command's output the model sees: past it, the middle is cut out with a note.",
    }),
  },
  { default: {} },
);

const SoulSchema = Type.Object(
  {
    confirm_ttl_seconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 300,
      description: "How long a /soul proposal can be applied with its /soul apply token (seconds).",
    }),
  },
  { default: {} },
);

const HttpSchema = Type.Object(
  {
    bind: Type.Optional(
      Type.String({ minLength: 1, description: "Address the HTTP server binds (default 127.0.0.1); FERMIX_HTTP_BIND overrides it. Changing it needs a restart." }),
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65_535, description: "Port of the HTTP server (default 4030); PORT overrides it. Changing it needs a restart." }),
    ),
    token_ttl_seconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 900,
      description: "How long a setup page link (`fermix setup --web`, or the one `fermix run` prints while setup is required) stays valid, in seconds; it opens the page once.",
    }),
  },
  { default: {}, description: "Where the HTTP server (dashboard, health, metrics, webhooks, setup page) listens, and its setup links. The environment wins over bind and port." },
);

const owned = {
  owner_user_id: Type.Optional(Id),
  command_allowlist: IdList,
  streaming: Type.Optional(Streaming),
};

const TelegramSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    bot_token: Type.Optional(Secret),
    allowed_user_ids: IdList,
    ...owned,
    album_debounce_ms: DebounceMs,
    api_root: Type.String({ minLength: 1, pattern: "^https?://[^\\s]*[^/\\s]$", default: "https://api.telegram.org" }),
  },
  { default: {} },
);

const WhatsAppSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    access_token: Type.Optional(Secret),
    phone_number_id: Type.Optional(Id),
    verify_token: Type.Optional(Secret),
    app_secret: Type.Optional(Secret),
    allowed_sender_ids: IdList,
    ...owned,
    album_debounce_ms: DebounceMs,
    max_message_age_hours: Type.Number({ exclusiveMinimum: 0, maximum: 24 * 365 * 10, default: 24 }),
    graph_api_base: Type.String({ ...Url, default: "https://graph.facebook.com/v21.0" }),
  },
  { default: {} },
);

const SlackSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    bot_token: Type.Optional(Secret),
    signing_secret: Type.Optional(Secret),
    allowed_user_ids: IdList,
    ...owned,
    api_url: Type.String({ ...Url, default: "https://slack.com/api/" }),
  },
  { default: {} },
);

const DiscordSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    bot_token: Type.Optional(Secret),
    bot_user_id: Type.Optional(Id),
    allowed_user_ids: IdList,
    ...owned,
    api_base: Type.String({ ...Url, default: "https://discord.com/api/v10" }),
  },
  { default: {} },
);

const SignalSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    account: Type.Optional(Type.String({ minLength: 1 })),
    cli_path: Type.String({ minLength: 1, default: "signal-cli" }),
    /** Where signal-cli stores received attachments; unset: $XDG_DATA_HOME/signal-cli/attachments. */
    attachments_dir: Type.Optional(Type.String({ minLength: 1 })),
    allowed_sender_ids: IdList,
    ...owned,
  },
  { default: {} },
);

const AcpSchema = Type.Object({ enabled: Type.Boolean({ default: true }) }, { default: {} });

export const ConfigSchema = Type.Object({
  fermix_core: Type.Object(
    {
      timezone: Type.Optional(
        Type.String({
          minLength: 1,
          format: "timezone",
          description: "The owner's time zone, an IANA name such as Europe/Paris: scheduled jobs read times and cron expressions in it. Unset: the system's.",
        }),
      ),
      max_reply_parts: Type.Integer({ minimum: 1, maximum: 1000, default: 12 }),
      providers: Type.Record(Type.String({ pattern: "^[A-Za-z0-9_-]+$" }), ProviderSchema, { default: {} }),
      compaction: CompactionSchema,
      transcription: TranscriptionSchema,
      delivery: DeliverySchema,
      retention: RetentionSchema,
      memory: MemorySchema,
      jobs: JobsSchema,
      ultra: UltraSchema,
      skills: SkillsSchema,
      sandbox: SandboxSchema,
      soul: SoulSchema,
      http: HttpSchema,
    },
    { default: {} },
  ),
  fermix_channels: Type.Object(
    {
      telegram: TelegramSchema,
      whatsapp: WhatsAppSchema,
      slack: SlackSchema,
      discord: DiscordSchema,
      signal: SignalSchema,
      acp: AcpSchema,
    },
    { default: {} },
  ),
});

export type Config = Static<typeof ConfigSchema>;
export type ProviderConfig = Static<typeof ProviderSchema>;
export type ChannelsConfig = Config["fermix_channels"];

export const CHANNEL_NAMES = ["telegram", "whatsapp", "slack", "discord", "signal", "acp"] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];
/** The chat channels: every channel but ACP, which authorizes by its socket. */
export type ChatChannelName = Exclude<ChannelName, "acp">;

/** Keys whose values are credentials: stored in the keychain, never logged. */
export const SECRET_KEYS: ReadonlyArray<readonly [section: string, key: string]> = [
  ["fermix_core.transcription", "api_key"],
  ["fermix_channels.telegram", "bot_token"],
  ["fermix_channels.whatsapp", "access_token"],
  ["fermix_channels.whatsapp", "verify_token"],
  ["fermix_channels.whatsapp", "app_secret"],
  ["fermix_channels.slack", "bot_token"],
  ["fermix_channels.slack", "signing_secret"],
  ["fermix_channels.discord", "bot_token"],
];

/** The schema at a dotted path, for error messages; undefined when no such key exists. */
export function schemaAt(path: string[]): TSchema | undefined {
  let node: TSchema | undefined = ConfigSchema;
  for (const part of path) {
    if (!node) return undefined;
    if (node.type === "object" && node.properties) node = node.properties[part];
    else if (node.type === "object" && node.patternProperties) node = Object.values(node.patternProperties)[0] as TSchema;
    else if (node.type === "array" && node.items) node = node.items as TSchema;
    else return undefined;
  }
  return node;
}
