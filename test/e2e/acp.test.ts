/**
 * `fermix acp` as an editor uses it: the compiled binary spawned over stdio,
 * driven with the ACP SDK's client, against a running daemon (`fermix run`)
 * whose provider is the fake model server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Editor, spawnEditor } from "../channels/acp/editor.ts";
import { type FakeModel, reply, startFakeModel, userText } from "../fakes/model-server.ts";
import { type RunningDaemon, type RunResult, runFermix, startDaemon } from "../helpers/binary.ts";
import { providerToml, TELEGRAM_OFF } from "../helpers/config.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";

let fake: FakeModel;
let home: TestHome;
let daemon: RunningDaemon;
const editors: Editor[] = [];

function editor(): Editor {
  const e = spawnEditor(home.env);
  editors.push(e);
  return e;
}

beforeAll(async () => {
  fake = await startFakeModel();
  home = makeHome();
  // ACP stays on (its default): it is what these tests drive.
  home.writeConfig(providerToml(fake.url, { api: "responses", vision: true }) + TELEGRAM_OFF);
  daemon = await startDaemon(home.env);
});

afterEach(async () => {
  for (const e of editors.splice(0)) await e.close();
  fake.reset();
});

afterAll(async () => {
  if (daemon.proc.exitCode === null) await daemon.stop("SIGKILL");
  await fake.stop();
  home.cleanup();
});

describe("fermix acp", () => {
  test("the socket is 0600 in the 0700 home, and health's acp row is a live socket", async () => {
    const socket = join(home.home, "acp.sock");
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(home.home).mode & 0o777).toBe(0o700);
    const health = (await (await fetch(new URL("/health", daemon.url))).json()) as {
      channels: Array<{ name: string; status: string; mode: string | null; process_alive: boolean | null; enabled: boolean }>;
    };
    expect(health.channels.find((c) => c.name === "acp")).toEqual({ name: "acp", status: "ready", enabled: true, mode: "socket", process_alive: true });
  });

  test("initialize advertises image prompts (the primary provider has vision), no session loading, no auth", async () => {
    const e = editor();
    const init = await e.initialize();
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities?.promptCapabilities?.image).toBe(true);
    expect(init.agentCapabilities?.loadSession).toBe(false);
    expect(init.authMethods).toEqual([]);
    expect(init.agentInfo?.name).toBe("fermix");
  });

  test("a prompt's reply streams in several chunks, in order, then ends with end_turn", async () => {
    fake.reply(reply.slow(40, "Hel", "lo ", "there", "!"));
    const e = editor();
    await e.initialize();
    const sessionId = await e.newSession();
    const response = await e.prompt(sessionId, "say hello");
    expect(response.stopReason).toBe("end_turn");
    const chunks = e.chunks(sessionId);
    expect(chunks).toEqual(["Hel", "lo ", "there", "!"]);
    // Streamed once: the final answer is not sent again as a whole.
    expect(chunks.join("")).toBe("Hello there!");
    expect(userText(fake.requests[0]!)).toBe("say hello");
  });

  test("session/cancel mid-stream ends the turn with cancelled, and the model request is aborted", async () => {
    fake.reply(reply.hang("thinking about it"));
    const e = editor();
    await e.initialize();
    const sessionId = await e.newSession();
    const pending = e.prompt(sessionId, "take your time");
    await e.until((u) => u.some((n) => n.update.sessionUpdate === "agent_message_chunk"), "the first chunk");
    await e.cancel(sessionId);
    expect((await pending).stopReason).toBe("cancelled");
    const [request] = await fake.waitForRequests(1);
    await request!.untilAborted;
    expect(request!.aborted).toBe(true);

    // The session goes on: the next prompt is answered normally.
    fake.reply(reply.text("still here"));
    expect((await e.prompt(sessionId, "again")).stopReason).toBe("end_turn");
    expect(e.chunks(sessionId).join("")).toContain("still here");
  });

  test("a prompt starting with / reaches the model as text: ACP has no slash commands", async () => {
    fake.reply(reply.text("that is not a command here"));
    const e = editor();
    await e.initialize();
    const sessionId = await e.newSession();
    expect((await e.prompt(sessionId, "/help")).stopReason).toBe("end_turn");
    const [request] = await fake.waitForRequests(1);
    expect(userText(request!)).toBe("/help");
    expect(e.chunks(sessionId).join("")).toBe("that is not a command here");
  });

  test("two editors at once are isolated: each sees only its own session's reply", async () => {
    fake.fallback((request) => reply.slow(30, "echo: ", userText(request)));
    try {
      const [a, b] = [editor(), editor()];
      await Promise.all([a.initialize(), b.initialize()]);
      const [sa, sb] = await Promise.all([a.newSession(), b.newSession()]);
      const [ra, rb] = await Promise.all([a.prompt(sa, "alpha"), b.prompt(sb, "beta")]);
      expect([ra.stopReason, rb.stopReason]).toEqual(["end_turn", "end_turn"]);
      expect(a.chunks(sa).join("")).toBe("echo: alpha");
      expect(b.chunks(sb).join("")).toBe("echo: beta");
      expect(a.updates.every((n) => n.sessionId === sa)).toBe(true);
      expect(b.updates.every((n) => n.sessionId === sb)).toBe(true);
      // One editor cannot reach into another's session.
      await expect(b.prompt(sa, "intrude")).rejects.toThrow();
    } finally {
      fake.fallback(undefined);
    }
  });

  test("an editor that goes away mid-turn cancels its turn; the daemon serves the next one", async () => {
    fake.reply(reply.hang("half an answer"));
    const e = editor();
    await e.initialize();
    const sessionId = await e.newSession();
    void e.prompt(sessionId, "long job").catch(() => {});
    await e.until((u) => u.length > 0, "the first chunk");
    e.proc!.kill("SIGKILL");
    const [request] = await fake.waitForRequests(1);
    await request!.untilAborted;

    fake.reply(reply.text("fresh"));
    const next = editor();
    await next.initialize();
    const s2 = await next.newSession();
    expect((await next.prompt(s2, "hi")).stopReason).toBe("end_turn");
    expect(next.chunks(s2).join("")).toBe("fresh");
    expect(daemon.logs()).not.toContain("unhandled");
  });

  test("large prompts and replies cross the bridge intact", async () => {
    const big = "lorem ipsum ".repeat(250_000); // 3 MB each way
    fake.reply(reply.text(...Array.from({ length: 30 }, (_, i) => big.slice(i * 100_000, (i + 1) * 100_000))));
    const e = editor();
    await e.initialize();
    const sessionId = await e.newSession();
    expect((await e.prompt(sessionId, big)).stopReason).toBe("end_turn");
    expect(userText(fake.requests[0]!)).toBe(big);
    expect(e.chunks(sessionId).join("")).toBe(big);
  });

  test("the bridge exits when the editor closes its stdin", async () => {
    const e = editor();
    await e.initialize();
    e.proc!.stdin.end();
    expect(await e.proc!.exited).toBe(0);
  });
});

/** What `fermix acp` does when no daemon answers on the socket, whether the socket is missing or stale. */
function expectNoDaemon(r: RunResult): void {
  expect(r.exitCode).not.toBe(0);
  expect(r.stderr).toBe("the Fermix daemon is not running; start it with `fermix run`\n");
  expect(r.stdout).toBe("");
}

