/** Setup's plan and write: merged into the user's file without losing their keys or comments, secrets apart, validated by the loader. */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config/errors.ts";
import { changesFromFlags, providerChanges } from "../../src/setup/changes.ts";
import { planSetup } from "../../src/setup/plan.ts";
import { applySetup, readCurrentSetup } from "../../src/setup/write.ts";

const FILE = "/home/u/.fermix/config.toml";

const HAND_WRITTEN = `# My Fermix. Hands off my comments.
[fermix_core.providers.openai]   # the main one
model = "gpt-5.1"  # pinned on purpose
context_window = 400000

[fermix_core.compaction]
threshold = 0.7 # compaction earlier than the default

# Telegram, for the family
[fermix_channels.telegram]
owner_user_id = "1"
allowed_user_ids = ["2", "3"]
`;

test("changes land in the user's file: comments, unmanaged keys and layout kept; new tables get headers", () => {
  const plan = planSetup({
    currentText: HAND_WRITTEN,
    currentSecrets: {},
    filePath: FILE,
    changes: [
      { path: "fermix_channels.telegram.owner_user_id", value: "42" },
      { path: "fermix_core.transcription.backend", value: "deepgram" },
      { path: "fermix_channels.slack.enabled", value: true },
      { path: "fermix_channels.slack.owner_user_id", value: "U1" },
    ],
  });
  expect(plan.text).toContain("# My Fermix. Hands off my comments.");
  expect(plan.text).toContain("# pinned on purpose");
  expect(plan.text).toContain("threshold = 0.7 # compaction earlier than the default");
  expect(plan.text).toContain('# Telegram, for the family\n[fermix_channels.telegram]\nowner_user_id = "42"\nallowed_user_ids = ["2", "3"]');
  expect(plan.text).toContain('\n[fermix_core.transcription]\nbackend = "deepgram"\n');
  expect(plan.text).toContain('\n[fermix_channels.slack]\nenabled = true\nowner_user_id = "U1"\n');
  expect(plan.changed.sort()).toEqual([
    "fermix_channels.slack.enabled",
    "fermix_channels.slack.owner_user_id",
    "fermix_channels.telegram.owner_user_id",
    "fermix_core.transcription.backend",
  ]);
  expect(plan.resolved.config.fermix_core.compaction.threshold).toBe(0.7);
});

test("credentials never reach config.toml: they go to the plan's secrets, and one found in the file moves out", () => {
  const text = `${HAND_WRITTEN}bot_token = "123:in-the-file-by-hand"\n`;
  const plan = planSetup({
    currentText: text,
    currentSecrets: {},
    filePath: FILE,
    changes: [
      { path: "fermix_channels.telegram.bot_token", value: "123:new-token-value" },
      { path: "fermix_core.providers.openai.api_key", value: "sk-new-key-value" },
    ],
  });
  expect(plan.text).not.toContain("in-the-file-by-hand");
  expect(plan.text).not.toContain("new-token-value");
  expect(plan.text).not.toContain("sk-new");
  expect(plan.secrets).toEqual({
    "fermix_channels.telegram.bot_token": "123:new-token-value",
    "fermix_core.providers.openai.api_key": "sk-new-key-value",
  });
  expect(plan.resolved.config.fermix_channels.telegram.bot_token).toBe("123:new-token-value");
});

test("a bad value fails with the config loader's message, naming the key, the value and what is allowed", () => {
  const attempt = () =>
    planSetup({
      currentText: "",
      currentSecrets: {},
      filePath: FILE,
      changes: changesFromFlags({ "provider-base-url": "ftp://example.com", model: "m", "telegram-enabled": "soon" }, {}, true),
    });
  expect(attempt).toThrow(ConfigError);
  expect(attempt).toThrow(`invalid config in ${FILE}:`);
  expect(attempt).toThrow('fermix_core.providers.custom.base_url = "ftp://example.com" is not valid: expected an http(s) URL');
  expect(attempt).toThrow('fermix_channels.telegram.enabled = "soon" is not valid: expected true or false');
});

test("a new primary provider demotes the old one, so the loader never sees two", () => {
  const text = `[fermix_core.providers.openai]\nmodel = "gpt-5.1"\nprimary = true\n`;
  const plan = planSetup({
    currentText: text,
    currentSecrets: {},
    filePath: FILE,
    changes: providerChanges(Bun.TOML.parse(text) as Record<string, unknown>, {
      name: "ollama",
      api: "chat",
      base_url: "http://127.0.0.1:11434/v1",
      model: "llama3.2",
      vision: false,
    }),
  });
  const providers = plan.resolved.config.fermix_core.providers;
  expect(providers.ollama!.primary).toBe(true);
  expect(providers.openai!.primary).toBe(false);
  expect(providers.ollama!.api).toBe("chat");
});

