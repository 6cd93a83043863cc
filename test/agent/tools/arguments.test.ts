/**
 * What the model reads when its arguments do not fit a tool: every tool is
 * written once as a TypeBox schema (src/agent/tools/types.ts `defineTool`),
 * and a wrong type, a missing field or a field the tool does not take is
 * refused before the tool runs, with one message naming the field and what
 * it may be. For each family (react, send_attachment, the workspace tools,
 * jobs, memory, skills): the exact words, and that nothing happened.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { jobTools } from "../../../src/agent/jobs/tools.ts";
import { memoryTools } from "../../../src/agent/memory/tools.ts";
import type { SandboxRunner } from "../../../src/agent/sandbox/runner.ts";
import { DAY_MS, SkillLibrary } from "../../../src/agent/skills/library.ts";
import { skillTools } from "../../../src/agent/skills/tools.ts";
import { allowedFor, checkArguments, StringEnum } from "../../../src/agent/tools/arguments.ts";
import { reactTool } from "../../../src/agent/tools/react.ts";
import { sendAttachmentTool } from "../../../src/agent/tools/send_attachment.ts";
import { resultText, type Tool, type ToolContext, ToolError } from "../../../src/agent/tools/types.ts";
import { workspaceTools } from "../../../src/agent/tools/workspace/index.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { Telemetry } from "../../../src/kernel/telemetry.ts";
import type { ReplyPort } from "../../../src/message/index.ts";
import { IdempotencyStore } from "../../../src/store/idempotency.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import { MemoryStore } from "../../../src/store/memory.ts";
import { SkillStore } from "../../../src/store/skills.ts";
import { type Machine, makeMachine } from "../sandbox/fixture.ts";

let m: Machine;
/** Everything a tool did to the outside: port calls, messages said, commands run, access asked. */
let happened: string[];
let jobs: JobStore;
let memory: MemoryStore;
let skills: SkillLibrary;

beforeEach(() => {
  m = makeMachine();
  happened = [];
  jobs = new JobStore(m.db, () => 1_700_000_000_000);
  memory = new MemoryStore(m.db, () => 1_700_000_000_000);
  skills = new SkillLibrary({ store: new SkillStore(m.db), dir: join(m.workspace, "skills"), workspace: m.workspace, parkAfterMs: () => 30 * DAY_MS });
});
afterEach(() => m.cleanup());

function context(): ToolContext {
  const port = {
    capabilities: { edit: false, delete: false, react: ["👍", "❤"], media: true, typing: false },
    react: async (_id: string, emoji: string) => void happened.push(`react ${emoji}`),
    sendMedia: async (media: { filename: string }) => {
      happened.push(`sendMedia ${media.filename}`);
      return { id: "m1" };
    },
  } as unknown as ReplyPort;
  return {
    port,
    channel: "telegram",
    conversation: "telegram:42:",
    senderId: "42",
    role: "operator",
    target: { chatId: "42", replyTo: "7" },
    workspace: m.workspace,
    idempotency: new IdempotencyStore(m.db),
    signal: new AbortController().signal,
    effects: { reacted: false, attachments: 0 },
    say: async (markdown) => void happened.push(`say ${markdown}`),
  };
}

/** Every tool of every family, by name. */
function allTools(): Map<string, Tool> {
  const runner = { run: async () => void happened.push("run") } as unknown as SandboxRunner;
  const workspace = workspaceTools(
    { canAsk: true, direct: true },
    {
      reach: () => ({ workspace: m.workspace, readOnly: [], grants: [], homeDir: m.home }),
      policy: () => m.policy(),
      runner,
      commandTimeoutMs: 10_000,
      outputLimit: 8192,
      fermixHome: m.fermixHome,
      workspace: m.workspace,
      access: {
        request: async (request) => {
          happened.push(`ask ${request.path}`);
          return "denied";
        },
      },
      log: new Logger({ write: () => {} }, "error", new Redactor()),
      telemetry: new Telemetry(),
    },
  );
  const job = jobTools({
    store: jobs,
    timezone: "UTC",
    now: () => 1_700_000_000_000,
    resolveTarget: () => ({ channel: "telegram", chatId: "42" }),
    changed: () => happened.push("jobs changed"),
  });
  const all = [reactTool(["👍", "❤"])!, sendAttachmentTool, ...workspace, ...job, ...memoryTools(memory), ...skillTools(skills)];
  return new Map(all.map((tool) => [tool.spec.name, tool]));
}

/** What the model reads back for a call: the tool's answer, or `error: …` for a ToolError, as src/agent/agent.ts shows it. */
async function call(name: string, args: Record<string, unknown>): Promise<string> {
  const tool = allTools().get(name);
  if (!tool) throw new Error(`${name} is not built`);
  try {
    return resultText(await tool.run(args, context()));
  } catch (error) {
    if (error instanceof ToolError) return `error: ${error.message}`;
    throw error;
  }
}

