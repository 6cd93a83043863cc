/**
 * The workspace tools on a real directory tree: what they reach, what they
 * refuse (`..`, symbolic links that point out, read-only parts, paths never
 * granted), what a refusal tells the model, and who is offered them.
 */

import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectBackend } from "../../../src/agent/sandbox/detect.ts";
import { usableGrants } from "../../../src/agent/sandbox/policy.ts";
import { SandboxRunner } from "../../../src/agent/sandbox/runner.ts";
import type { Tool, ToolContext } from "../../../src/agent/tools/types.ts";
import { resultText } from "../../../src/agent/tools/types.ts";
import { type AccessBroker, type AccessRequest, type WorkspaceDeps, workspaceTools } from "../../../src/agent/tools/workspace/index.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { Telemetry, type TelemetryEvent } from "../../../src/kernel/telemetry.ts";
import type { ReplyPort } from "../../../src/message/index.ts";
import { type Machine, makeMachine } from "../sandbox/fixture.ts";

let m: Machine;
let logLines: string[];
let events: TelemetryEvent[];
let asked: AccessRequest[];
let answer: "granted" | "denied" | "timed_out";

beforeEach(() => {
  m = makeMachine();
  logLines = [];
  events = [];
  asked = [];
  answer = "granted";
});
afterEach(() => m.cleanup());

function deps(overrides: Partial<WorkspaceDeps> = {}): WorkspaceDeps {
  const telemetry = new Telemetry();
  telemetry.onAny((e) => events.push(e));
  const redactor = new Redactor();
  redactor.add("sk-known-secret-value-1234");
  const broker: AccessBroker = {
    async request(request) {
      asked.push(request);
      if (answer === "granted") m.store.grant(request.path, request.mode, "test");
      return answer;
    },
  };
  const backend = detectBackend();
  return {
    reach: () => ({
      workspace: m.workspace,
      readOnly: [join(m.workspace, "SOUL.md"), join(m.workspace, "skills")],
      grants: usableGrants(m.store.grants(), m.fermixHome, existsSync),
      homeDir: m.home,
    }),
    policy: () => m.policy(),
    runner: backend ? new SandboxRunner(backend) : null,
    commandTimeoutMs: 10_000,
    outputLimit: 8192,
    fermixHome: m.fermixHome,
    workspace: m.workspace,
    access: broker,
    log: new Logger({ write: (line) => logLines.push(line) }, "debug", redactor),
    telemetry,
    ...overrides,
  };
}

function context(): ToolContext {
  return {
    port: { capabilities: { edit: false, delete: false, react: false, media: false, typing: false } } as unknown as ReplyPort,
    channel: "telegram",
    conversation: "telegram:42:",
    senderId: "42",
    role: "operator",
    target: { chatId: "42" },
    workspace: m.workspace,
    idempotency: undefined as never,
    signal: new AbortController().signal,
    effects: { reacted: false, attachments: 0 },
    say: async () => {},
  };
}

function tools(overrides: Partial<WorkspaceDeps> = {}, scope = { canAsk: true, direct: true }): Map<string, Tool> {
  return new Map(workspaceTools(scope, deps(overrides)).map((t) => [t.spec.name, t]));
}

