/**
 * The MCP client end to end: the compiled daemon starts real MCP servers —
 * the protocol's reference "everything" server from the npm registry, over
 * stdio and over streamable HTTP, and a small server of our own built with
 * the SDK for a tool list that changes — and the fake model, in the owner's
 * direct chat on the Telegram fake, sees their tools and calls them.
 *
 * Tools listed in the model request; a call and its result round-trip
 * enveloped; an image result reaches the model as an image; a killed
 * server is restarted and its tools return; tools/list_changed is picked
 * up; a server that cannot start holds nothing up and shows in health, on
 * the status page and in doctor.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { HealthReport } from "../../src/kernel/health.ts";
import { EVERYTHING, VAULT } from "../agent/mcp/servers.ts";
import { type RecordedRequest, reply } from "../fakes/model-server.ts";
import { ALICE } from "../fakes/telegram.ts";
import { runFermix } from "../helpers/binary.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";

const start = e2eResources();

/** The daemon on the Telegram fake, Alice the owner, with `mcp` (whole [fermix_core.mcp.servers.*] tables) in its config. */
async function daemonWith(mcp: string) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) + ACP_OFF + mcp);
  const daemon = await start.daemon(home);
  const health = async () => (await (await fetch(new URL("/health/ready", daemon.url))).json()) as HealthReport;
  return { model, telegram, home, daemon, health };
}

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((t) => t.name ?? "");
/** The function_call_output items of a request: their output as sent (a string, or content parts with images). */
const outputs = (request: RecordedRequest) => (request.body.input ?? []).filter((i) => i.type === "function_call_output").map((i) => i.output as unknown);

/** Waits until health lists no MCP server as starting or failing. */
const mcpReady = (health: () => Promise<HealthReport>) =>
  until("the MCP servers ready", async () => !(await health()).failures.some((f) => f.startsWith("mcp server ")), 20_000);

test("over stdio: the reference server's tools are in the model request, a call round-trips, an image reaches the model", async () => {
  const { model, telegram, health, daemon } = await daemonWith(
    tomlTable("fermix_core.mcp.servers.ev", { command: process.execPath, args: [EVERYTHING, "stdio"] }),
  );
  await mcpReady(health);
  model.reply(
    reply.toolCalls({ name: "ev__echo", arguments: { message: "hello through fermix" } }, { name: "ev__get-tiny-image", arguments: {} }),
    reply.text("Echoed, and I see the MCP logo."),
  );
  telegram.pushMessage(telegram.message.text("try the everything server"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("Echoed, and I see the MCP logo."), 15_000);

  const offered = model.requests[0]!.body.tools ?? [];
  expect(offered.map((t) => t.name)).toEqual(expect.arrayContaining(["ev__echo", "ev__get-sum", "ev__get-tiny-image", "web_fetch", "run_command"]));
  const echo = offered.find((t) => t.name === "ev__echo")!;
  expect(echo.parameters).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] });

  const [echoed, image] = outputs(model.requests[1]!);
  expect(echoed).toBe('<untrusted source="tool server ev, tool echo">\nEcho: hello through fermix\n</untrusted>');
  // The image is a content part of the call's output, beside its text.
  expect(Array.isArray(image)).toBe(true);
  const parts = image as Array<{ type: string; text?: string; image_url?: string }>;
  expect(parts[0]!.type).toBe("input_text");
  expect(parts[0]!.text).toContain("[image 1: image/png, shown to you]");
  expect(parts[1]!.type).toBe("input_image");
  expect(parts[1]!.image_url).toStartWith("data:image/png;base64,iVBORw0KGgo");
  // Logged like a workspace tool.
  expect(daemon.logs()).toMatch(/msg="tool call" component=mcp tool=ev__echo .*outcome=ok/);

  // The status page lists the server, ready, with its tool count.
  const page = await (await fetch(new URL("/", daemon.url))).text();
  expect(page).toContain("Tool servers (MCP)");
  expect(page).toContain('data-mcp-server="ev" data-state="ready"');
});