test("written atomically: mode 0600, the previous file kept as config.toml.bak, secrets in the 0600 store", async () => {
  const home = join(mkdtempSync(join(tmpdir(), "fermix-setup-")), ".fermix");
  const env = { FERMIX_HOME: home, FERMIX_SECRET_STORE: "file" };
  const first = await applySetup(await readCurrentSetup(env), changesFromFlags({ model: "gpt-5.1", "api-key": "sk-first-key-000" }, {}, true));
  expect(first.wrote).toBe(true);
  expect(first.backupPath).toBeUndefined();
  expect(statSync(join(home, "config.toml")).mode & 0o777).toBe(0o600);
  expect(statSync(join(home, "secrets.toml")).mode & 0o777).toBe(0o600);
  expect(readFileSync(join(home, "secrets.toml"), "utf8")).toContain("sk-first-key-000");
  expect(readFileSync(join(home, "config.toml"), "utf8")).not.toContain("sk-first");

  writeFileSync(join(home, "config.toml"), `${readFileSync(join(home, "config.toml"), "utf8")}\n# a note of mine\n`);
  const before = readFileSync(join(home, "config.toml"), "utf8");
  const current = await readCurrentSetup(env);
  const second = await applySetup(current, changesFromFlags({ model: "gpt-6" }, Bun.TOML.parse(current.text) as Record<string, unknown>, false));
  expect(second.backupPath).toBe(join(home, "config.toml.bak"));
  expect(readFileSync(second.backupPath!, "utf8")).toBe(before);
  expect(statSync(second.backupPath!).mode & 0o777).toBe(0o600);
  const after = readFileSync(join(home, "config.toml"), "utf8");
  expect(after).toContain('model = "gpt-6"');
  expect(after).toContain("# a note of mine");
  expect(second.plan.resolved.config.fermix_core.providers.openai!.api_key).toBe("sk-first-key-000");
  expect(existsSync(join(home, `config.toml.${process.pid}.tmp`))).toBe(false);
});

test("flags name the channels they configure; a fresh home writes Telegram off unless a flag names it", () => {
  const fresh = changesFromFlags({ model: "m" }, {}, true);
  expect(fresh).toContainEqual({ path: "fermix_channels.telegram.enabled", value: false });
  const slack = changesFromFlags({ "slack-owner": "U1" }, {}, false);
  expect(slack).toContainEqual({ path: "fermix_channels.slack.enabled", value: true });
  expect(slack).toContainEqual({ path: "fermix_channels.slack.owner_user_id", value: "U1" });
  expect(slack.some((c) => c.path === "fermix_channels.telegram.enabled")).toBe(false);
  expect(() => changesFromFlags({ "telegram-tokn": "x" }, {}, false)).toThrow('unknown option "--telegram-tokn"');
  const local = changesFromFlags({ "provider-base-url": "http://127.0.0.1:11434/v1", model: "llama3.2" }, {}, true);
  expect(local).toContainEqual({ path: "fermix_core.providers.ollama.api", value: "chat" });
  expect(local).toContainEqual({ path: "fermix_core.providers.ollama.primary", value: true });
});

test("--provider anthropic brings Anthropic's API (its URL is the default), made primary; a later --provider openai demotes it and keeps it as a fallback named by --fallback", () => {
  const first = planSetup({
    currentText: "",
    currentSecrets: {},
    filePath: FILE,
    changes: changesFromFlags({ provider: "anthropic", model: "claude-sonnet-4-5", "api-key": "sk-ant-0000" }, {}, true),
  });
  const claude = first.resolved.config.fermix_core.providers.anthropic!;
  expect(claude).toMatchObject({ api: "anthropic", base_url: "https://api.anthropic.com/v1", model: "claude-sonnet-4-5", primary: true });
  expect(first.secrets).toEqual({ "fermix_core.providers.anthropic.api_key": "sk-ant-0000" });

  const file = Bun.TOML.parse(first.text) as Record<string, unknown>;
  const second = planSetup({
    currentText: first.text,
    currentSecrets: first.secrets,
    filePath: FILE,
    changes: changesFromFlags({ provider: "openai", model: "gpt-5.1", fallback: "anthropic" }, file, false),
  });
  const { providers, fallback } = second.resolved.config.fermix_core;
  expect(providers.openai).toMatchObject({ api: "responses", primary: true });
  expect(providers.anthropic!.primary).toBe(false);
  expect(fallback).toEqual(["anthropic"]);

  // Making the fallback primary again takes it out of the list: the loader would refuse it there.
  const third = planSetup({
    currentText: second.text,
    currentSecrets: second.secrets,
    filePath: FILE,
    changes: changesFromFlags({ provider: "anthropic" }, Bun.TOML.parse(second.text) as Record<string, unknown>, false),
  });
  expect(third.resolved.config.fermix_core.fallback).toEqual([]);
  expect(third.resolved.config.fermix_core.providers.anthropic!.primary).toBe(true);
});

