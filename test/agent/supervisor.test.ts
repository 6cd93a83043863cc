/**
 * The provider state health shows: a failed request marks its provider
 * degraded with its fault's class and status only — whatever else the error
 * carried (the provider's code, its message) never reaches the report. With
 * a fallback, each provider has its own row: a failing primary is degraded
 * while the fallback answers, and every kind of request (compaction, a
 * /soul review) goes through the same chain. A reload forgets what it knew
 * of a provider it changed.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProviderError } from "../../src/agent/providers/types.ts";
import { AgentSupervisor, providerOrder } from "../../src/agent/supervisor.ts";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { ConversationStore } from "../../src/store/conversations.ts";
import { openDatabase } from "../../src/store/db.ts";
import { reply, startFakeModel } from "../fakes/model-server.ts";
import { CHANNELS_OFF, providerToml, tomlTable } from "../helpers/config.ts";
import { READY_CONFIG } from "../helpers/home.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const dirs: string[] = [];
const dbs: Array<{ close(): void }> = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function supervised(toml = READY_CONFIG) {
  const dir = mkdtempSync(join(tmpdir(), "fermix-supervisor-"));
  dirs.push(dir);
  const loaded = loadedFrom(toml);
  const db = openDatabase(join(dir, "fermix.db"));
  dbs.push(db);
  const conversations = new ConversationStore(db);
  const agents = new AgentSupervisor({
    config: loaded.config,
    soul: () => "",
    conversations,
    log: new Logger({ write() {} }, "error", new Redactor()),
    // Retries wait for nothing: the outcome, not the backoff, is under test.
    providerDeps: { sleep: async () => {} },
  });
  const health = () =>
    buildHealthReport({
      version: "1.2.3",
      now: new Date(),
      loaded,
      channels: new Map(),
      databaseReady: true,
      restartRequired: false,
      providers: agents.providerStates(),
    });
  return { agents, health, loaded, conversations };
}

test("a failed turn degrades the provider with its class and status; what the provider said stays out of the report; an answer makes it ready", () => {
  const { agents, health } = supervised();
  // A turn's failure as the agent reports it: the provider's code can be its own words.
  const failure = new ProviderError("call +15551234567 about the blue heron", 500, "call +15551234567 about the blue heron", 3);
  agents.noteOutcome("openai", failure);
  const report = health();
  expect(report.providers[0]).toMatchObject({ name: "openai", status: "degraded" });
  expect(report.failures).toEqual(["provider openai: server error (HTTP 500)"]);
  expect(JSON.stringify(report)).not.toContain("15551234567");
  expect(JSON.stringify(report)).not.toContain("blue heron");
  expect(agents.providerStates().get("openai")).toEqual({ status: "degraded", fault: { fault: "server", status: 500 } });

  agents.noteOutcome("openai");
  expect(health().failures).toEqual([]);
  expect(health().providers[0]!.status).toBe("ready");
});

test("a refused key says so with the status and points at doctor", () => {
  const { agents, health } = supervised();
  agents.noteOutcome("openai", { fault: "auth", status: 401 });
  expect(health().failures).toEqual(["provider openai: the provider refused the key (HTTP 401); run `fermix doctor`"]);
});

/** A primary "main" (Anthropic's API) and its fallback "standby" (chat), each on a fake model server. */
const mainAndStandby = (mainUrl: string, standbyUrl: string) =>
  tomlTable("fermix_core", { fallback: ["standby"] }) +
  providerToml(mainUrl, { name: "main", api: "anthropic", primary: true }) +
  providerToml(standbyUrl, { name: "standby", api: "chat" }) +
  CHANNELS_OFF;

test("with a fallback, every request tries the primary first; a primary that cannot be reached is degraded in health while the fallback answers, and ready again once it answers", async () => {
  await using down = await startFakeModel();
  await using standby = await startFakeModel();
  const toml = mainAndStandby(down.url, standby.url);
  const { agents, health } = supervised(toml);
  expect(providerOrder(loadedFrom(toml).config).map((p) => p.name)).toEqual(["main", "standby"]);
  down.reply(reply.serverError(500), reply.serverError(500), reply.serverError(500));
  standby.reply(reply.text("standing in"));
  let text = "";
  for await (const event of agents.provider!.stream({ model: "any", input: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }] })) {
    if (event.type === "message_done") text = event.text;
  }
  expect(text).toBe("standing in");
  const report = health();
  expect(report.status).toBe("degraded");
  expect(report.providers.map((p) => [p.name, p.status, p.primary])).toEqual([
    ["main", "degraded", true],
    ["standby", "ready", false],
  ]);
  expect(report.failures).toEqual(["provider main: server error (HTTP 500)"]);

  down.reply(reply.text("back"));
  for await (const _ of agents.provider!.stream({ model: "any", input: [{ type: "message", role: "user", content: [{ type: "text", text: "again" }] }] }));
  expect(health().status).toBe("ready");
  expect(standby.requests).toHaveLength(1);
});

test("compaction and the requests outside a turn (a /soul review, /ultra) go through the same chain: the fallback answers them while the primary is down", async () => {
  await using down = await startFakeModel();
  await using standby = await startFakeModel();
  const toml = mainAndStandby(down.url, standby.url);
  const { agents, conversations } = supervised(toml);
  down.fallback(reply.serverError(503));
  standby.reply(reply.text("SUMMARY: the owner likes tea."), reply.text("A review, from the standby."));
  for (let i = 0; i < 6; i++) conversations.append("cli:local:", i % 2 === 0 ? "user" : "assistant", `message ${i}`);
  expect(await agents.compactor!.compact("cli:local:")).toBe(true);
  expect(conversations.history("cli:local:")[0]).toMatchObject({ role: "summary", text: "SUMMARY: the owner likes tea." });
  const model = agents.primaryModel()!;
  expect(model.provider).toBe(agents.provider!);
  let review = "";
  for await (const event of model.provider.stream({
    model: model.model,
    input: [{ type: "message", role: "user", content: [{ type: "text", text: "review" }] }],
  })) {
    if (event.type === "message_done") review = event.text;
  }
  expect(review).toBe("A review, from the standby.");
  expect(standby.requests.map((r) => r.body.model)).toEqual(["fake-model", "fake-model"]);
});

test("a reload that changes a failing provider (a new key) forgets its failure; one left as it was keeps it", () => {
  const { agents, health, loaded } = supervised();
  agents.noteOutcome("openai", { fault: "auth", status: 401 });
  agents.reconfigure(loaded.config);
  expect(health().failures).toEqual(["provider openai: the provider refused the key (HTTP 401); run `fermix doctor`"]);
  agents.reconfigure(loadedFrom(READY_CONFIG.replace("sk-test-not-a-real-key-000000", "sk-test-a-new-key-111111")).config);
  expect(health().failures).toEqual([]);
});
