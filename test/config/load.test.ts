import { describe, expect, test } from "bun:test";
import { ConfigError, parseConfigText, resolveConfig, unknownKeys } from "../../src/config/load.ts";

const FILE = "/home/you/.fermix/config.toml";
const resolve = (toml: string, env: Record<string, string> = {}, secrets: Record<string, string> = {}) =>
  resolveConfig({ file: parseConfigText(toml, FILE), env, secrets, filePath: FILE });

function configError(toml: string, env: Record<string, string> = {}): ConfigError {
  try {
    resolve(toml, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("defaults", () => {
  test("an empty file yields every documented default", () => {
    const { config, warnings } = resolve("");
    expect(warnings).toEqual([]);
    expect(config.fermix_channels.telegram).toMatchObject({
      enabled: true,
      album_debounce_ms: 3000,
      api_root: "https://api.telegram.org",
      allowed_user_ids: [],
    });
    expect(config.fermix_channels.telegram.streaming).toBeUndefined();
    expect(config.fermix_channels.whatsapp).toMatchObject({ enabled: false, graph_api_base: "https://graph.facebook.com/v21.0" });
    expect(config.fermix_channels.slack).toMatchObject({ enabled: false, api_url: "https://slack.com/api/" });
    expect(config.fermix_channels.discord).toMatchObject({ enabled: false, api_base: "https://discord.com/api/v10" });
    expect(config.fermix_channels.signal).toMatchObject({ enabled: false, cli_path: "signal-cli" });
    expect(config.fermix_channels.acp.enabled).toBe(true);
    expect(config.fermix_core.compaction).toEqual({ enabled: true, threshold: 0.85 });
    expect(config.fermix_core.transcription.max_file_mb).toBe(20);
  });

  test("a single provider is primary and speaks the Responses API by default", () => {
    const { config } = resolve(`[fermix_core.providers.local]\nmodel = "llama3"\nbase_url = "http://127.0.0.1:11434/v1"\n`);
    expect(config.fermix_core.providers.local).toMatchObject({ api: "responses", primary: true, vision: true, model: "llama3" });
  });

  test("several providers with none marked: the first is primary, with a warning", () => {
    const { config, warnings } = resolve(`[fermix_core.providers.a]\nmodel = "m"\n[fermix_core.providers.b]\nmodel = "n"\n`);
    expect(config.fermix_core.providers.a!.primary).toBe(true);
    expect(config.fermix_core.providers.b!.primary).toBeUndefined();
    expect(warnings).toEqual(["no provider is marked primary; using a (set primary = true on one provider)"]);
  });
});

describe("validation errors name the key, the value and what is allowed", () => {
  test("streaming lists its three valid values", () => {
    const error = configError(`[fermix_channels.telegram]\nstreaming = "fast"\n`);
    expect(error.message).toBe(
      `invalid config in ${FILE}:\n  fermix_channels.telegram.streaming = "fast" is not valid: expected one of "off", "draft", "block"`,
    );
    expect(error.issues).toEqual([{ key: "fermix_channels.telegram.streaming", value: "fast", allowed: 'one of "off", "draft", "block"' }]);
  });

  test("a provider api outside responses|chat|anthropic", () => {
    const error = configError(`[fermix_core.providers.openai]\nmodel = "m"\napi = "completions"\n`);
    expect(error.message).toContain(`fermix_core.providers.openai.api = "completions" is not valid: expected one of "responses", "chat", "anthropic"`);
  });

  test("a transcription backend outside the three", () => {
    const error = configError(`[fermix_core.transcription]\nbackend = "whisper"\n`);
    expect(error.message).toContain(`fermix_core.transcription.backend = "whisper" is not valid: expected one of "openai", "xai", "deepgram"`);
  });

  test("a number where a boolean belongs", () => {
    expect(configError(`[fermix_channels.slack]\nenabled = 3\n`).message).toContain("fermix_channels.slack.enabled = 3 is not valid: expected true or false");
  });

  test("an out-of-range integer names its range", () => {
    expect(configError(`[fermix_channels.whatsapp]\nalbum_debounce_ms = -5\n`).message).toContain(
      "fermix_channels.whatsapp.album_debounce_ms = -5 is not valid: expected an integer at least 0 and at most 60000",
    );
  });

  test("a threshold outside (0, 1]", () => {
    expect(configError(`[fermix_core.compaction]\nthreshold = 1.5\n`).message).toContain(
      "fermix_core.compaction.threshold = 1.5 is not valid: expected a number greater than 0 and at most 1",
    );
  });

  test("a URL that is not http(s), and a Telegram api_root with a trailing slash", () => {
    expect(configError(`[fermix_channels.slack]\napi_url = "slack.com"\n`).message).toContain(
      `fermix_channels.slack.api_url = "slack.com" is not valid: expected an http(s) URL`,
    );
    expect(configError(`[fermix_channels.telegram]\napi_root = "http://127.0.0.1:9/"\n`).message).toContain(
      `fermix_channels.telegram.api_root = "http://127.0.0.1:9/" is not valid: expected an http(s) URL without a trailing /`,
    );
  });

  test("a missing provider model", () => {
    expect(configError(`[fermix_core.providers.openai]\napi_key = "sk-1234567890"\n`).message).toContain(
      "fermix_core.providers.openai.model is missing: expected a non-empty string",
    );
  });

  test("an allowlist entry that is not an id names its position", () => {
    expect(configError(`[fermix_channels.telegram]\nallowed_user_ids = ["1", { a = 1 }]\n`).message).toContain(
      'fermix_channels.telegram.allowed_user_ids[1] = {"a":1} is not valid: expected a non-empty string',
    );
  });

  test("two primary providers", () => {
    const error = configError(`[fermix_core.providers.a]\nmodel = "m"\nprimary = true\n[fermix_core.providers.b]\nmodel = "n"\nprimary = true\n`);
    expect(error.message).toContain("fermix_core.providers.b.primary = true is not valid: expected at most one primary provider (a is already primary)");
  });

  test("a secret of the wrong type is reported without its value", () => {
    const error = configError(`[fermix_channels.slack]\nbot_token = ["xoxb-1234567890123"]\n`);
    expect(error.message).toContain("fermix_channels.slack.bot_token = [redacted] is not valid: expected a non-empty string");
    expect(error.message).not.toContain("1234567890123");
  });

  test("every bad key is listed, not just the first", () => {
    const error = configError(`[fermix_channels.telegram]\nstreaming = "x"\nenabled = "maybe"\n`);
    expect(error.issues.map((i) => i.key).sort()).toEqual(["fermix_channels.telegram.enabled", "fermix_channels.telegram.streaming"]);
  });

  test("a TOML syntax error names the file", () => {
    expect(() => parseConfigText(`[fermix_channels.telegram\n`, FILE)).toThrow(`cannot parse ${FILE}: TOML Parse error`);
  });

  test("a wrong TOML type is refused, not coerced: the key, the value, the expected type and how to write it", () => {
    const error = configError(`[fermix_channels.telegram]\nowner_user_id = 42\nallowed_user_ids = 123\n[fermix_channels.slack]\nsigning_secret = 12345678\n`);
    expect(error.message).toContain('fermix_channels.telegram.owner_user_id = 42 is not valid: expected a non-empty string (quote it: "42")');
    expect(error.message).toContain(
      'fermix_channels.telegram.allowed_user_ids = 123 is not valid: expected a list of non-empty strings (write a list: ["123"])',
    );
    expect(error.message).toContain("fermix_channels.slack.signing_secret = [redacted] is not valid: expected a non-empty string");
    expect(error.message).not.toContain("12345678");
    // Quoted, the same values load.
    const { config } = resolve(`[fermix_channels.telegram]\nowner_user_id = "42"\nallowed_user_ids = ["123"]\n`);
    expect(config.fermix_channels.telegram.owner_user_id).toBe("42");
  });
});

describe("Anthropic", () => {
  test("the provider named anthropic speaks its API at its own URL; any provider may say api = anthropic; ANTHROPIC_API_KEY keys the one named anthropic", () => {
    const { config } = resolve(
      `[fermix_core.providers.anthropic]\nmodel = "claude-sonnet-4-5"\nprimary = true\n[fermix_core.providers.gateway]\napi = "anthropic"\nmodel = "claude"\nbase_url = "https://gateway.example/v1"\n`,
      { ANTHROPIC_API_KEY: "sk-ant-env" },
    );
    expect(config.fermix_core.providers.anthropic).toMatchObject({ api: "anthropic", base_url: "https://api.anthropic.com/v1", api_key: "sk-ant-env" });
    expect(config.fermix_core.providers.gateway).toMatchObject({ api: "anthropic", base_url: "https://gateway.example/v1" });
    expect(config.fermix_core.providers.gateway!.api_key).toBeUndefined();
  });

  test("a thinking budget at or above max_tokens is refused naming the key", () => {
    const error = configError(`[fermix_core.providers.anthropic]\nmodel = "claude"\nmax_tokens = 4000\nthinking_budget_tokens = 4000\n`);
    expect(error.issues).toEqual([
      {
        key: "fermix_core.providers.anthropic.thinking_budget_tokens",
        value: 4000,
        allowed: "less than max_tokens (4000): the answer comes after the thinking, within the same limit",
      },
    ]);
    expect(
      resolve(`[fermix_core.providers.anthropic]\nmodel = "claude"\nmax_tokens = 8000\nthinking_budget_tokens = 4000\n`).config.fermix_core.providers.anthropic,
    ).toMatchObject({
      max_tokens: 8000,
      thinking_budget_tokens: 4000,
    });
  });
});

describe("fallback", () => {
  const providers = `[fermix_core.providers.a]\nmodel = "m"\nprimary = true\n[fermix_core.providers.b]\nmodel = "m"\n[fermix_core.providers.c]\nmodel = "m"\n`;

  test("lists configured providers other than the primary, in order; empty by default", () => {
    expect(resolve(providers).config.fermix_core.fallback).toEqual([]);
    expect(resolve(`[fermix_core]\nfallback = ["c", "b"]\n${providers}`).config.fermix_core.fallback).toEqual(["c", "b"]);
  });

  test("the primary in the list is a config error naming the key", () => {
    const error = configError(`[fermix_core]\nfallback = ["b", "a"]\n${providers}`);
    expect(error.issues).toEqual([
      { key: "fermix_core.fallback[1]", value: "a", allowed: "a provider other than the primary (a is primary and always tried first)" },
    ]);
    expect(error.message).toContain("fermix_core.fallback[1]");
  });

  test("a name that is no provider, or one listed twice, is refused naming its place", () => {
    const error = configError(`[fermix_core]\nfallback = ["b", "x", "b"]\n${providers}`);
    expect(error.issues).toEqual([
      { key: "fermix_core.fallback[1]", value: "x", allowed: "the name of a configured provider (a, b, c)" },
      { key: "fermix_core.fallback[2]", value: "b", allowed: "each provider once (it is already earlier in the list)" },
    ]);
  });
});

describe("unknown keys", () => {
  test("are warnings that name the nearest known key", () => {
    const { warnings } = resolve(`[fermix_channels.telegram]\nbot_tokn = "x"\n[fermix_channel.slack]\nenabled = true\n`);
    expect(warnings).toEqual([
      "unknown config key fermix_channels.telegram.bot_tokn (did you mean fermix_channels.telegram.bot_token?)",
      "unknown config key fermix_channel (did you mean fermix_channels?)",
    ]);
  });

  test("with nothing close, no suggestion is invented", () => {
    expect(unknownKeys({ fermix_core: { compaction: { zzzzzzzzzz: 1 } } })).toEqual([{ key: "fermix_core.compaction.zzzzzzzzzz" }]);
  });

  test("inside a provider table", () => {
    expect(unknownKeys({ fermix_core: { providers: { openai: { model: "m", modle: "x" } } } })).toEqual([
      { key: "fermix_core.providers.openai.modle", suggestion: "fermix_core.providers.openai.model" },
    ]);
  });
});

describe("layering: defaults < file < keychain < environment", () => {
  const toml = `
[fermix_core.providers.openai]
model = "gpt-5.1"
api_key = "sk-from-file-0000"

[fermix_channels.slack]
enabled = true
bot_token = "xoxb-from-file"
signing_secret = "secret-from-file"
allowed_user_ids = ["UFILE"]
`;

  test("the file overrides defaults", () => {
    expect(resolve(toml).config.fermix_channels.slack.enabled).toBe(true);
  });

  test("the keychain overrides the file", () => {
    const { config } = resolve(toml, {}, { "fermix_channels.slack.bot_token": "xoxb-from-keychain" });
    expect(config.fermix_channels.slack.bot_token).toBe("xoxb-from-keychain");
    expect(config.fermix_channels.slack.signing_secret).toBe("secret-from-file");
  });

  test("the environment overrides the keychain and the file", () => {
    const { config } = resolve(
      toml,
      { SLACK_BOT_TOKEN: "xoxb-from-env", SLACK_ALLOWED_USER_IDS: "U1, U2,,U3 ", OPENAI_API_KEY: "sk-from-env-1111" },
      { "fermix_channels.slack.bot_token": "xoxb-from-keychain", "fermix_core.providers.openai.api_key": "sk-from-keychain" },
    );
    expect(config.fermix_channels.slack.bot_token).toBe("xoxb-from-env");
    expect(config.fermix_channels.slack.allowed_user_ids).toEqual(["U1", "U2", "U3"]);
    expect(config.fermix_core.providers.openai!.api_key).toBe("sk-from-env-1111");
  });

  test("every channel variable lands on its key", () => {
    const { config } = resolve("", {
      TELEGRAM_ALLOWED_USER_IDS: "1,2",
      WHATSAPP_ACCESS_TOKEN: "wa-access",
      WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
      WHATSAPP_VERIFY_TOKEN: "wa-verify",
      WHATSAPP_APP_SECRET: "wa-secret",
      WHATSAPP_ALLOWED_SENDER_IDS: "16505551234",
      DISCORD_BOT_TOKEN: "discord-token",
      DISCORD_BOT_USER_ID: "999",
      DISCORD_ALLOWED_USER_IDS: "7",
      SIGNAL_ACCOUNT: "+15550001111",
      SIGNAL_CLI_PATH: "/opt/signal-cli",
      SIGNAL_ALLOWED_SENDER_IDS: "+15550002222",
      SLACK_SIGNING_SECRET: "slack-signing",
    });
    const ch = config.fermix_channels;
    expect(ch.telegram.allowed_user_ids).toEqual(["1", "2"]);
    expect(ch.whatsapp).toMatchObject({
      access_token: "wa-access",
      phone_number_id: "106540352242922",
      verify_token: "wa-verify",
      app_secret: "wa-secret",
      allowed_sender_ids: ["16505551234"],
    });
    expect(ch.discord).toMatchObject({ bot_token: "discord-token", bot_user_id: "999", allowed_user_ids: ["7"] });
    expect(ch.signal).toMatchObject({ account: "+15550001111", cli_path: "/opt/signal-cli", allowed_sender_ids: ["+15550002222"] });
    expect(ch.slack.signing_secret).toBe("slack-signing");
  });

  test("TELEGRAM_BOT_TOKEN is never read", () => {
    const { config } = resolve("", { TELEGRAM_BOT_TOKEN: "123:from-env" });
    expect(config.fermix_channels.telegram.bot_token).toBeUndefined();
    const fromFile = resolve(`[fermix_channels.telegram]\nbot_token = "123:from-file"\n`, { TELEGRAM_BOT_TOKEN: "123:from-env" });
    expect(fromFile.config.fermix_channels.telegram.bot_token).toBe("123:from-file");
  });

  test("a provider key variable applies only to the provider of that name", () => {
    const { config } = resolve(`[fermix_core.providers.local]\nmodel = "m"\nbase_url = "http://127.0.0.1:1/v1"\n`, {
      OPENAI_API_KEY: "sk-env-openai",
    });
    expect(config.fermix_core.providers.local!.api_key).toBeUndefined();
    expect(config.fermix_core.providers.openai).toBeUndefined();
  });

  test("the transcription backend takes the key variable of its name", () => {
    expect(resolve("", { OPENAI_API_KEY: "sk-openai-env" }).config.fermix_core.transcription.api_key).toBe("sk-openai-env");
    const deepgram = resolve(`[fermix_core.transcription]\nbackend = "deepgram"\n`, {
      OPENAI_API_KEY: "sk-openai-env",
      DEEPGRAM_API_KEY: "dg-env-key",
    });
    expect(deepgram.config.fermix_core.transcription.api_key).toBe("dg-env-key");
  });

  test("every credential is reported for redaction", () => {
    const { secretValues } = resolve(toml, { SLACK_SIGNING_SECRET: "secret-from-env" });
    expect(secretValues.sort()).toEqual(["secret-from-env", "sk-from-file-0000", "xoxb-from-file"].sort());
  });
});
