import { describe, expect, test } from "bun:test";
import type { ChannelName } from "../../src/config/schema.ts";
import { buildHealthReport, type ChannelRuntimeState, isLocalUrl } from "../../src/daemon/health.ts";
import { READY_CONFIG } from "../helpers/home.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const NOW = new Date("2026-06-27T12:00:00.123Z");
const report = (toml: string | null, channels: Map<ChannelName, ChannelRuntimeState> = new Map(), env: Record<string, string> = {}) =>
  buildHealthReport({ version: "1.2.3", now: NOW, loaded: loadedFrom(toml, env), channels, databaseReady: true, restartRequired: false });

describe("health report", () => {
  test('has exactly the keys docs/http.md "The health report" lists, in its shape', () => {
    const r = report(READY_CONFIG);
    expect(Object.keys(r)).toEqual([
      "status",
      "app",
      "version",
      "timestamp",
      "failures",
      "config_path",
      "restart_required?",
      "config",
      "providers",
      "channels",
      "memory",
      "realtime",
    ]);
    expect(r.config).toEqual({
      home: "/home/you/.fermix",
      path: "/home/you/.fermix/config.toml",
      workspace: { workspace: "/home/you/.fermix/workspace", grants: "/home/you/.fermix/grants" },
    });
    expect(Object.keys(r.providers[0]!)).toEqual(["name", "status", "auth_mode", "primary"]);
    expect(Object.keys(r.channels[0]!)).toEqual(["name", "status", "enabled", "mode", "process_alive"]);
    expect(Object.keys(r.memory)).toEqual(["conversation_store", "store"]);
    expect(Object.keys(r.realtime)).toEqual([
      "enabled",
      "status",
      "provider",
      "model",
      "socket_path",
      "socket_alive",
      "active_sessions",
      "active_clients",
      "companion_connected?",
    ]);
    expect(r.timestamp).toBe("2026-06-27T12:00:00Z");
    expect(r.app).toBe("fermix");
    expect(r.version).toBe("1.2.3");
  });

  test("a fresh home (no config) is setup_required and lists all six channels", () => {
    const r = report(null);
    expect(r.status).toBe("setup_required");
    expect(r.failures[0]).toBe("no config.toml: run fermix setup");
    expect(r.channels.map((c) => c.name)).toEqual(["telegram", "whatsapp", "slack", "discord", "signal", "acp"]);
    expect(r.channels.find((c) => c.name === "whatsapp")).toEqual({ name: "whatsapp", status: "disabled", enabled: false, mode: null, process_alive: null });
    // Telegram is on by default but has no token.
    expect(r.channels[0]).toEqual({ name: "telegram", status: "unconfigured", enabled: true, mode: "polling", process_alive: false });
  });

  test("a configured home with every enabled part healthy is ready with no failures", () => {
    const r = report(READY_CONFIG);
    expect(r.status).toBe("ready");
    expect(r.failures).toEqual([]);
    expect(r.providers).toEqual([{ name: "openai", status: "ready", auth_mode: "api_key", primary: true }]);
  });

  test("a provider without a key on a remote URL degrades; a local one is auth_mode none", () => {
    const r = report(
      `[fermix_core.providers.remote]\nmodel = "m"\nprimary = true\n[fermix_core.providers.ollama]\nmodel = "llama3"\nbase_url = "http://127.0.0.1:11434/v1"\n[fermix_channels.telegram]\nenabled = false\n[fermix_channels.acp]\nenabled = false\n`,
    );
    expect(r.status).toBe("degraded");
    expect(r.providers).toEqual([
      { name: "remote", status: "unconfigured", auth_mode: "api_key", primary: true },
      { name: "ollama", status: "ready", auth_mode: "none", primary: false },
    ]);
    expect(r.failures).toEqual(["provider remote: no api_key"]);
  });

  test("channel modes and live states come through; a refused channel is failed", () => {
    const live = new Map<ChannelName, ChannelRuntimeState>([
      ["slack", { status: "ready", process_alive: true }],
      ["acp", { status: "ready", process_alive: true }],
    ]);
    const r = report(
      `${READY_CONFIG.replace("[fermix_channels.acp]\nenabled = false", "")}
[fermix_channels.slack]
enabled = true
bot_token = "xoxb-1"
signing_secret = "s"
owner_user_id = "U1"
[fermix_channels.whatsapp]
enabled = true
access_token = "a"
phone_number_id = "1"
verify_token = "v"
app_secret = "s"
`,
      live,
    );
    expect(r.channels.find((c) => c.name === "slack")).toEqual({ name: "slack", status: "ready", enabled: true, mode: "webhook", process_alive: true });
    expect(r.channels.find((c) => c.name === "acp")).toEqual({ name: "acp", status: "ready", enabled: true, mode: "socket", process_alive: true });
    expect(r.channels.find((c) => c.name === "whatsapp")).toEqual({ name: "whatsapp", status: "failed", enabled: true, mode: "webhook", process_alive: false });
    expect(r.failures).toEqual(["channel whatsapp: refused: no owner_user_id and no allowed_sender_ids: nobody may talk to it"]);
    expect(r.status).toBe("degraded");
  });

  test("memory.store is the real state of the memory store: failed, with why, when it does not answer", () => {
    const snapshot = { version: "1.2.3", now: NOW, loaded: loadedFrom(READY_CONFIG, {}), channels: new Map(), databaseReady: true, restartRequired: false };
    expect(buildHealthReport({ ...snapshot, memoryStore: { ok: true } }).memory).toEqual({ conversation_store: "ready", store: "ready" });
    const broken = buildHealthReport({ ...snapshot, memoryStore: { ok: false, error: "no such table: memories_fts" } });
    expect(broken.memory).toEqual({ conversation_store: "ready", store: "failed" });
    expect(broken.status).toBe("degraded");
    expect(broken.failures).toEqual(["memory store: no such table: memories_fts"]);
  });

  test("an MCP server that is not ready is a failure line in our words, and adds no key to the report", () => {
    const snapshot = { version: "1.2.3", now: NOW, loaded: loadedFrom(READY_CONFIG, {}), channels: new Map(), databaseReady: true, restartRequired: false };
    const r = buildHealthReport({
      ...snapshot,
      mcpServers: [
        { name: "files", transport: "stdio", state: "ready", tools: 4 },
        { name: "calendar", transport: "http", state: "restarting", tools: 0, problem: "the server refused the key (HTTP 401); run `fermix doctor`" },
        { name: "slow", transport: "stdio", state: "starting", tools: 0 },
        { name: "off", transport: "stdio", state: "disabled", tools: 0 },
      ],
    });
    expect(r.failures).toEqual([
      "mcp server calendar: the server refused the key (HTTP 401); run `fermix doctor`; connecting again",
      "mcp server slow: starting",
    ]);
    expect(r.status).toBe("degraded");
    expect(Object.keys(r)).toEqual(Object.keys(buildHealthReport(snapshot)));
    expect(buildHealthReport({ ...snapshot, mcpServers: [{ name: "files", transport: "stdio", state: "ready", tools: 4 }] }).status).toBe("ready");
  });

  test("failures never contain a secret", () => {
    const r = report(`[fermix_core.providers.openai]\nmodel = "m"\napi_key = "sk-secret-value-123"\n[fermix_channels.telegram]\nbot_token = "123:ABCsecret"\n`);
    expect(JSON.stringify(r)).not.toContain("sk-secret-value-123");
    expect(JSON.stringify(r)).not.toContain("ABCsecret");
  });
});