test("--provider with a URL of its own keeps the URL (a gateway, a fake); --fallback naming no provider fails with the loader's message", () => {
  const changes = changesFromFlags({ provider: "anthropic", "provider-base-url": "http://127.0.0.1:9/v1", model: "claude" }, {}, true);
  expect(changes).toContainEqual({ path: "fermix_core.providers.anthropic.base_url", value: "http://127.0.0.1:9/v1" });
  expect(changes).toContainEqual({ path: "fermix_core.providers.anthropic.api", value: "anthropic" });
  expect(() =>
    planSetup({ currentText: "", currentSecrets: {}, filePath: FILE, changes: changesFromFlags({ model: "m", fallback: "nobody" }, {}, true) }),
  ).toThrow(/fermix_core\.fallback\[0\] = "nobody" is not valid: expected the name of a configured provider/);
});

test("realtime voice by flags: --realtime-enabled and its keys are written; a provider that is not configured fails with the loader's message", () => {
  const changes = changesFromFlags({ "realtime-enabled": "yes", "realtime-voice": "cedar", "realtime-model": "gpt-realtime-mini" }, {}, false);
  expect(changes).toEqual([
    { path: "fermix_core.realtime.enabled", value: true },
    { path: "fermix_core.realtime.model", value: "gpt-realtime-mini" },
    { path: "fermix_core.realtime.voice", value: "cedar" },
  ]);
  const plan = planSetup({ currentText: HAND_WRITTEN, currentSecrets: {}, changes, filePath: FILE });
  expect(plan.text).toContain('[fermix_core.realtime]\nenabled = true\nmodel = "gpt-realtime-mini"\nvoice = "cedar"');
  expect(plan.resolved.config.fermix_core.realtime).toMatchObject({ enabled: true, voice: "cedar" });
  const elsewhere = changesFromFlags({ "realtime-enabled": "true", "realtime-provider": "nope" }, {}, false);
  expect(() => planSetup({ currentText: HAND_WRITTEN, currentSecrets: {}, changes: elsewhere, filePath: FILE })).toThrow(
    'fermix_core.realtime.provider = "nope" is not valid: expected the name of a configured provider (openai)',
  );
});

test("web search by flags: the backend into config.toml, the Brave key into the secret store, a bad URL refused by the loader", () => {
  const brave = planSetup({
    currentText: HAND_WRITTEN,
    currentSecrets: {},
    changes: changesFromFlags({ "search-backend": "brave", "brave-api-key": "BSA-flag-key" }, {}, false),
    filePath: FILE,
  });
  expect(brave.secrets).toEqual({ "fermix_core.web.brave_api_key": "BSA-flag-key" });
  expect(brave.text).toContain('[fermix_core.web]\nsearch_backend = "brave"');
  expect(brave.text).not.toContain("BSA-flag-key");
  expect(brave.resolved.config.fermix_core.web.brave_api_key).toBe("BSA-flag-key");
  const searxng = planSetup({
    currentText: "",
    currentSecrets: {},
    changes: changesFromFlags({ "search-backend": "searxng", "searxng-url": "http://127.0.0.1:8888" }, {}, false),
    filePath: FILE,
  });
  expect(searxng.resolved.config.fermix_core.web).toMatchObject({ search_backend: "searxng", searxng_url: "http://127.0.0.1:8888" });
  expect(() =>
    planSetup({
      currentText: "",
      currentSecrets: {},
      changes: changesFromFlags({ "search-backend": "searxng", "searxng-url": "127.0.0.1:8888" }, {}, false),
      filePath: FILE,
    }),
  ).toThrow('fermix_core.web.searxng_url = "127.0.0.1:8888" is not valid: expected an http(s) URL');
});
