/**
 * Anthropic with the compiled binary, against the fake model server speaking
 * its Messages API: `fermix setup --yes --provider anthropic …` then
 * `fermix ask` answers through it (checked first with `--check`, which spends
 * no tokens); ANTHROPIC_API_KEY keys the provider named anthropic; a refused
 * key is the auth class everywhere — the reply, the log, health, the
 * dashboard's remedy — and `fermix doctor --check` names it.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { reply, userText } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, CHANNELS_OFF, providerToml, telegramToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();
const KEY = "sk-ant-e2e-good-0123456789";
const STALE = "sk-ant-e2e-stale-9876543210";

test("setup --provider anthropic with a key and a model, checked, then ask: the answer comes from the Messages API with the key in x-api-key", async () => {
  const model = await start.model();
  model.requireKey(KEY);
  const home = start.home();
  home.writeConfig(CHANNELS_OFF);
  const setup = await runFermix(
    [
      "setup",
      "--yes",
      "--reconfigure",
      "--check",
      "--provider",
      "anthropic",
      "--provider-base-url",
      model.url,
      "--api-key",
      KEY,
      "--model",
      "claude-sonnet-4-5",
    ],
    home.env,
  );
  expect(setup.stderr).toBe("");
  expect(setup.exitCode).toBe(0);
  expect(setup.stdout).toContain(`check: provider anthropic: ${model.url} answers and knows claude-sonnet-4-5`);
  expect(setup.stdout).toContain("provider:      anthropic: claude-sonnet-4-5");
  const config = readFileSync(join(home.home, "config.toml"), "utf8");
  expect(config).toContain('api = "anthropic"');
  expect(config).not.toContain(KEY);
  // The check asked about the model and spent no tokens.
  expect(model.requests).toHaveLength(0);

  model.reply(reply.reasoning("The user asks about the moon.", "The Moon is about ", "384,400 km away."));
  const asked = await runFermix(["ask", "How far is the moon?"], home.env);
  expect(asked.stderr).toBe("");
  expect(asked.exitCode).toBe(0);
  expect(asked.stdout).toContain("The Moon is about 384,400 km away.");
  expect(asked.stdout).not.toContain("The user asks about the moon.");
  const request = model.requests[0]!;
  expect(request.path).toBe("/v1/messages");
  expect(request.headers["x-api-key"]).toBe(KEY);
  expect(request.headers["anthropic-version"]).toBe("2023-06-01");
  expect(request.body.max_tokens).toBe(16_384);
  expect(userText(request)).toBe("How far is the moon?");
});

test("ANTHROPIC_API_KEY keys the provider named anthropic when the config has none", async () => {
  const model = await start.model();
  model.requireKey(KEY);
  const home = start.home({ ANTHROPIC_API_KEY: KEY });
  home.writeConfig(providerToml(model.url, { name: "anthropic", model: "claude-haiku-4-5" }) + CHANNELS_OFF);
  model.reply(reply.text("Keyed from the environment."));
  const asked = await runFermix(["ask", "hello"], home.env);
  expect(asked.exitCode).toBe(0);
  expect(asked.stdout).toContain("Keyed from the environment.");
  expect(model.requests[0]!.api).toBe("anthropic");
});

test("a refused key: the owner is told to run doctor, the log and health say auth with the status, the dashboard points at the key, doctor --check names it", async () => {
  const model = await start.model();
  model.requireKey(KEY);
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { name: "anthropic", api: "anthropic", model: "claude-sonnet-4-5", apiKey: STALE }) +
      ACP_OFF +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }),
  );
  const daemon = await start.daemon(home);
  telegram.pushMessage(telegram.message.text("hello?"));
  await until("the auth line", () => telegram.visibleTexts(ALICE.id).some((t) => t.includes("refused the key")));
  expect(telegram.visibleTexts(ALICE.id).at(-1)).toContain("Please run fermix doctor on the machine running Fermix.");
  expect(daemon.logs()).toMatch(/turn failed: the model request failed[^\n]*provider=anthropic[^\n]*fault=auth[^\n]*status=401/);
  const health = (await (await fetch(new URL("/health/ready", daemon.url))).json()) as { status: string; failures: string[] };
  expect(health.status).toBe("degraded");
  expect(health.failures).toEqual(["provider anthropic: the provider refused the key (HTTP 401); run `fermix doctor`"]);
  const page = await (await fetch(new URL("/", daemon.url))).text();
  expect(page).toContain("fermix_core.providers.anthropic.api_key");
  for (const text of [daemon.logs(), JSON.stringify(health), page]) expect(text).not.toContain(STALE);

  const doctor = await runFermix(["doctor", "--check"], home.env);
  expect(doctor.exitCode).toBe(1);
  expect(doctor.stdout).toMatch(/FAIL\s+provider anthropic \(live\)\s+the key was refused: the server refused the API key \(HTTP 401/);
  expect(doctor.stdout).toContain("ANTHROPIC_API_KEY");
  expect(doctor.stdout).not.toContain(STALE);
});
