/**
 * `[fermix_core.realtime]` resolved and checked: which provider a voice
 * session uses and at which WebSocket address, and the config errors that
 * name the key when the provider cannot serve realtime voice.
 */
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/errors.ts";
import { realtimeIssues, realtimeSettings, realtimeUrl } from "../../src/config/realtime.ts";
import type { Config } from "../../src/config/schema.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const OPENAI = `
[fermix_core.providers.openai]
model = "gpt-5.1"
api_key = "sk-test-realtime-config-0000"
`;
const LOCAL = `
[fermix_core.providers.local]
api = "chat"
base_url = "http://127.0.0.1:8080/v1"
model = "llama"
`;

describe("the realtime endpoint", () => {
  test("is the provider's base_url with ws/wss and /realtime, the model in the query", () => {
    expect(realtimeUrl({ base_url: "https://api.openai.com/v1" }, "gpt-realtime")).toBe("wss://api.openai.com/v1/realtime?model=gpt-realtime");
    expect(realtimeUrl({ base_url: "http://127.0.0.1:8080/v1/" }, "a model/with spaces")).toBe("ws://127.0.0.1:8080/v1/realtime?model=a+model%2Fwith+spaces");
  });
});

describe("realtimeSettings", () => {
  test("off: none", () => {
    expect(realtimeSettings(loadedFrom(OPENAI).config)).toBeUndefined();
  });

  test("on: the named provider, else the primary, with the section's model, voice, extra words and time limit", () => {
    const primary = realtimeSettings(loadedFrom(`${OPENAI}\n[fermix_core.realtime]\nenabled = true\n`).config);
    expect(primary).toEqual({
      provider: "openai",
      url: "wss://api.openai.com/v1/realtime?model=gpt-realtime",
      apiKey: "sk-test-realtime-config-0000",
      model: "gpt-realtime",
      voice: "marin",
      instructionsExtra: "",
      maxSessionMs: 30 * 60_000,
    });
    const named = realtimeSettings(
      loadedFrom(
        `${OPENAI}${LOCAL}\n[fermix_core.realtime]\nenabled = true\nprovider = "local"\nmodel = "m"\nvoice = "cedar"\nmax_session_minutes = 2\ninstructions_extra = "Be short."\n`,
      ).config,
    );
    expect(named).toEqual({
      provider: "local",
      url: "ws://127.0.0.1:8080/v1/realtime?model=m",
      model: "m",
      voice: "cedar",
      instructionsExtra: "Be short.",
      maxSessionMs: 120_000,
    });
  });
});

describe("config errors", () => {
  test("a provider that is not configured stops the load, naming the key and what is allowed", () => {
    let error: unknown;
    try {
      loadedFrom(`${OPENAI}\n[fermix_core.realtime]\nenabled = true\nprovider = "nope"\n`);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(
      'fermix_core.realtime.provider = "nope" is not valid: expected the name of a configured provider (openai), an OpenAI-kind provider (api responses or chat)',
    );
  });

  test("a provider of another kind is an error naming the key", () => {
    const config = loadedFrom(`${OPENAI}\n[fermix_core.realtime]\nenabled = true\n`).config;
    const other = structuredClone(config) as Config;
    (other.fermix_core.providers.openai as { api: string }).api = "anthropic";
    expect(realtimeIssues(other)).toEqual([
      {
        key: "fermix_core.realtime.provider",
        value: "openai",
        allowed: "an OpenAI-kind provider (api responses or chat): the primary provider has api anthropic",
      },
    ]);
    // Off, nothing is checked: the provider may be anything.
    other.fermix_core.realtime.enabled = false;
    expect(realtimeIssues(other)).toEqual([]);
  });

  test("the section's values are checked by the schema: a time limit of zero names the key", () => {
    expect(() => loadedFrom(`${OPENAI}\n[fermix_core.realtime]\nmax_session_minutes = 0\n`)).toThrow("fermix_core.realtime.max_session_minutes");
  });
});