test("a killed server is restarted and its tools return", async () => {
  const pidFile = join(start.dataFolder(), "ev.pid");
  // The shell writes its pid and becomes the server: the pid is the server's.
  const { model, telegram, health } = await daemonWith(
    tomlTable("fermix_core.mcp.servers.ev", { command: "/bin/sh", args: ["-c", `echo $$ > '${pidFile}'; exec '${process.execPath}' '${EVERYTHING}' stdio`] }),
  );
  await mcpReady(health);
  const first = Number(readFileSync(pidFile, "utf8"));
  process.kill(first, "SIGKILL");
  await until("health to show the server gone", async () =>
    (await health()).failures.some((f) => f === "mcp server ev: the program exited; connecting again" || f.startsWith("mcp server ev: starting")),
  );
  await mcpReady(health);
  const second = Number(readFileSync(pidFile, "utf8"));
  expect(second).not.toBe(first);
  start.defer(() => {
    try {
      process.kill(second, "SIGKILL");
    } catch {}
  });

  model.reply(reply.toolCall("ev__get-sum", { a: 20, b: 22 }), reply.text("42, after the restart."));
  telegram.pushMessage(telegram.message.text("add 20 and 22"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("42, after the restart."), 15_000);
  expect(toolNames(model.requests[0]!)).toContain("ev__get-sum");
  expect(outputs(model.requests[1]!)[0]).toBe('<untrusted source="tool server ev, tool get-sum">\nThe sum of 20 and 22 is 42.\n</untrusted>');
});

test("over streamable HTTP, with the configured headers kept out of the log", async () => {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const server = Bun.spawn([process.execPath, EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
  start.defer(async () => {
    server.kill("SIGKILL");
    await server.exited;
  });
  await until("the HTTP server listening", async () => {
    try {
      await fetch(`http://127.0.0.1:${port}/mcp`, { method: "GET" });
      return true;
    } catch {
      return false;
    }
  });
  const { model, telegram, health, daemon } = await daemonWith(
    tomlTable("fermix_core.mcp.servers.remote", { url: `http://127.0.0.1:${port}/mcp` }) +
      tomlTable("fermix_core.mcp.servers.remote.headers", { "X-Fermix-Test": "header-secret-value-77" }),
  );
  await mcpReady(health);
  model.reply(reply.toolCall("remote__get-sum", { a: 2, b: 3 }), reply.text("Five."));
  telegram.pushMessage(telegram.message.text("2 + 3 over http"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("Five."), 15_000);
  expect(toolNames(model.requests[0]!)).toContain("remote__get-sum");
  expect(outputs(model.requests[1]!)[0]).toBe('<untrusted source="tool server remote, tool get-sum">\nThe sum of 2 and 3 is 5.\n</untrusted>');
  expect(daemon.logs()).not.toContain("header-secret-value-77");
});

test("a tool list that changes is picked up: the next turn offers the new tool", async () => {
  const { model, telegram, health } = await daemonWith(tomlTable("fermix_core.mcp.servers.vault", { command: process.execPath, args: [VAULT] }));
  await mcpReady(health);
  model.reply(reply.toolCall("vault__unlock", {}), reply.text("Unlocked."));
  telegram.pushMessage(telegram.message.text("unlock the vault"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("Unlocked."), 15_000);
  expect(toolNames(model.requests[0]!)).not.toContain("vault__vault_open");

  model.reply(reply.toolCall("vault__vault_open", {}), reply.text("The word is periwinkle."));
  telegram.pushMessage(telegram.message.text("now open it"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("The word is periwinkle."), 15_000);
  expect(toolNames(model.requests[2]!)).toContain("vault__vault_open");
  expect(outputs(model.requests[3]!)[0]).toContain("the word in the vault is PERIWINKLE");
});

test("a server that cannot start holds nothing up: the daemon answers, health and doctor say which and why", async () => {
  const { model, telegram, health, home, daemon } = await daemonWith(
    tomlTable("fermix_core.mcp.servers.broken", { command: "/nonexistent/mcp-server" }) +
      tomlTable("fermix_core.mcp.servers.ev", { command: process.execPath, args: [EVERYTHING, "stdio"] }),
  );
  await until(
    "health to name the broken server",
    async () => (await health()).failures.includes("mcp server broken: could not start; connecting again"),
    20_000,
  );
  const report = await health();
  expect(report.status).toBe("degraded");
  await until("the working server ready", async () => !(await health()).failures.some((f) => f.startsWith("mcp server ev")), 20_000);
  model.fallback(reply.text("still here"));
  telegram.pushMessage(telegram.message.text("hello"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.includes("still here"), 15_000);
  expect(toolNames(model.requests[0]!).some((n) => n.startsWith("ev__"))).toBe(true);
  expect(toolNames(model.requests[0]!).some((n) => n.startsWith("broken__"))).toBe(false);
  const page = await (await fetch(new URL("/", daemon.url))).text();
  expect(page).toContain('data-mcp-server="broken" data-state="restarting"');
  expect(page).toContain("could not start");

  const doctor = await runFermix(["doctor"], (home as TestHome).env);
  expect(doctor.stdout).toMatch(/FAIL\s+mcp broken\s+\/nonexistent\/mcp-server is not found: the server cannot start/);
  expect(doctor.stdout).toMatch(/ok\s+mcp ev\s+stdio: /);
  expect(doctor.exitCode).toBe(1);
});