/** Arguments each tool accepts, as a base for the cases below; a tool missing here fails the first test. */
const VALID: Record<string, Record<string, unknown>> = {
  react: { emoji: "👍" },
  send_attachment: { path: "notes.txt", caption: "the notes" },
  read_file: { path: "notes.txt", offset: 1, limit: 1 },
  write_file: { path: "new.txt", content: "hello" },
  edit_file: { path: "notes.txt", old_string: "hello", new_string: "hi", replace_all: true },
  list_dir: { path: "." },
  search_files: { path: ".", name: "*.txt", content: "hello" },
  run_command: { command: ["true"], cwd: ".", timeout_seconds: 1 },
  request_access: { path: "/etc/hostname", mode: "ro", reason: "to read the host name" },
  schedule: { when: "in 1 hour", request: "Remind the user to stretch", target: "telegram:42" },
  list_jobs: {},
  cancel_job: { id: 1 },
  remember: { text: "The user likes tea" },
  recall: { query: "tea" },
  forget: { id: 1, query: "tea" },
  use_skill: { name: "weekly-report" },
  propose_skill: { name: "weekly-report", content: "---\nname: weekly-report\ndescription: d\n---\n", reason: "it comes weekly" },
};

/** A value of the wrong type for a property of this schema. */
const wrongFor = (schema: { type?: string }): unknown => (schema.type === "string" || schema.type === undefined ? 42 : "42");

describe("every tool the model is offered", () => {
  test("each family's tools are covered here", () => {
    expect([...allTools().keys()].sort()).toEqual(Object.keys(VALID).sort());
  });

  test("a field the tool does not take is refused, naming it and what the tool takes; nothing runs", async () => {
    for (const [name, tool] of allTools()) {
      const takes = Object.keys(tool.spec.parameters.properties as object);
      const out = await call(name, { ...VALID[name], verbose: true });
      expect(out).toBe(
        takes.length === 0
          ? `error: ${name} takes no arguments (verbose is not one)`
          : `error: verbose is not an argument of ${name}; it takes ${takes.join(", ")}`,
      );
    }
    expect(happened).toEqual([]);
  });

  test("each required field left out is refused by name, with what it may be; nothing runs", async () => {
    for (const [name, tool] of allTools()) {
      const { properties, required = [] } = tool.spec.parameters as { properties: Record<string, never>; required?: string[] };
      for (const field of required) {
        const { [field]: _, ...rest } = VALID[name]!;
        expect(await call(name, rest)).toBe(`error: ${field} is required: ${allowedFor(properties[field]!)}`);
      }
    }
    expect(happened).toEqual([]);
  });

  test("each field of the wrong type is refused by name, with what it may be and what came; nothing runs", async () => {
    for (const [name, tool] of allTools()) {
      const properties = tool.spec.parameters.properties as Record<string, { type?: string }>;
      for (const [field, schema] of Object.entries(properties)) {
        const wrong = wrongFor(schema);
        expect(await call(name, { ...VALID[name], [field]: wrong })).toBe(
          `error: ${field} must be ${allowedFor(schema as never)}, not ${typeof wrong === "string" ? '"42"' : "42"}`,
        );
      }
    }
    expect(happened).toEqual([]);
  });
});

