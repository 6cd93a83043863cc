/**
 * Pipes, sockets and devices against the compiled binary. A named pipe read
 * in blocking mode waits for a writer that never comes, and a daemon that
 * does that on its event loop stops answering anyone — /health/live
 * included — until it is killed. Here the model makes a pipe with
 * run_command (inside the sandbox), the workspace also holds a pipe and a
 * Unix socket made by the test, /dev is granted read-only, and the model
 * points every file tool at each of them: each call comes back at once with
 * an error naming what the path is, and /health/live answers all along.
 */
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { SandboxStore } from "../../src/store/sandbox.ts";
import { type RecordedRequest, reply, type ToolCallSpec } from "../fakes/model-server.ts";
import { runFermix } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";

const start = e2eResources();

/** A poll of /health/live that gets no answer within this long counts as the daemon not answering: it was frozen for good before. */
const LIVE_TIMEOUT_MS = 5_000;
/** How often /health/live is asked while the tools run: often enough that a frozen stretch is seen, not a wait for anything. */
const LIVE_POLL_EVERY_MS = 20;

/** Every tool output the model was handed, by call id. */
function toolOutputs(requests: RecordedRequest[]): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const request of requests) {
    for (const item of request.body.input ?? []) {
      if (item.type === "function_call_output") outputs.set(item.call_id!, item.output ?? "");
    }
  }
  return outputs;
}

test("a named pipe (made by a command or not), a socket and /dev/zero: every file tool is refused at once, and /health/live answers throughout", async () => {
  const model = await start.model();
  const home = start.home();
  home.writeConfig(providerToml(model.url, { api: "responses" }) + CHANNELS_OFF);
  const workspace = join(home.home, "workspace");
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  writeFileSync(join(workspace, "notes.txt"), "plain notes\n");
  expect(Bun.spawnSync(["mkfifo", join(workspace, "pipe")]).exitCode).toBe(0);
  const listener = Bun.listen({ unix: join(workspace, "sock"), socket: { data() {} } });
  start.defer(() => listener.stop(true));
  const db = openDatabase(join(home.home, "fermix.db"));
  new SandboxStore(db).grant("/dev", "ro", "test");
  db.close();

  const targets = ["pipe", "made-pipe", "sock", "/dev/zero"];
  const calls: ToolCallSpec[] = targets.flatMap((path, i) =>
    [
      { name: "read_file", arguments: { path } },
      { name: "write_file", arguments: { path, content: "x" } },
      { name: "edit_file", arguments: { path, old_string: "a", new_string: "b" } },
      { name: "list_dir", arguments: { path } },
      { name: "search_files", arguments: { path, content: "x" } },
      { name: "send_attachment", arguments: { path } },
    ].map((call, j) => ({ ...call, callId: `call_${i}_${j}` })),
  );
  calls.push(
    { name: "search_files", arguments: { content: "plain notes" }, callId: "call_search_all" },
    { name: "list_dir", arguments: {}, callId: "call_list_all" },
  );
  model.reply(
    reply.toolCall("run_command", { command: "mkfifo made-pipe && ls -l made-pipe" }, { callId: "call_mkfifo" }),
    reply.toolCalls(...calls),
    reply.text("None of those are files I can use."),
  );

  const daemon = await start.daemon(home);
  const live = new URL("/health/live", daemon.url);
  let asking = true;
  const polls: number[] = [];
  const poller = (async () => {
    while (asking) {
      const response = await fetch(live, { signal: AbortSignal.timeout(LIVE_TIMEOUT_MS) }).catch((error: Error) => {
        throw new Error(`/health/live did not answer within ${LIVE_TIMEOUT_MS} ms while the tools ran (${error.name})`);
      });
      polls.push(response.status);
      await Bun.sleep(LIVE_POLL_EVERY_MS);
    }
  })();
  const ask = runFermix(["ask", "look at the pipe, the socket and /dev/zero"], home.env).finally(() => {
    asking = false;
  });
  // A daemon that stops answering fails here, with the poll's error, rather than waiting for the ask that never ends.
  const asked = await Promise.race([ask, poller.then(() => ask)]);
  await poller;

  expect(asked.stdout).toContain("None of those are files I can use.");
  expect(asked.exitCode).toBe(0);
  expect(polls.length).toBeGreaterThan(0);
  expect(polls.every((status) => status === 200)).toBe(true);

  const outputs = toolOutputs(model.requests);
  expect(outputs.get("call_mkfifo")).toMatch(/^exit code 0\nstdout:\np/);
  const words: Record<string, string> = {
    pipe: String.raw`is a (named pipe \(FIFO\)|socket or a named pipe), not a regular file or folder`,
    "made-pipe": String.raw`is a (named pipe \(FIFO\)|socket or a named pipe), not a regular file or folder`,
    sock: "is a socket or a named pipe, not a regular file or folder",
    // Granted read-only: writes stop there; send_attachment takes workspace files only.
    "/dev/zero": "is a device, not a regular file or folder|is granted read-only|is outside the workspace",
  };
  const tools = ["read_file", "write_file", "edit_file", "list_dir", "search_files", "send_attachment"];
  targets.forEach((path, i) => {
    const expected = new RegExp(`^error: ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} (${words[path]})`);
    tools.forEach((tool, j) => {
      expect({ tool, path, output: outputs.get(`call_${i}_${j}`) }).toEqual({ tool, path, output: expect.stringMatching(expected) });
    });
  });
  // Reading /dev/zero is refused as a device, not merely out of reach.
  expect(outputs.get("call_3_0")).toBe("error: /dev/zero is a device, not a regular file or folder: the file tools read and write only those.");
  // A search and a listing over the folder that holds them go on past them.
  expect(outputs.get("call_search_all")).toBe("notes.txt:1: plain notes");
  expect(outputs.get("call_list_all")).toContain("pipe (named pipe)");
  expect(outputs.get("call_list_all")).toContain("sock (socket)");
  expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("plain notes\n");
  expect((await fetch(live)).status).toBe(200);
}, 60_000);
