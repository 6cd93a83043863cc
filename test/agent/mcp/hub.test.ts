/**
 * The MCP hub (src/agent/mcp/hub.ts) against real servers over stdio: the
 * protocol's reference "everything" server from the npm registry, and a
 * small server of our own built with the SDK for a tool list that changes.
 * Tools are offered as <server>__<tool> with their schemas; results come
 * back enveloped, images beside the text; a list change is picked up; a
 * killed server's tools are withdrawn and come back when it is restarted; a
 * server that cannot start holds nothing up; a slow call times out; the
 * program sees only the variables it was given.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpHub } from "../../../src/agent/mcp/hub.ts";
import { resultText, type Tool, ToolError } from "../../../src/agent/tools/types.ts";
import type { McpServerConfig } from "../../../src/config/schema.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { Telemetry } from "../../../src/kernel/telemetry.ts";
import { until } from "../../helpers/wait.ts";
import { webContext } from "../tools/web/context.ts";
import { everythingStdio, serverConfig, vaultStdio } from "./servers.ts";

const hubs: McpHub[] = [];
const dirs: string[] = [];
afterEach(async () => {
  while (hubs.length > 0) await hubs.pop()!.stop();
  while (dirs.length > 0) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function hubOf(servers: Record<string, McpServerConfig>) {
  const lines: string[] = [];
  const log = new Logger({ write: (line) => void lines.push(line) }, "debug", new Redactor());
  let current = servers;
  const hub = new McpHub({ servers: () => current, home: tmpdir(), log, telemetry: new Telemetry(), backoff: { firstMs: 50, maxMs: 200 } });
  hubs.push(hub);
  hub.start();
  return { hub, lines, set: (next: Record<string, McpServerConfig>) => (current = next) };
}
const tool = (hub: McpHub, name: string): Tool => {
  const found = hub.tools().find((t) => t.spec.name === name);
  if (!found) throw new Error(`no tool ${name} among ${hub.tools().map((t) => t.spec.name)}`);
  return found;
};
const call = async (hub: McpHub, name: string, args: Record<string, unknown> = {}) => tool(hub, name).run(args, webContext());
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => "answered",
    (error: unknown) => (error instanceof ToolError ? error.message : `unexpected ${String(error)}`),
  );

test("the reference server's tools are offered as <server>__<tool> with their schemas, and a call round-trips", async () => {
  const { hub } = hubOf({ ev: everythingStdio() });
  await hub.settled(20_000);
  expect(hub.status()).toEqual([{ name: "ev", transport: "stdio", state: "ready", tools: hub.tools().length }]);
  const names = hub.tools().map((t) => t.spec.name);
  expect(names).toEqual(expect.arrayContaining(["ev__echo", "ev__get-sum", "ev__get-tiny-image"]));
  expect(tool(hub, "ev__get-sum").spec.parameters).toMatchObject({
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  });
  expect(tool(hub, "ev__echo").spec.description).toBe('Echoes back the input string (a tool of the MCP server "ev")');
  expect(resultText(await call(hub, "ev__echo", { message: "hello from fermix" }))).toBe(
    '<untrusted source="tool server ev, tool echo">\nEcho: hello from fermix\n</untrusted>',
  );
  // An image the server answers with reaches the model beside the text.
  const image = await call(hub, "ev__get-tiny-image");
  expect(typeof image).toBe("object");
  if (typeof image === "string") return;
  expect(image.images).toHaveLength(1);
  expect(image.images[0]!.mime).toBe("image/png");
  expect(Buffer.from(image.images[0]!.data, "base64").subarray(1, 4).toString()).toBe("PNG");
  expect(image.text).toContain("[image 1: image/png, shown to you]");
  // A call the server refuses tells the model why, in the server's words, enveloped.
  expect(await refusal(call(hub, "ev__get-sum", { a: "two" }))).toStartWith(
    'the tool server ev reported an error:\n<untrusted source="tool server ev, tool get-sum">',
  );
});

test("a tool list that changes while connected is picked up", async () => {
  const { hub } = hubOf({ vault: vaultStdio() });
  await hub.settled(20_000);
  expect(hub.tools().map((t) => t.spec.name)).not.toContain("vault__vault_open");
  expect(resultText(await call(hub, "vault__unlock"))).toContain("unlocked");
  await until("vault_open offered", () => hub.tools().some((t) => t.spec.name === "vault__vault_open"));
  expect(resultText(await call(hub, "vault__vault_open"))).toContain("the word in the vault is PERIWINKLE");
});

test("a killed server's tools are withdrawn, and come back when it is restarted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fermix-mcp-"));
  dirs.push(dir);
  const pidFile = join(dir, "pid");
  const { hub, lines } = hubOf({ vault: vaultStdio({ env: { FAKE_MCP_PID_FILE: pidFile } }) });
  await hub.settled(20_000);
  const first = Number(readFileSync(pidFile, "utf8"));
  process.kill(first, "SIGKILL");
  await until("the server seen gone", () => hub.status()[0]!.state === "restarting");
  expect(hub.status()[0]!.problem).toBe("the program exited");
  await until("the server back", () => hub.status()[0]!.state === "ready", 20_000);
  expect(Number(readFileSync(pidFile, "utf8"))).not.toBe(first);
  expect(resultText(await call(hub, "vault__env", { name: "FAKE_MCP_PID_FILE" }))).toContain(pidFile);
  expect(lines.some((l) => l.includes('msg="mcp server unavailable; connecting again"') && l.includes("server=vault"))).toBe(true);
});

test("a server that cannot start holds nothing up, says so in our words, and keeps being tried", async () => {
  const { hub } = hubOf({ gone: serverConfig({ command: "/nonexistent/mcp-server" }), ev: everythingStdio() });
  await hub.settled(20_000);
  await until("the missing server marked", () => hub.status().find((s) => s.name === "gone")?.state === "restarting");
  expect(hub.status().find((s) => s.name === "gone")).toEqual({ name: "gone", transport: "stdio", state: "restarting", tools: 0, problem: "could not start" });
  expect(hub.tools().some((t) => t.spec.name.startsWith("ev__"))).toBe(true);
  expect(hub.tools().some((t) => t.spec.name.startsWith("gone__"))).toBe(false);
});

test("a call past the server's timeout is answered as such", async () => {
  const { hub } = hubOf({ vault: vaultStdio({ timeout_seconds: 1 }) });
  await hub.settled(20_000);
  expect(await refusal(call(hub, "vault__slow"))).toBe("the tool server vault did not answer within 1 s");
});

test("the program gets the variables it is given, never the daemon's own", async () => {
  process.env.FERMIX_TEST_DAEMON_SECRET = "daemon-only-secret";
  try {
    const { hub } = hubOf({ vault: vaultStdio({ env: { GIVEN: "to-the-server" } }) });
    await hub.settled(20_000);
    expect(resultText(await call(hub, "vault__env", { name: "GIVEN" }))).toContain("GIVEN=to-the-server");
    expect(resultText(await call(hub, "vault__env", { name: "FERMIX_TEST_DAEMON_SECRET" }))).toContain("FERMIX_TEST_DAEMON_SECRET=(unset)");
  } finally {
    delete process.env.FERMIX_TEST_DAEMON_SECRET;
  }
});

test("a reload's servers are followed: a removed one stops and its tools go, a new one starts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fermix-mcp-"));
  dirs.push(dir);
  const pidFile = join(dir, "pid");
  const { hub, set } = hubOf({ vault: vaultStdio({ env: { FAKE_MCP_PID_FILE: pidFile } }) });
  await hub.settled(20_000);
  const pid = Number(readFileSync(pidFile, "utf8"));
  set({ ev: everythingStdio() });
  hub.apply();
  expect(hub.tools().some((t) => t.spec.name.startsWith("vault__"))).toBe(false);
  await hub.settled(20_000);
  expect(hub.status().map((s) => [s.name, s.state])).toEqual([["ev", "ready"]]);
  await until("the removed server's program ended", () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
});
