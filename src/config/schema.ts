/**
 * The configuration schema: one TypeBox definition that is both the type of a
 * loaded config and its validator. Every key docs/configuration.md lists is
 * here, with its default.
 */
import { FormatRegistry, type SchemaOptions, type Static, type TLiteral, type TSchema, type TUnion, Type } from "@sinclair/typebox";
import { isHostName, isHostOrAddress } from "./hostname.ts";
import { isTimeZone } from "./timezone.ts";

// `[fermix_core] timezone` is checked against the zones the runtime knows, so a typo stops the load naming the key.
FormatRegistry.Set("timezone", isTimeZone);
// `[fermix_core.http] allowed_hosts`: a name with a scheme or a port would never match a Host header; say so at load.
FormatRegistry.Set("hostname", isHostName);
// `[fermix_core.web] allow_hosts`: a name or an IP address (IPv6 with or without brackets), never a URL.
FormatRegistry.Set("host-or-address", isHostOrAddress);

/** A union of string literals, typed as the union of its values. */
const literals = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnion<TLiteral<T[number]>[]> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

export const STREAMING_MODES = ["off", "draft", "block"] as const;
export type StreamingMode = (typeof STREAMING_MODES)[number];
export const PROVIDER_APIS = ["responses", "chat", "anthropic"] as const;
export type ProviderApi = (typeof PROVIDER_APIS)[number];
/** Where each wire format's own service lives: the base_url a provider of that `api` gets when it names none. */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderApi, string>> = {
  responses: "https://api.openai.com/v1",
  chat: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
};
export const TRANSCRIPTION_BACKENDS = ["openai", "xai", "deepgram"] as const;
export type TranscriptionBackend = (typeof TRANSCRIPTION_BACKENDS)[number];
/** Where web_search sends a query; "" is off. */
export const SEARCH_BACKENDS = ["", "brave", "searxng"] as const;
export type SearchBackend = (typeof SEARCH_BACKENDS)[number];
/**
 * The rows of the role table (src/gateway/roles.ts) an MCP server's tools
 * may be offered to. `owner_shared` is not among them: a tool server's tools
 * reach a shared chat only where the owner switched tools on there.
 */
export const MCP_ROLES = ["owner", "owner_shared_on", "allowed", "member"] as const;
export type McpRole = (typeof MCP_ROLES)[number];
/** An MCP server's name: what its tools are offered under (`<server>__<tool>`), so never two underscores in a row. */
export const MCP_SERVER_NAME = "^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$";

const Id = Type.String({ minLength: 1 });
const Url = Type.String({ minLength: 1, pattern: "^https?://" });
/** The building blocks, each with the words the configuration reference shows for the key it becomes. */
const id = (description: string) => Type.String({ minLength: 1, description });
const idList = (description: string) => Type.Array(Id, { default: [], description });
const secret = (description: string) =>
  Type.String({ minLength: 1, description: `${description} A credential: kept in the keychain or secrets.toml by \`fermix setup\`, never logged.` });
const enabled = (on: boolean, what: string) => Type.Boolean({ default: on, description: `Whether ${what} is served.` });
const debounceMs = () =>
  Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 3000,
    description: "How long images sent one by one as an album are held so they reach the assistant as one message (ms).",
  });