describe("the words, family by family", () => {
  test("react: a type, a missing emoji, an extra field, an emoji outside the channel's set", async () => {
    expect(await call("react", { emoji: 1 })).toBe('error: emoji must be one of "👍", "❤", not 1');
    expect(await call("react", {})).toBe('error: emoji is required: one of "👍", "❤"');
    expect(await call("react", { emoji: "👍", to: "everyone" })).toBe("error: to is not an argument of react; it takes emoji");
    expect(await call("react", { emoji: "🦄" })).toBe('error: emoji: "🦄" is not allowed here; use one of: 👍 ❤');
    expect(happened).toEqual([]);
    expect(await call("react", { emoji: "👍" })).toBe("reacted with 👍");
    expect(happened).toEqual(["react 👍"]);
  });

  test("send_attachment: a list for a path, no path, an extra field; nothing is sent", async () => {
    expect(await call("send_attachment", { path: ["notes.txt"] })).toBe("error: path must be a string, not a list");
    expect(await call("send_attachment", { caption: "hi" })).toBe("error: path is required: a string");
    expect(await call("send_attachment", { path: "notes.txt", to: "bob" })).toBe("error: to is not an argument of send_attachment; it takes path, caption");
    expect(happened).toEqual([]);
    expect(await call("send_attachment", { path: "notes.txt" })).toBe("sent notes.txt");
  });

  test("workspace: nothing is written, run or asked for on a bad call; several wrong fields are named in one message", async () => {
    expect(await call("write_file", { path: "new.txt", content: 42 })).toBe("error: content must be a string, not 42");
    expect(existsSync(join(m.workspace, "new.txt"))).toBe(false);
    expect(await call("write_file", { path: 1, content: { text: "x" } })).toBe("error: path must be a string, not 1; content must be a string, not an object");
    expect(await call("read_file", {})).toBe("error: path is required: a string");
    expect(await call("read_file", { path: "notes.txt", offset: 0 })).toBe("error: offset must be a whole number of at least 1, not 0");
    expect(await call("run_command", { command: ["ls", 1] })).toBe("error: command must be a string or a non-empty list of strings, not a list");
    expect(await call("run_command", { command: [] })).toBe("error: command must be a string or a non-empty list of strings, not a list");
    expect(await call("run_command", { command: "ls", shell: "bash" })).toBe(
      "error: shell is not an argument of run_command; it takes command, cwd, timeout_seconds",
    );
    expect(await call("request_access", { path: m.outsideRo, mode: "read", reason: "to read it" })).toBe(
      'error: mode: "read" is not allowed here; use one of: ro rw',
    );
    expect(await call("edit_file", { path: "notes.txt", old_string: "hello", new_string: "hi", replace_all: "yes" })).toBe(
      'error: replace_all must be true or false, not "yes"',
    );
    expect(happened).toEqual([]);
  });

  test("workspace: a null for an optional argument means it was left out", async () => {
    expect(await call("read_file", { path: "notes.txt", offset: null, limit: null })).toBe("hello from the workspace\n");
    expect(await call("list_dir", { path: null })).toContain("notes.txt");
    // A null where the field is required is still refused.
    expect(await call("read_file", { path: null })).toBe("error: path must be a string, not null");
  });

  test("jobs: a number for when, no id, an argument to list_jobs, an id as text; no job is kept", async () => {
    expect(await call("schedule", { when: 5, request: "stretch" })).toBe("error: when must be a string, not 5");
    expect(await call("schedule", { when: "in 1 hour" })).toBe("error: request is required: a string");
    expect(await call("cancel_job", {})).toBe("error: id is required: a whole number");
    expect(await call("cancel_job", { id: "#3" })).toBe('error: id must be a whole number, not "#3"');
    expect(await call("list_jobs", { all: true })).toBe("error: list_jobs takes no arguments (all is not one)");
    expect(jobs.live()).toEqual([]);
    expect(happened).toEqual([]);
  });

  test("memory: a number for a fact, no query, an extra field; nothing is remembered or forgotten", async () => {
    expect(await call("remember", { text: 3 })).toBe("error: text must be a string, not 3");
    expect(await call("remember", { text: "The user likes tea", tags: ["tea"] })).toBe("error: tags is not an argument of remember; it takes text");
    expect(memory.count()).toBe(0);
    await call("remember", { text: "The user likes tea" });
    expect(await call("recall", {})).toBe("error: query is required: a string");
    expect(await call("forget", { id: 1.5 })).toBe("error: id must be a whole number, not 1.5");
    expect(memory.count()).toBe(1);
  });

  test("skills: no reason, a number for a name, an extra field; nothing is proposed", async () => {
    expect(await call("propose_skill", { name: "weekly-report", content: "x" })).toBe("error: reason is required: a string");
    expect(await call("use_skill", { name: 3 })).toBe("error: name must be a string, not 3");
    expect(await call("use_skill", { name: "weekly-report", version: 2 })).toBe("error: version is not an argument of use_skill; it takes name");
    expect(skills.pending()).toEqual([]);
    expect(happened).toEqual([]);
  });
});

describe("checkArguments on its own", () => {
  const schema = Type.Object(
    { mode: StringEnum(["ro", "rw"]), count: Type.Optional(Type.Integer({ minimum: 1, maximum: 9 })), long: Type.Optional(Type.String()) },
    { additionalProperties: false },
  );

  test("arguments that fit come back typed, without nulls for optional fields", () => {
    expect(checkArguments("t", schema, { mode: "rw", count: 3 })).toEqual({ mode: "rw", count: 3 });
    expect(checkArguments("t", schema, { mode: "ro", count: null })).toEqual({ mode: "ro" });
  });

  test("what is not an object is refused as a whole; a long string is not quoted back", () => {
    expect(() => checkArguments("t", schema, [1])).toThrow("the arguments must be a JSON object");
    expect(() => checkArguments("t", schema, "rw")).toThrow("the arguments must be a JSON object");
    expect(() => checkArguments("t", schema, { mode: "ro", count: 10 })).toThrow("count must be a whole number from 1 to 9, not 10");
    expect(() => checkArguments("t", schema, { mode: "x".repeat(500) })).toThrow("mode: a string of 500 characters is not allowed here; use one of: ro rw");
  });
});