/** Leave a stale socket at `path`: a process that listens and then dies without cleaning up, as a crashed daemon does. */
function leaveStaleSocket(path: string): void {
  Bun.spawnSync([process.execPath, "-e", `Bun.listen({ unix: ${JSON.stringify(path)}, socket: { data() {} } }); process.kill(process.pid, "SIGKILL");`]);
}

describe("fermix acp without a daemon", () => {
  test("says so on stderr, exits non-zero, writes nothing on stdout", async () => {
    const h = makeHome();
    try {
      const r = await runFermix(["acp"], h.env, "");
      expectNoDaemon(r);
    } finally {
      h.cleanup();
    }
  });

  test("a stale socket left by a crashed daemon is reported the same way", async () => {
    const h = makeHome();
    try {
      mkdirSync(h.home, { recursive: true, mode: 0o700 });
      const path = join(h.home, "acp.sock");
      leaveStaleSocket(path);
      expect(existsSync(path)).toBe(true);
      const r = await runFermix(["acp"], h.env, "");
      expectNoDaemon(r);
    } finally {
      h.cleanup();
    }
  });
});

describe("start and shutdown", () => {
  test("a stale socket from a crashed run is replaced at start", async () => {
    const h = makeHome();
    h.writeConfig(TELEGRAM_OFF);
    try {
      const path = join(h.home, "acp.sock");
      leaveStaleSocket(path);
      expect(existsSync(path)).toBe(true);
      const d = await startDaemon(h.env);
      try {
        const e = spawnEditor(h.env);
        expect((await e.initialize()).protocolVersion).toBe(1);
        await e.close();
      } finally {
        await d.stop("SIGTERM");
      }
    } finally {
      h.cleanup();
    }
  });

  test("a daemon that stops mid-turn answers the prompt cancelled, and the bridge exits non-zero", async () => {
    const own = await startFakeModel();
    const h = makeHome();
    h.writeConfig(providerToml(own.url) + TELEGRAM_OFF);
    try {
      own.reply(reply.hang("working on it"));
      const d = await startDaemon(h.env);
      const e = spawnEditor(h.env);
      await e.initialize();
      const sessionId = await e.newSession();
      const pending = e.prompt(sessionId, "long job");
      await e.until((u) => u.length > 0, "the first chunk");
      expect(await d.stop("SIGTERM")).toBe(0);
      expect((await pending).stopReason).toBe("cancelled");
      expect(await e.proc!.exited).not.toBe(0);
      expect(await new Response(e.proc!.stderr).text()).toContain("the daemon closed the connection");
      expect(existsSync(join(h.home, "acp.sock"))).toBe(false);
    } finally {
      await own.stop();
      h.cleanup();
    }
  });

  test("a clean stop removes the socket", async () => {
    const h = makeHome();
    h.writeConfig(TELEGRAM_OFF);
    try {
      const d = await startDaemon(h.env);
      expect(existsSync(join(h.home, "acp.sock"))).toBe(true);
      expect(await d.stop("SIGTERM")).toBe(0);
      expect(existsSync(join(h.home, "acp.sock"))).toBe(false);
    } finally {
      h.cleanup();
    }
  });
});