export const ProviderSchema = Type.Object({
  api: Type.Optional(
    literals(PROVIDER_APIS, {
      description:
        "The wire format: responses (the OpenAI Responses API), chat (OpenAI-compatible chat completions: Ollama, llama.cpp, vLLM, OpenRouter…) or anthropic (Anthropic's Messages API). Default: anthropic for the provider named anthropic, else responses.",
    }),
  ),
  base_url: Type.String({
    minLength: 1,
    pattern: "^https?://",
    default: "https://api.openai.com/v1",
    description: "The API root including its version; for api = anthropic the default is https://api.anthropic.com/v1.",
  }),
  model: Type.String({ minLength: 1, description: "The model to ask, as the server names it." }),
  api_key: Type.Optional(
    secret(
      "The provider's API key; OPENAI_API_KEY for the provider named openai, ANTHROPIC_API_KEY for the one named anthropic. A local server (localhost, a private network) may go without one.",
    ),
  ),
  auth_header: Type.Optional(
    literals(["x-api-key", "bearer"], {
      description:
        "api = anthropic: where the key goes, x-api-key (default, as Anthropic's API takes it) or bearer (Authorization: Bearer, for a gateway that wants it). The other APIs always send a Bearer token.",
    }),
  ),
  primary: Type.Optional(
    Type.Boolean({ description: "The provider that answers turns; a single provider is primary without saying so, two marked primary is an error." }),
  ),
  context_window: Type.Integer({
    minimum: 1,
    default: 128_000,
    description: "The model's context window in tokens: compaction summarises older messages as history approaches it.",
  }),
  vision: Type.Boolean({
    default: true,
    description: "Whether the model takes images; false: an image sent to the assistant is refused with a reply saying so.",
  }),
  connect_timeout_ms: Type.Integer({
    minimum: 1,
    maximum: 600_000,
    default: 10_000,
    description: "How long the server may take to start answering a request at all (its response headers) before the attempt is retried (ms).",
  }),
  first_byte_timeout_ms: Type.Integer({
    minimum: 1,
    maximum: 3_600_000,
    default: 60_000,
    description: "How long the model may take to send the first part of its answer before the turn fails with a message; not retried (ms).",
  }),
  idle_timeout_ms: Type.Integer({
    minimum: 1,
    maximum: 3_600_000,
    default: 90_000,
    description: "The longest silence allowed between two parts of an answer once it has started (ms).",
  }),
  max_tokens: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        "The most tokens one answer may take. Anthropic's API needs a limit: unset, 16384 (4096 for Claude 3 models, 8192 for Claude 3.5). The other APIs send it only when set.",
    }),
  ),
  thinking_budget_tokens: Type.Optional(
    Type.Integer({
      minimum: 1024,
      maximum: 1_000_000,
      description:
        "api = anthropic: extended thinking, with this many tokens to think in before answering (shown as the 💭 status while it thinks); unset: no thinking. Must be below max_tokens.",
    }),
  ),
});

const CompactionSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true, description: "Whether long conversations are summarised automatically as they approach the context window." }),
    threshold: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.85,
      description: "The share of the context window in use at which older messages are summarised.",
    }),
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
    retry_horizon_minutes: Type.Number({
      exclusiveMinimum: 0,
      maximum: 7 * 24 * 60,
      default: 15,
      description:
        "How long a reply a platform does not take (an outage, a rate limit) keeps being retried; past it the user is told, when the channel is back, that an answer could not be delivered (minutes).",
    }),
    waiting_notice_ms: Type.Integer({
      minimum: 0,
      maximum: 3_600_000,
      default: 20_000,
      description: 'After this long without a word from the model, a "still waiting" status shows until the answer starts (ms; 0: never).',
    }),
    hold_seconds: Type.Number({
      exclusiveMinimum: 0,
      maximum: 24 * 60 * 60,
      default: 60,
      description:
        "How long a message the platform keeps refusing, while it takes other calls for the same chat (typing, other messages), holds that chat's later replies, counted from its first failure; past it the message is set aside and the user told in one line what was not sent (a code block comes inline instead). While every call fails (an outage) nothing is set aside: replies wait up to retry_horizon_minutes (seconds).",
    }),
  },
  { default: {} },
);

const RetentionSchema = Type.Object(
  {
    outbox_days: Type.Number({
      exclusiveMinimum: 0,
      maximum: 3650,
      default: 7,
      description: "Sent (or given up) replies are kept this many days in the database, then deleted with their spooled files.",
    }),
    inbox_days: Type.Number({
      exclusiveMinimum: 0,
      maximum: 3650,
      default: 7,
      description: "A received message whose turn never completes is replayed at each start for this many days, then given up with a log line.",
    }),
  },
  { default: {} },
);

const MemorySchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: true,
      description:
        "Long-term memory: the remember/recall/forget tools, and relevant remembered facts in each turn's instructions. Off: neither (what is kept stays in the database).",
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
      description:
        "At most this many characters of remembered facts go into a turn's instructions; compaction counts them against the context window like history.",
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
      description: 'How long a turn waits for the owner to answer the agent\'s request_access before it goes on with "timed out" (seconds).',
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

export const COMPUTER_DISPLAYS = ["virtual", "host"] as const;
export type ComputerDisplay = (typeof COMPUTER_DISPLAYS)[number];

const ComputerSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description:
        "Computer use: the owner's assistant may drive a desktop (the `computer` tool), in the owner's direct chats only. Off: the tool is offered to nobody and no display is started.",
    }),
    display: literals(COMPUTER_DISPLAYS, {
      default: "virtual",
      description:
        "virtual: a private X display started for each session (Xvfb on a Unix socket with its own auth cookie, never TCP), with a window manager and the `start` programs; host: the display already running where the daemon runs (X11 through DISPLAY; Wayland and macOS are refused).",
    }),
    width: Type.Integer({ minimum: 320, maximum: 7680, default: 1280, description: "Width of the virtual display, in pixels." }),
    height: Type.Integer({ minimum: 240, maximum: 4320, default: 800, description: "Height of the virtual display, in pixels." }),
    max_actions: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 50,
      description: "At most this many desktop actions in one turn; past it the turn ends and says so.",
    }),
    idle_minutes: Type.Number({
      exclusiveMinimum: 0,
      maximum: 24 * 60,
      default: 15,
      description: "A desktop session nobody used for this long is torn down (display and programs); fractions of a minute are allowed.",
    }),
    start: Type.Array(Type.String({ minLength: 1 }), {
      default: ["xterm", "chromium"],
      description:
        "The programs opened on a virtual display when its session starts, one command line each (split on spaces, no shell); one that is not installed is skipped. Chromium is given the sandbox's network setting.",
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
      Type.String({
        minLength: 1,
        description:
          "Address the HTTP server binds (default 127.0.0.1); FERMIX_HTTP_BIND overrides it. Beyond loopback (anything but 127.0.0.0/8, ::1, localhost) the status page, /events, /metrics and the health report need the dashboard token. Changing it needs a restart.",
      }),
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65_535, description: "Port of the HTTP server (default 4030); PORT overrides it. Changing it needs a restart." }),
    ),
    token_ttl_seconds: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      default: 900,
      description:
        "How long a setup page link (`fermix setup --web`, or the one `fermix run` prints while setup is required) stays valid, in seconds; it opens the page once.",
    }),
    pair_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 600,
      // The terminal wizard's wait too (src/cli/setup-args.ts), so both faces of setup wait alike.
      default: 120,
      description: "How long the setup page's Telegram pairing waits for a message to the bot, in seconds, before it leaves the owner id to be typed by hand.",
    }),
    allowed_hosts: Type.Array(Type.String({ format: "hostname" }), {
      default: [],
      description:
        "Host names, besides IP addresses and localhost, that the status page, /events, /metrics, the health probes and the setup page answer to (e.g. the name a reverse proxy forwards with); any other Host is refused with 421. Names only: no scheme, no port, no wildcard; case does not matter. Webhooks answer under any name. A reload applies it.",
    }),
    dashboard_token: Type.Optional(
      Type.String({
        minLength: 16,
        description:
          "A fixed dashboard token (at least 16 characters) that lasts across restarts, e.g. for a /metrics scraper sending Authorization: Bearer. Used only when bind is beyond loopback, where it opens what the token `fermix run` prints at each start opens. A credential: keep it in the keychain or secrets.toml; never logged. A reload applies it.",
      }),
    ),
  },
  {
    default: {},
    description:
      "Where the HTTP server (dashboard, health, metrics, webhooks, setup page) listens, who it answers, and its setup links. The environment wins over bind and port.",
  },
);

const RealtimeSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description:
        "Realtime voice: a live spoken conversation with the assistant from `fermix talk`, the /talk page or a companion app on <home>/realtime.sock (docs/realtime.md).",
    }),
    provider: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "The provider (a table name under [fermix_core.providers]) whose realtime API answers: an OpenAI-kind one (api responses or chat), reached at its base_url with ws/wss and /realtime. Unset: the primary provider.",
      }),
    ),
    model: Type.String({ minLength: 1, default: "gpt-realtime", description: "The realtime model, as the provider names it." }),
    voice: Type.String({
      minLength: 1,
      default: "marin",
      description: "The voice the assistant speaks with, as the provider names it (e.g. marin, cedar, alloy).",
    }),
    instructions_extra: Type.String({
      default: "",
      description: "Words added to a voice session's instructions after SOUL.md and the memory the text turns use (e.g. a language to answer in).",
    }),
    max_session_minutes: Type.Number({
      exclusiveMinimum: 0,
      maximum: 24 * 60,
      default: 30,
      description: "A voice session ends after this many minutes (the companion is told and may start another).",
    }),
  },
  { default: {} },
);

const WebSchema = Type.Object(
  {
    allow_hosts: Type.Array(Type.String({ format: "host-or-address" }), {
      default: [],
      description:
        "Host names or IP addresses web_fetch may reach even though they are on this machine or a private network (a NAS, a home server); every other loopback, private, link-local, multicast or cloud-metadata address is refused, after DNS and after every redirect. Names only: no scheme, no port, no wildcard.",
    }),
    search_backend: literals(SEARCH_BACKENDS, {
      default: "",
      description:
        'Where web_search sends queries: brave (the Brave Search API) or searxng (a SearXNG instance\'s JSON API); "" (the default) offers no web_search.',
    }),
    brave_url: Type.String({
      ...Url,
      default: "https://api.search.brave.com/res/v1/web/search",
      description: "The Brave Search API's web search endpoint.",
    }),
    brave_api_key: Type.Optional(secret("The Brave Search API subscription token (BRAVE_API_KEY).")),
    searxng_url: Type.Optional(
      Type.String({
        ...Url,
        description: "The SearXNG instance's root, e.g. http://127.0.0.1:8888; queries go to <root>/search with format=json, which the instance must allow.",
      }),
    ),
    fetch_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 600,
      default: 30,
      description: "How long one web_fetch may take, redirects and reading the page included (seconds).",
    }),
    fetch_max_bytes: Type.Integer({
      minimum: 1024,
      maximum: 100_000_000,
      default: 5_000_000,
      description: "web_fetch reads at most this many bytes of a page (after decompression); the rest is not downloaded, and the answer says it was cut.",
    }),
  },
  { default: {}, description: "What the web_fetch and web_search tools may reach (docs/tools.md)." },
);

export const McpServerSchema = Type.Object({
  enabled: Type.Boolean({ default: true, description: "Whether this server is started and its tools offered." }),
  command: Type.Optional(
    Type.String({ minLength: 1, description: "A server on stdio: the program to start, a path or a name on PATH (give command or url, not both)." }),
  ),
  args: Type.Array(Type.String(), { default: [], description: "The program's arguments." }),
  env: Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }), Type.String(), {
    default: {},
    description:
      "Environment variables for the program, besides a minimal PATH, HOME, USER, SHELL and TERM (the daemon's own variables never reach it). Values are treated as credentials: never logged, and each may be kept in the keychain or secrets.toml under the same path, naming the variable here with an empty value.",
  }),
  cwd: Type.Optional(Type.String({ minLength: 1, description: "The folder the program starts in; default the Fermix home." })),
  url: Type.Optional(Type.String({ ...Url, description: "A server over streamable HTTP: its endpoint, e.g. http://127.0.0.1:3001/mcp." })),
  headers: Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" }), Type.String(), {
    default: {},
    description: "HTTP headers sent with every request to url (e.g. Authorization). Values are treated as credentials, like env's.",
  }),
  roles: Type.Array(literals(MCP_ROLES), {
    default: ["owner"],
    description:
      "The rows of the role table (docs/security.md) offered this server's tools: owner (the owner in a direct chat), owner_shared_on (the owner in a shared chat where /sandbox chat on was confirmed), allowed (an allowed sender in a direct chat), member (others in a shared chat, only where tools are on). [] offers them to nobody.",
  }),
  timeout_seconds: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 60,
    description: "How long one tool call may take before the model is told it timed out (seconds).",
  }),
});