/** Run a tool as the agent does: a ToolError becomes "error: …" for the model. */
async function call(name: string, args: Record<string, unknown>, set = tools()): Promise<string> {
  const tool = set.get(name);
  if (!tool) throw new Error(`${name} is not offered`);
  try {
    return resultText(await tool.run(args, context()));
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe("what is made (who is offered it is the role table's: test/gateway/roles.test.ts)", () => {
  test("every workspace tool; a machine without a sandbox gets no run_command, one without an answerer no request_access", () => {
    expect([...tools().keys()]).toEqual(["read_file", "write_file", "edit_file", "list_dir", "search_files", "run_command", "request_access"]);
    expect([...tools({ runner: null }).keys()]).toEqual(["read_file", "write_file", "edit_file", "list_dir", "search_files", "request_access"]);
    expect([...tools({ access: undefined }).keys()]).not.toContain("request_access");
  });
});

describe("reaching files", () => {
  test("read, write, edit and list inside the workspace", async () => {
    expect(await call("read_file", { path: "notes.txt" })).toBe("hello from the workspace\n");
    expect(await call("write_file", { path: "drafts/plan.md", content: "step one\nstep two\n" })).toContain("drafts/plan.md");
    expect(readFileSync(join(m.workspace, "drafts/plan.md"), "utf8")).toBe("step one\nstep two\n");
    expect(await call("edit_file", { path: "drafts/plan.md", old_string: "step two", new_string: "step 2" })).toContain("replaced 1 occurrence");
    expect(readFileSync(join(m.workspace, "drafts/plan.md"), "utf8")).toBe("step one\nstep 2\n");
    const listing = await call("list_dir", {});
    expect(listing).toContain("drafts/");
    expect(listing).toContain("notes.txt (25 bytes)");
  });

  test("`..` out of the workspace is refused, and the refusal says how to ask", async () => {
    const out = await call("read_file", { path: "../config.toml" });
    expect(out).toStartWith("error:");
    expect(out).toContain("outside the workspace");
    expect(out).toContain("request_access");
    expect(out).not.toContain("not-for-commands");
    expect(await call("read_file", { path: "../../diary.txt" })).not.toContain(m.secretText);
    expect(await call("write_file", { path: "../../planted.txt", content: "x" })).toStartWith("error:");
    expect(existsSync(join(m.home, "planted.txt"))).toBe(false);
    // An absolute path outside is the same.
    expect(await call("read_file", { path: m.secretFile })).toContain("outside the workspace");
  });

  test("a symbolic link that points out is refused for reading, writing and listing; one that stays in is followed", async () => {
    symlinkSync(m.secretFile, join(m.workspace, "diary-link"));
    symlinkSync(m.home, join(m.workspace, "home-link"));
    symlinkSync(join(m.workspace, "notes.txt"), join(m.workspace, "notes-link"));
    const read = await call("read_file", { path: "diary-link" });
    expect(read).toContain("symbolic link that points outside the workspace");
    expect(read).not.toContain(m.secretText);
    expect(await call("read_file", { path: "home-link/diary.txt" })).toStartWith("error:");
    expect(await call("write_file", { path: "home-link/planted.txt", content: "x" })).toStartWith("error:");
    expect(existsSync(join(m.home, "planted.txt"))).toBe(false);
    expect(await call("list_dir", { path: "home-link" })).toStartWith("error:");
    expect(await call("read_file", { path: "notes-link" })).toBe("hello from the workspace\n");
  });

  test("a link to a file that does not exist yet cannot be used to create it outside", async () => {
    symlinkSync(join(m.home, "planted.txt"), join(m.workspace, "dangling"));
    symlinkSync(join(m.home, "newdir"), join(m.workspace, "dangling-dir"));
    expect(await call("write_file", { path: "dangling", content: "x" })).toContain("symbolic link that points outside");
    expect(await call("write_file", { path: "dangling-dir/file.txt", content: "x" })).toStartWith("error:");
    expect(existsSync(join(m.home, "planted.txt"))).toBe(false);
    expect(existsSync(join(m.home, "newdir"))).toBe(false);
    // A dangling link that stays inside is fine: the file is created where it points.
    symlinkSync(join(m.workspace, "later.txt"), join(m.workspace, "to-later"));
    expect(await call("write_file", { path: "to-later", content: "soon" })).toContain("later.txt");
    expect(readFileSync(join(m.workspace, "later.txt"), "utf8")).toBe("soon");
  });

  test("search does not follow links out of the workspace", async () => {
    symlinkSync(m.home, join(m.workspace, "home-link"));
    writeFileSync(join(m.workspace, "todo.md"), "buy milk\nthe-owner-private-diary? no\n");
    const byContent = await call("search_files", { content: "private-diary" });
    expect(byContent).toBe("todo.md:2: the-owner-private-diary? no");
    expect(await call("search_files", { name: "*.txt" })).toBe("notes.txt");
    expect(await call("search_files", { name: "*.md", content: "milk" })).toBe("todo.md:1: buy milk");
  });

  test("SOUL.md and skills/ are read-only to the tools", async () => {
    expect(await call("read_file", { path: "SOUL.md" })).toBe("# Soul\n");
    const soul = await call("write_file", { path: "SOUL.md", content: "# Evil" });
    expect(soul).toContain("read-only");
    expect(soul).toContain("/soul");
    expect(await call("edit_file", { path: "SOUL.md", old_string: "Soul", new_string: "Evil" })).toStartWith("error:");
    expect(await call("write_file", { path: "skills/new/SKILL.md", content: "x" })).toStartWith("error:");
    expect(readFileSync(join(m.workspace, "SOUL.md"), "utf8")).toBe("# Soul\n");
    expect(existsSync(join(m.workspace, "skills/new"))).toBe(false);
  });

  test("grants: read-only can be read, not written; read-write both", async () => {
    m.store.grant(m.outsideRo, "ro", "test");
    m.store.grant(m.outsideRw, "rw", "test");
    expect(await call("read_file", { path: join(m.outsideRo, "report.txt") })).toBe("quarterly numbers\n");
    const refused = await call("write_file", { path: join(m.outsideRo, "x.txt"), content: "x" });
    expect(refused).toContain("granted read-only");
    expect(refused).toContain('mode "rw"');
    expect(await call("write_file", { path: join(m.outsideRw, "out.txt"), content: "done" })).toContain(join(m.outsideRw, "out.txt"));
    expect(readFileSync(join(m.outsideRw, "out.txt"), "utf8")).toBe("done");
  });

  test("edit_file wants its text exactly once, or replace_all", async () => {
    writeFileSync(join(m.workspace, "list.txt"), "a\nb\na\n");
    expect(await call("edit_file", { path: "list.txt", old_string: "a", new_string: "c" })).toContain("occurs 2 times");
    expect(await call("edit_file", { path: "list.txt", old_string: "zzz", new_string: "c" })).toContain("not found");
    expect(await call("edit_file", { path: "list.txt", old_string: "a", new_string: "c", replace_all: true })).toContain("replaced 2 occurrences");
    expect(readFileSync(join(m.workspace, "list.txt"), "utf8")).toBe("c\nb\nc\n");
  });

  test("read_file pages through a long file", async () => {
    writeFileSync(join(m.workspace, "long.txt"), Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n"));
    expect(await call("read_file", { path: "long.txt", offset: 10, limit: 3 })).toBe("line 10\nline 11\nline 12");
    expect(await call("read_file", { path: "long.txt", offset: 99 })).toContain("50 lines");
  });
});

describe("run_command", () => {
  test("runs in the workspace and reports exit code and output; a cwd out of reach is refused", async () => {
    const out = await call("run_command", { command: ["ls"] });
    expect(out).toStartWith("exit code 0");
    expect(out).toContain("notes.txt");
    expect(out).toContain("SOUL.md");
    const failed = await call("run_command", { command: "echo oops >&2; exit 3" });
    expect(failed).toBe("exit code 3\nstderr:\noops");
    expect(await call("run_command", { command: "ls", cwd: m.home })).toContain("outside the workspace");
    expect(await call("run_command", { command: "" })).toStartWith("error:");
  });
});

describe("run_command's limits, as the model reads them", () => {
  test("past its timeout the command is killed and the answer says so; a longer timeout than allowed is held to the cap", async () => {
    const started = performance.now();
    const out = await call("run_command", { command: "echo begun; sleep 30", timeout_seconds: 1 });
    expect(out).toStartWith("killed: it ran past its 1 s timeout");
    expect(out).toContain("begun");
    expect(performance.now() - started).toBeLessThan(10_000);
    // With a 2 s limit for commands, asking for an hour gets 2 s, and says which.
    const capped = await call("run_command", { command: "sleep 30", timeout_seconds: 3600 }, tools({ commandTimeoutMs: 2000 }));
    expect(capped).toStartWith("killed: it ran past its 2 s timeout");
    expect(await call("run_command", { command: "true", timeout_seconds: -1 })).toBe("error: timeout_seconds must be a whole number of at least 1, not -1");
  }, 30_000);

  test("output over the limit is cut from the middle: both ends stay, and a note says how much went and how to see it all", async () => {
    const out = await call("run_command", { command: "echo FIRST-LINE; head -c 50000 /dev/zero | tr '\\0' x; echo; echo LAST-LINE" });
    expect(out).toStartWith("exit code 0\nstdout:\nFIRST-LINE");
    expect(out).toContain("LAST-LINE");
    expect(out).toMatch(/\[output truncated: \d+ of 50\d{3} bytes cut from the middle; redirect to a file in the workspace and read it in pages to see all\]/);
    expect(out.length).toBeLessThan(8192 + 400);
  });
});

describe("request_access", () => {
  test("asks the broker for a real, grantable path and reports the answer", async () => {
    expect(await call("request_access", { path: m.outsideRo, mode: "ro", reason: "to read the quarterly report" })).toContain("granted: read-only access");
    expect(asked).toEqual([{ path: m.outsideRo, mode: "ro", reason: "to read the quarterly report", direct: true }]);
    // Granted means usable at once, in the same turn.
    expect(await call("read_file", { path: join(m.outsideRo, "report.txt") })).toBe("quarterly numbers\n");
    expect(await call("request_access", { path: m.outsideRo, mode: "ro", reason: "again" })).toContain("already have");
    answer = "denied";
    expect(await call("request_access", { path: m.outsideRw, mode: "rw", reason: "to write results" })).toStartWith("denied");
    answer = "timed_out";
    expect(await call("request_access", { path: m.outsideRw, mode: "rw", reason: "to write results" })).toStartWith("timed out");
  });

  test("never for the Fermix home or what holds it, nor for what does not exist", async () => {
    for (const path of [m.fermixHome, m.home, join(m.fermixHome, "config.toml"), "/"]) {
      expect(await call("request_access", { path, mode: "ro", reason: "curious" })).toContain("cannot ask for that");
    }
    expect(await call("request_access", { path: join(m.root, "nope"), mode: "ro", reason: "x" })).toContain("does not exist");
    expect(await call("request_access", { path: m.outsideRo, mode: "ro", reason: "" })).toContain("reason is required");
    expect(asked).toEqual([]);
  });
});

describe("the log and telemetry", () => {
  test("every call and its outcome is logged, with contents by size only and known secrets blanked", async () => {
    await call("write_file", { path: "key.txt", content: "sk-known-secret-value-1234 and more text" });
    await call("read_file", { path: "../config.toml" });
    await call("run_command", { command: "echo sk-known-secret-value-1234" });
    const lines = logLines.filter((l) => l.includes('msg="tool call"'));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain("tool=write_file");
    expect(lines[0]).toContain("outcome=ok");
    expect(lines[0]).toContain("<40 chars>");
    expect(lines[1]).toContain("tool=read_file");
    expect(lines[1]).toContain("outcome=refused");
    expect(lines[2]).toContain("tool=run_command");
    expect(logLines.join("\n")).not.toContain("sk-known-secret-value-1234");
    expect(
      events
        .filter((e) => e.name === "tool.call")
        .map((e) => [(e as TelemetryEvent<"tool.call">).metadata.tool, (e as TelemetryEvent<"tool.call">).metadata.outcome]),
    ).toEqual([
      ["write_file", "ok"],
      ["read_file", "refused"],
      ["run_command", "ok"],
    ]);
  });
});

describe("every file tool, on the paths that must not reach through", () => {
  /** One call of each file tool on `path` (a folder for list_dir and search_files, a file for the rest). */
  const everyTool = (path: string): Array<[string, Record<string, unknown>]> => [
    ["read_file", { path }],
    ["write_file", { path, content: "x" }],
    ["edit_file", { path, old_string: "a", new_string: "b" }],
    ["list_dir", { path }],
    ["search_files", { path, content: "." }],
  ];

  test("`..` past the workspace and a link on the way out are refused by each, and nothing outside is touched", async () => {
    symlinkSync(m.home, join(m.workspace, "home-link"));
    for (const path of ["../../diary.txt", "home-link/diary.txt", "sub/../../config.toml"]) {
      for (const [name, args] of everyTool(path)) {
        const out = await call(name, args);
        expect([name, path, out]).toEqual([name, path, expect.stringMatching(/^error: .*(outside the workspace|symbolic link)/)]);
        expect(out).not.toContain(m.secretText);
      }
    }
    expect(readFileSync(m.secretFile, "utf8")).toBe(m.secretText);
  });

  test("a named pipe, a socket and /dev/zero are refused by each at once, with a clear error; a search over them skips them", async () => {
    expect(Bun.spawnSync(["mkfifo", join(m.workspace, "pipe")]).exitCode).toBe(0);
    const listener = Bun.listen({ unix: join(m.workspace, "sock"), socket: { data() {} } });
    m.store.grant("/dev", "rw", "test");
    try {
      for (const path of ["pipe", "sock", "/dev/zero"]) {
        for (const [name, args] of everyTool(path)) {
          const out = await call(name, args);
          expect([name, path, out]).toEqual([
            name,
            path,
            expect.stringMatching(/^error: .* is (a named pipe|a socket|a device).*, not a regular file or folder/),
          ]);
        }
      }
      const listing = await call("list_dir", {});
      expect(listing).toContain("pipe (named pipe)");
      expect(listing).toContain("sock (socket)");
      expect(await call("search_files", { content: "workspace" })).toBe("notes.txt:1: hello from the workspace");
      expect(await call("search_files", { name: "*" })).not.toContain("pipe");
    } finally {
      listener.stop(true);
    }
  });

  test("edit and search work in a granted folder too; a read-only grant refuses the edit", async () => {
    m.store.grant(m.outsideRo, "ro", "test");
    m.store.grant(m.outsideRw, "rw", "test");
    writeFileSync(join(m.outsideRw, "todo.txt"), "buy milk\n");
    expect(await call("edit_file", { path: join(m.outsideRw, "todo.txt"), old_string: "milk", new_string: "oat milk" })).toContain("replaced 1 occurrence");
    expect(readFileSync(join(m.outsideRw, "todo.txt"), "utf8")).toBe("buy oat milk\n");
    expect(await call("edit_file", { path: join(m.outsideRo, "report.txt"), old_string: "quarterly", new_string: "x" })).toContain("granted read-only");
    expect(await call("search_files", { path: m.outsideRo, content: "numbers" })).toBe(`${join(m.outsideRo, "report.txt")}:1: quarterly numbers`);
    expect(await call("list_dir", { path: m.outsideRo })).toBe(`${m.outsideRo}: 1 entry\nreport.txt (18 bytes)`);
  });

  test("SOUL.md and skills/ stay read-only through a link to the workspace itself", async () => {
    symlinkSync(m.workspace, join(m.workspace, "e"));
    expect(await call("write_file", { path: "e/SOUL.md", content: "# Evil" })).toContain("read-only to you");
    expect(await call("edit_file", { path: "e/SOUL.md", old_string: "Soul", new_string: "Evil" })).toContain("read-only to you");
    expect(await call("write_file", { path: "e/skills/evil/SKILL.md", content: "x" })).toContain("read-only to you");
    expect(readFileSync(join(m.workspace, "SOUL.md"), "utf8")).toBe("# Soul\n");
    expect(existsSync(join(m.workspace, "skills", "evil"))).toBe(false);
  });

  test("a file over 10 MB is not read whole, and says what to use instead", async () => {
    writeFileSync(join(m.workspace, "big.log"), Buffer.alloc(10 * 1024 * 1024 + 1, "a"));
    expect(await call("read_file", { path: "big.log" })).toBe(
      "error: big.log is 10485761 bytes, too large to read; use search_files or run_command (head, grep) on it",
    );
  });

  test("edits of one file at the same time all land: none reads another's half-written file", async () => {
    writeFileSync(join(m.workspace, "tally.txt"), "end\n");
    const set = tools();
    const outs = await Promise.all(Array.from({ length: 20 }, () => call("edit_file", { path: "tally.txt", old_string: "end", new_string: "+end" }, set)));
    expect(outs.every((o) => o.startsWith("replaced 1 occurrence"))).toBe(true);
    expect(readFileSync(join(m.workspace, "tally.txt"), "utf8")).toBe(`${"+".repeat(20)}end\n`);
  });
});
