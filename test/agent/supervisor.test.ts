/**
 * The provider state health shows: a failed turn marks the primary provider
 * degraded with its fault's class and status only — whatever else the turn's
 * result carried (the provider's code, its message) never reaches the report.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentSupervisor } from "../../src/agent/supervisor.ts";
import { buildHealthReport } from "../../src/daemon/health.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { ConversationStore } from "../../src/store/conversations.ts";
import { openDatabase } from "../../src/store/db.ts";
import { READY_CONFIG } from "../helpers/home.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const dirs: string[] = [];
const dbs: Array<{ close(): void }> = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function supervised() {
  const dir = mkdtempSync(join(tmpdir(), "fermix-supervisor-"));
  dirs.push(dir);
  const loaded = loadedFrom(READY_CONFIG);
  const db = openDatabase(join(dir, "fermix.db"));
  dbs.push(db);
  const agents = new AgentSupervisor({
    config: loaded.config,
    soul: () => "",
    conversations: new ConversationStore(db),
    log: new Logger({ write() {} }, "error", new Redactor()),
  });
  const health = () =>
    buildHealthReport({
      version: "1.2.3",
      now: new Date(),
      loaded,
      channels: new Map(),
      databaseReady: true,
      restartRequired: false,
      providers: new Map([[agents.primary!.name, agents.providerState()]]),
    });
  return { agents, health };
}

test("a failed turn degrades the provider with its class and status; what the provider said stays out of the report; an answer makes it ready", () => {
  const { agents, health } = supervised();
  // A turn's failure as the agent reports it: the provider's code can be its own words.
  const failure = { fault: "server" as const, status: 500, code: "call +15551234567 about the blue heron", attempts: 3 };
  agents.noteOutcome(false, failure);
  const report = health();
  expect(report.providers[0]).toMatchObject({ name: "openai", status: "degraded" });
  expect(report.failures).toEqual(["provider openai: server error (HTTP 500)"]);
  expect(JSON.stringify(report)).not.toContain("15551234567");
  expect(JSON.stringify(report)).not.toContain("blue heron");
  expect(agents.providerState()).toEqual({ status: "degraded", fault: { fault: "server", status: 500 } });

  agents.noteOutcome(true);
  expect(health().failures).toEqual([]);
  expect(health().providers[0]!.status).toBe("ready");
});

test("a refused key says so with the status and points at doctor", () => {
  const { agents, health } = supervised();
  agents.noteOutcome(false, { fault: "auth", status: 401 });
  expect(health().failures).toEqual(["provider openai: the provider refused the key (HTTP 401); run `fermix doctor`"]);
});