const McpSchema = Type.Object(
  {
    servers: Type.Record(Type.String({ pattern: MCP_SERVER_NAME, maxLength: 32 }), McpServerSchema, {
      default: {},
      description: "MCP servers whose tools the assistant is offered, one table each: [fermix_core.mcp.servers.<name>].",
    }),
  },
  { default: {} },
);

const owned = {
  owner_user_id: Type.Optional(id("The owner's id on this channel (what /whoami shows): the operator, who may run every command.")),
  command_allowlist: idList("More ids allowed to run operator commands, besides the owner."),
  streaming: Type.Optional(
    literals(STREAMING_MODES, {
      description: "off, draft (a live message edited in place) or block (finished pieces as messages); unset: draft where the channel can edit, else block.",
    }),
  ),
};

const TelegramSchema = Type.Object(
  {
    enabled: enabled(true, "Telegram"),
    bot_token: Type.Optional(secret("The bot's token from @BotFather. Never read from TELEGRAM_BOT_TOKEN.")),
    allowed_user_ids: idList("User ids allowed to talk to the assistant (TELEGRAM_ALLOWED_USER_IDS, comma-separated)."),
    ...owned,
    album_debounce_ms: debounceMs(),
    api_root: Type.String({
      minLength: 1,
      pattern: "^https?://[^\\s]*[^/\\s]$",
      default: "https://api.telegram.org",
      description: "The Bot API server: a self-hosted one, or a test double.",
    }),
  },
  { default: {} },
);

const WhatsAppSchema = Type.Object(
  {
    enabled: enabled(false, "WhatsApp (Cloud API webhooks)"),
    access_token: Type.Optional(secret("The Cloud API access token (WHATSAPP_ACCESS_TOKEN).")),
    phone_number_id: Type.Optional(id("The sending phone number's id (WHATSAPP_PHONE_NUMBER_ID); not a secret.")),
    verify_token: Type.Optional(secret("The token Meta sends when the webhook is registered (WHATSAPP_VERIFY_TOKEN).")),
    app_secret: Type.Optional(secret("The app secret webhooks are signed with (WHATSAPP_APP_SECRET).")),
    allowed_sender_ids: idList("Numbers allowed to talk to the assistant (WHATSAPP_ALLOWED_SENDER_IDS, comma-separated)."),
    ...owned,
    album_debounce_ms: debounceMs(),
    max_message_age_hours: Type.Number({
      exclusiveMinimum: 0,
      maximum: 24 * 365 * 10,
      default: 24,
      description:
        "A message older than this by its own timestamp is acknowledged and dropped with a log line (a replayed capture gets no turn). WhatsApp's de-duplication keys are kept at least this long (and at least 24 hours), so a capture replayed inside the window is recognised.",
    }),
    graph_api_base: Type.String({ ...Url, default: "https://graph.facebook.com/v21.0", description: "The Graph API root, including its version." }),
  },
  { default: {} },
);

const SlackSchema = Type.Object(
  {
    enabled: enabled(false, "Slack (Events API webhooks)"),
    bot_token: Type.Optional(secret("The bot user's OAuth token, xoxb-… (SLACK_BOT_TOKEN).")),
    signing_secret: Type.Optional(secret("The app's signing secret, which verifies every webhook (SLACK_SIGNING_SECRET).")),
    allowed_user_ids: idList("User ids allowed to talk to the assistant (SLACK_ALLOWED_USER_IDS, comma-separated)."),
    ...owned,
    api_url: Type.String({ ...Url, default: "https://slack.com/api/", description: "The Web API root." }),
  },
  { default: {} },
);

