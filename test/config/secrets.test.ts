import { afterEach, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/index.ts";
import { FileStore, openSecretStore } from "../../src/config/secrets.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";

const homes: TestHome[] = [];
const home = () => {
  const h = makeHome();
  homes.push(h);
  return h;
};
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

test("the file store round-trips secrets in a 0600 file", async () => {
  const h = home();
  h.writeConfig("");
  const store = new FileStore(join(h.home, "secrets.toml"));
  expect(await store.get("fermix_channels.slack.bot_token")).toBeUndefined();
  await store.set("fermix_channels.slack.bot_token", "xoxb-stored");
  await store.set("fermix_core.providers.openai.api_key", "sk-stored");
  expect(await store.get("fermix_channels.slack.bot_token")).toBe("xoxb-stored");
  expect(statSync(join(h.home, "secrets.toml")).mode & 0o777).toBe(0o600);
  await store.delete("fermix_channels.slack.bot_token");
  expect(await store.get("fermix_channels.slack.bot_token")).toBeUndefined();
  expect(await store.get("fermix_core.providers.openai.api_key")).toBe("sk-stored");
});

test("FERMIX_SECRET_STORE=file forces the file; the store is what doctor reports", async () => {
  const store = await openSecretStore("/x/secrets.toml", { FERMIX_SECRET_STORE: "file" });
  expect(store.kind).toBe("file");
  expect(store.location).toBe("/x/secrets.toml");
});

test("loadConfig layers the secret store between the file and the environment", async () => {
  const h = home();
  h.writeConfig(`[fermix_core.providers.openai]\nmodel = "m"\n[fermix_channels.slack]\nbot_token = "xoxb-file"\nsigning_secret = "file-secret"\n`);
  const store = new FileStore(join(h.home, "secrets.toml"));
  await store.set("fermix_channels.slack.bot_token", "xoxb-keychain");
  await store.set("fermix_core.providers.openai.api_key", "sk-keychain");
  const loaded = await loadConfig({ ...h.env, SLACK_SIGNING_SECRET: "env-secret" });
  expect(loaded.config.fermix_channels.slack.bot_token).toBe("xoxb-keychain");
  expect(loaded.config.fermix_channels.slack.signing_secret).toBe("env-secret");
  expect(loaded.config.fermix_core.providers.openai!.api_key).toBe("sk-keychain");
  expect(loaded.secretStore.kind).toBe("file");
  expect(loaded.fileExists).toBe(true);
});

test("a fresh home loads: defaults only, no file", async () => {
  const h = home();
  const loaded = await loadConfig(h.env);
  expect(loaded.fileExists).toBe(false);
  expect(loaded.fileMtimeMs).toBeNull();
  expect(loaded.config.fermix_channels.telegram.enabled).toBe(true);
});
