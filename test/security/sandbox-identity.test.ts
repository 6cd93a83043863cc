/**
 * Who a sandboxed command is, and what it can reach, proven from outside
 * against the compiled binary: the daemon runs (as root here and in CI),
 * the fake model asks for run_command, and the test reads what the command
 * printed. A command is never uid 0 and finds no /etc/shadow; a Unix socket
 * server in a granted folder gets no connection from it; and the daemon says
 * at start, as doctor does, when it runs as root.
 */
import { expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { SandboxStore } from "../../src/store/sandbox.ts";
import { lastToolOutput, reply } from "../fakes/model-server.ts";
import { runFermix } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();
const asRoot = process.getuid!() === 0;

/** A daemon with the fake model; `grants` are written to its database before it starts, as /sandbox grant would. */
async function startWithModel(grants: Array<{ path: string; mode: "ro" | "rw" }> = []) {
  const model = await start.model();
  const home = start.home();
  home.writeConfig(providerToml(model.url) + CHANNELS_OFF);
  mkdirSync(join(home.home, "workspace"), { recursive: true, mode: 0o700 });
  if (grants.length > 0) {
    const db = openDatabase(join(home.home, "fermix.db"));
    const store = new SandboxStore(db);
    for (const grant of grants) store.grant(grant.path, grant.mode, "test");
    db.close();
  }
  const running = await start.daemon(home);
  return { model, home, daemon: running };
}

test("run_command runs as a non-zero uid and finds no /etc/shadow; a root daemon says at start that it runs as root", async () => {
  const { model, home, daemon } = await startWithModel();
  model.reply(reply.toolCall("run_command", { command: "id -u; id -un; cat /etc/shadow; ls /etc" }), reply.text("done"));
  const r = await runFermix(["ask", "who are you in there?"], home.env);
  expect(r.exitCode).toBe(0);

  // The tool's answer: "exit code N", then the command's stdout and stderr under their headings.
  const output = lastToolOutput(model.requests[1]!);
  const [, uid, name] = /stdout:\n(\d+)\n(.*)\n/.exec(output) ?? [];
  expect(Number(uid)).toBeGreaterThan(0);
  if (asRoot) expect(uid).toBe("1000");
  else expect(uid).toBe(String(process.getuid!()));
  // `id -un` prints a name: the sandbox's own passwd knows the command's user.
  expect(name).toMatch(/^[a-z_][a-z0-9_.-]*$/i);
  expect(output).toContain("cat: /etc/shadow: No such file or directory");
  // Nothing that looks like a shadow entry (name:hash-or-*:days:…), and /etc lists neither shadow nor sudoers.
  expect(output).not.toMatch(/^root:[^:]*:\d+:/m);
  expect(output.split("\n")).not.toContain("shadow");
  expect(output.split("\n")).not.toContain("sudoers");
  expect(output.split("\n")).toContain("passwd");

  if (asRoot) expect(daemon.logs()).toContain("fermix runs as root: run_command's commands run as uid 1000 (sandbox) in the sandbox");
  else expect(daemon.logs()).not.toContain("fermix runs as root");
});

test("a Unix socket server in a granted folder is unreachable with the network off: the server sees no connection", async () => {
  const folder = start.dataFolder();
  const socketPath = join(folder, "service.sock");
  let connections = 0;
  const server = Bun.listen({ unix: socketPath, socket: { open: () => void connections++, data() {} } });
  start.defer(() => server.stop(true));
  const { model, home } = await startWithModel([{ path: folder, mode: "ro" }]);

  // python3 is the client (.ci/run installs python3-minimal): sh cannot connect to a Unix socket.
  const client = `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(socketPath)})\nprint("connected")`;
  model.reply(
    reply.toolCall("run_command", { command: ["ls", folder] }),
    reply.toolCall("run_command", { command: ["python3", "-c", client] }),
    reply.text("could not reach it"),
  );
  const r = await runFermix(["ask", "talk to the service in my folder"], home.env);
  expect(r.exitCode).toBe(0);
  // The grant is real: the command sees the socket in the folder…
  expect(lastToolOutput(model.requests[1]!)).toContain("service.sock");
  // …and cannot make a Unix socket to connect with.
  const attempt = lastToolOutput(model.requests[2]!);
  expect(attempt).not.toContain("connected");
  expect(attempt).toContain("PermissionError");

  // The server is live and counting: the same client from outside the sandbox gets in. Connections are accepted
  // in the order they were made, so a connection from the command (made earlier) would have been counted first:
  // once the outside one is seen, the count says whether the command's ever arrived.
  const outside = Bun.spawn(["python3", "-c", client], { stdout: "pipe" });
  expect(await new Response(outside.stdout).text()).toContain("connected");
  await until("the server to accept the outside client", () => connections >= 1);
  expect(connections).toBe(1);
});