const DiscordSchema = Type.Object(
  {
    enabled: enabled(false, "Discord (Gateway WebSocket and REST)"),
    bot_token: Type.Optional(secret("The bot's token (DISCORD_BOT_TOKEN).")),
    bot_user_id: Type.Optional(id("The bot's own user id (DISCORD_BOT_USER_ID); learnt at connection when unset.")),
    allowed_user_ids: idList("User ids allowed to talk to the assistant (DISCORD_ALLOWED_USER_IDS, comma-separated)."),
    ...owned,
    api_base: Type.String({ ...Url, default: "https://discord.com/api/v10", description: "The REST API root; the gateway URL is asked of it." }),
  },
  { default: {} },
);

const SignalSchema = Type.Object(
  {
    enabled: enabled(false, "Signal (through signal-cli)"),
    account: Type.Optional(Type.String({ minLength: 1, description: "The registered Signal number, e.g. +15550001111 (SIGNAL_ACCOUNT)." })),
    cli_path: Type.String({ minLength: 1, default: "signal-cli", description: "The signal-cli executable, a path or a name on PATH (SIGNAL_CLI_PATH)." }),
    attachments_dir: Type.Optional(
      Type.String({ minLength: 1, description: "Where signal-cli stores received attachments; unset: $XDG_DATA_HOME/signal-cli/attachments." }),
    ),
    allowed_sender_ids: idList("Numbers or UUIDs allowed to talk to the assistant (SIGNAL_ALLOWED_SENDER_IDS, comma-separated)."),
    ...owned,
  },
  { default: {} },
);

const AcpSchema = Type.Object({ enabled: enabled(true, "the editor socket (ACP, <home>/acp.sock)") }, { default: {} });

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
      max_reply_parts: Type.Integer({
        minimum: 1,
        maximum: 1000,
        default: 12,
        description: "A reply longer than this many messages is sent as its first part and the whole answer as a Markdown file, saying so.",
      }),
      providers: Type.Record(Type.String({ pattern: "^[A-Za-z0-9_-]+$" }), ProviderSchema, {
        default: {},
        description: "Model providers, one table each: [fermix_core.providers.<name>].",
      }),
      fallback: Type.Array(Type.String({ minLength: 1, pattern: "^[A-Za-z0-9_-]+$" }), {
        default: [],
        description:
          "Providers to answer when the primary cannot, in order (names of [fermix_core.providers.<name>] tables; not the primary, which is always tried first). A turn whose provider fails before any of its answer was shown (cannot connect, 5xx or overloaded after its retries, 429 past its Retry-After cap, no first byte in time) runs on the next one, once each.",
      }),
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
      computer: ComputerSchema,
      http: HttpSchema,
      realtime: RealtimeSchema,
      web: WebSchema,
      mcp: McpSchema,
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
export type McpServerConfig = Static<typeof McpServerSchema>;
export type ChannelsConfig = Config["fermix_channels"];

/**
 * The configured channels, one table each under [fermix_channels], in the
 * order health, doctor and setup list them. Each has its folder and profile
 * (src/channels/<name>/) and one line in src/channels/registry.ts.
 */
export const CHANNEL_NAMES = ["telegram", "whatsapp", "slack", "discord", "signal", "acp"] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];
/** The chat channels: every channel but ACP, which authorizes by its socket. */
export type ChatChannelName = Exclude<ChannelName, "acp">;
/** Every source of turns: the configured channels, the local command line and realtime voice, which have no table of their own. */
export const GATEWAY_CHANNELS = [...CHANNEL_NAMES, "cli", "realtime"] as const;
export type GatewayChannel = (typeof GATEWAY_CHANNELS)[number];

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
  ["fermix_core.http", "dashboard_token"],
  ["fermix_core.web", "brave_api_key"],
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
