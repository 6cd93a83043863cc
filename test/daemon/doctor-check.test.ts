/**
 * `fermix doctor --check`: one authenticated call per provider against the
 * fake model servers. A refused key fails its provider's row by name, with
 * where a new key goes and never the key; offline doctor calls nobody.
 */
import { afterEach, expect, test } from "bun:test";
import { runDoctor } from "../../src/daemon/doctor.ts";
import { reply, startFakeModel } from "../fakes/model-server.ts";
import { CHANNELS_OFF, providerToml, tomlTable } from "../helpers/config.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";

const GOOD = "sk-ant-good-0000000000";
const STALE = "sk-ant-stale-1111111111";
const homes: TestHome[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

test("each provider is asked once, with its own key in its own header; a refused key fails its row by name, the other passes", async () => {
  await using claude = await startFakeModel();
  await using local = await startFakeModel();
  claude.requireKey(GOOD);
  claude.reply(reply.text("never: doctor spends no tokens"));
  const home = makeHome();
  homes.push(home);
  home.writeConfig(
    tomlTable("fermix_core", { fallback: ["local"] }) +
      providerToml(claude.url, { name: "anthropic", api: "anthropic", model: "claude-sonnet-4-5", apiKey: STALE, primary: true }) +
      providerToml(local.url, { name: "local", api: "chat" }) +
      CHANNELS_OFF,
  );

  const offline = await runDoctor({ env: home.env, probeDaemon: async () => false });
  expect(offline.some((r) => r.check.endsWith("(live)"))).toBe(false);
  expect(offline.find((r) => r.check === "fallback")).toEqual({ check: "fallback", status: "ok", detail: "when the primary cannot answer: local" });

  const rows = await runDoctor({ env: home.env, probeDaemon: async () => false, check: true });
  const live = rows.filter((r) => r.check.endsWith("(live)"));
  expect(live.map((r) => [r.check, r.status])).toEqual([
    ["provider anthropic (live)", "fail"],
    ["provider local (live)", "ok"],
  ]);
  expect(live[0]!.detail).toContain("the key was refused");
  expect(live[0]!.detail).toContain("HTTP 401");
  expect(live[0]!.detail).toContain("ANTHROPIC_API_KEY");
  expect(JSON.stringify(rows)).not.toContain(STALE);
  // The live row follows its provider's offline row.
  expect(rows.findIndex((r) => r.check === "provider anthropic (live)")).toBe(rows.findIndex((r) => r.check === "provider anthropic") + 1);
  // Nothing was asked of the model itself: no tokens spent.
  expect(claude.requests).toHaveLength(0);
  expect(claude.pending).toBe(1);
});

test("a good key passes; a model the API does not know fails its row saying so", async () => {
  await using claude = await startFakeModel();
  claude.requireKey(GOOD).forgetModels("claude-nonesuch");
  const home = makeHome();
  homes.push(home);
  const config = (model: string) => providerToml(claude.url, { name: "anthropic", api: "anthropic", model, apiKey: GOOD }) + CHANNELS_OFF;

  home.writeConfig(config("claude-sonnet-4-5"));
  const good = (await runDoctor({ env: home.env, probeDaemon: async () => false, check: true })).find((r) => r.check === "provider anthropic (live)");
  expect(good).toMatchObject({ status: "ok" });
  expect(good!.detail).toContain("accepts the key and knows claude-sonnet-4-5");

  home.writeConfig(config("claude-nonesuch"));
  const unknown = (await runDoctor({ env: home.env, probeDaemon: async () => false, check: true })).find((r) => r.check === "provider anthropic (live)");
  expect(unknown).toMatchObject({ status: "fail" });
  expect(unknown!.detail).toContain('does not know the model "claude-nonesuch"');
});
