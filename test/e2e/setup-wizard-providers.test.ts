/**
 * The wizard's provider step in a real terminal (tmux), on a home whose
 * primary is a local server: it offers Anthropic beside OpenAI, and a
 * fallback provider; Anthropic added as the fallback is written with its own
 * API and URL, its key to the secret store, the primary kept, and the
 * fallback order asked and written.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ensureBinary } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { startTerminal } from "../helpers/tmux.ts";

const start = e2eResources();
const KEY = "sk-ant-wizard-0123456789";

test("the wizard adds Anthropic as a fallback: offered by name, written with its API, URL and key, and the fallback order asked", async () => {
  ensureBinary();
  const home = start.home({ FERMIX_SETUP_PROBES: "127.0.0.1:9" });
  home.writeConfig(providerToml("http://127.0.0.1:11434/v1", { name: "local", api: "chat", model: "llama3.2" }) + CHANNELS_OFF);
  const w = startTerminal([BINARY, "setup", "--reconfigure", "--no-service"], home.env);
  start.defer(() => w.close());

  const menu = await w.waitFor("Which model provider?");
  expect(menu).toContain("Keep local (llama3.2)");
  expect(menu).toContain("Anthropic (Claude)");
  expect(menu).toContain("Add a fallback provider (answers when local cannot)");
  // keep, OpenAI, Anthropic, another server, then the fallback.
  w.keys("Down", "Down", "Down", "Down");
  w.keys("Enter");
  expect(await w.waitFor("Which provider answers when the primary cannot?")).toContain("Anthropic (Claude)");
  w.keys("Enter");
  expect(await w.waitFor("Model")).toContain("claude-sonnet-4-5");
  w.keys("Enter");
  await w.waitFor("API key");
  w.type(KEY);
  w.keys("Enter");
  await w.waitFor("Does the model understand images");
  w.keys("Enter");
  expect(await w.waitFor("Context window, in tokens")).toContain("200000");
  w.keys("Enter");
  // No network beyond loopback: the live check is declined.
  await w.waitFor("Check the connection now (GET https://api.anthropic.com/v1/models/claude-sonnet-4-5)?");
  w.keys("Right");
  w.keys("Enter");
  expect(await w.waitFor("Fallback providers when local cannot answer, in order (of anthropic; empty: none)")).toContain("anthropic");
  w.keys("Enter");
  await w.waitFor("Which channels should Fermix serve?");
  w.keys("Enter");
  await w.waitFor("Which speech-to-text backend transcribes voice notes?");
  w.keys("Down", "Down", "Down");
  w.keys("Enter");
  await w.waitFor("Talk with Fermix live, by voice");
  w.keys("Enter");
  await w.waitFor("Web search for the assistant?");
  w.keys("Enter");
  await w.waitFor("Let the assistant drive a desktop");
  w.keys("Enter");
  const review = await w.waitFor("Write them?");
  expect(review).toContain('fermix_core.fallback = ["anthropic"]');
  expect(review).not.toContain(KEY);
  w.keys("Enter");
  expect(await w.exited()).toBe(0);

  const config = readFileSync(join(home.home, "config.toml"), "utf8");
  const parsed = Bun.TOML.parse(config) as { fermix_core: { fallback: string[]; providers: Record<string, Record<string, unknown>> } };
  expect(parsed.fermix_core.fallback).toEqual(["anthropic"]);
  expect(parsed.fermix_core.providers.anthropic).toMatchObject({ api: "anthropic", base_url: "https://api.anthropic.com/v1", model: "claude-sonnet-4-5" });
  expect(parsed.fermix_core.providers.anthropic!.primary).toBeUndefined();
  expect(parsed.fermix_core.providers.local!.model).toBe("llama3.2");
  expect(config).not.toContain(KEY);
  expect(readFileSync(join(home.home, "secrets.toml"), "utf8")).toContain(KEY);
}, 60_000);