test("local URLs are recognised for keyless providers", () => {
  expect(isLocalUrl("http://localhost:11434/v1")).toBe(true);
  expect(isLocalUrl("http://127.0.0.1:8080")).toBe(true);
  expect(isLocalUrl("http://[::1]:8080")).toBe(true);
  expect(isLocalUrl("http://192.168.1.5/v1")).toBe(true);
  expect(isLocalUrl("https://api.openai.com/v1")).toBe(false);
  expect(isLocalUrl("https://172.32.0.1/v1")).toBe(false);
});

describe("the realtime block", () => {
  const ON = "\n[fermix_core.realtime]\nenabled = true\n";
  const withState = (toml: string, realtime?: Parameters<typeof buildHealthReport>[0]["realtime"]) =>
    buildHealthReport({
      version: "1.2.3",
      now: NOW,
      loaded: loadedFrom(toml),
      channels: new Map(),
      databaseReady: true,
      restartRequired: false,
      ...(realtime ? { realtime } : {}),
    });

  test("off: disabled, nulls, and the counts", () => {
    expect(withState(READY_CONFIG).realtime).toEqual({
      enabled: false,
      status: "disabled",
      provider: null,
      model: null,
      socket_path: null,
      socket_alive: null,
      active_sessions: 0,
      active_clients: 0,
      "companion_connected?": false,
    });
  });

  test("on and listening: ready, with the provider, model, socket and what is connected", () => {
    const r = withState(READY_CONFIG + ON, { socketAlive: true, activeSessions: 1, activeClients: 2 });
    expect(r.realtime).toEqual({
      enabled: true,
      status: "ready",
      provider: "openai",
      model: "gpt-realtime",
      socket_path: "/home/you/.fermix/realtime.sock",
      socket_alive: true,
      active_sessions: 1,
      active_clients: 2,
      "companion_connected?": true,
    });
    expect(r.failures).toEqual([]);
    expect(r.status).toBe("ready");
  });

  test("degraded, the reason in failures: a socket not listening, a provider's refusal", () => {
    const r = withState(READY_CONFIG + ON, {
      socketAlive: false,
      activeSessions: 0,
      activeClients: 0,
      fault: "provider openai refused the session: server error (HTTP 503)",
    });
    expect(r.realtime.status).toBe("degraded");
    expect(r.status).toBe("degraded");
    expect(r.failures).toEqual([
      "realtime: the companion socket is not listening (/home/you/.fermix/realtime.sock)",
      "realtime: provider openai refused the session: server error (HTTP 503)",
    ]);
  });
});
