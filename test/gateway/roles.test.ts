/**
 * The role table (src/gateway/roles.ts): one test per row and kind of turn,
 * written out tool by tool, so a change to the table shows up here as the
 * set a person would get; the table in docs/security.md says the same; and
 * every tool the daemon makes has a line in it (a tool without one is
 * offered to nobody).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Audience,
  mayUse,
  mcpRule,
  offeredTools,
  TOOL_TABLE,
  TRUST_ROWS,
  type TrustRow,
  TURN_MODES,
  type TurnMode,
  trustedWords,
  trustRow,
} from "../../src/gateway/roles.ts";
import type { Standing } from "../../src/gateway/trust.ts";

const ALL_TOOLS = Object.keys(TOOL_TABLE);
const offered = (audience: Audience) => ALL_TOOLS.filter((name) => mayUse(name, audience)).sort();

/** A representative audience of each row. */
const AUDIENCES: Record<TrustRow, Omit<Audience, "mode">> = {
  owner: { standing: "owner", direct: true, sharedToolsOn: false },
  owner_shared: { standing: "owner", direct: false, sharedToolsOn: false },
  owner_shared_on: { standing: "owner", direct: false, sharedToolsOn: true },
  allowed: { standing: "allowed", direct: true, sharedToolsOn: false },
  member: { standing: "allowed", direct: false, sharedToolsOn: true },
};

const READS = ["list_dir", "read_file", "search_files", "use_skill"];
const ACTS = ["edit_file", "propose_skill", "run_command", "schedule", "send_attachment", "web_fetch", "web_search", "write_file"];
const OWN = ["cancel_job", "forget", "list_jobs", "recall", "remember"];

/** What each row gets in a conversation turn, tool by tool. */
const FOREGROUND: Record<TrustRow, string[]> = {
  owner: [...READS, ...ACTS, ...OWN, "computer", "react", "request_access"],
  owner_shared: [...READS, ...OWN, "react"],
  owner_shared_on: [...READS, ...ACTS, ...OWN, "react", "request_access"],
  allowed: [...OWN, "react", "schedule"],
  member: [...OWN, "react"],
};

/** What a kind of turn takes away from the conversation turn's set. */
const NOT_IN: Record<TurnMode, string[]> = {
  foreground: [],
  // Nobody waits in the conversation to answer an access request, and a result is not a reaction;
  // nobody watches the desktop either, to /pause it.
  background: ["computer", "react", "request_access"],
  scheduled: ["computer", "react", "request_access"],
  // A part's reaction would answer the owner, which a part does not; the owner is there to answer access;
  // parts run side by side, and one desktop cannot be driven by several at once.
  ultra_part: ["computer", "react"],
  // A voice session's tool calls: the owner is there to answer access, and there is no message to react to;
  // the desktop belongs to the owner's conversations, where /pause reaches it.
  voice: ["computer", "react"],
};

describe("the rows", () => {
  test("where a sender stands and where they write decide the row", () => {
    const row = (standing: Standing, direct: boolean, sharedToolsOn = false) => trustRow({ standing, direct, sharedToolsOn });
    expect(row("owner", true)).toBe("owner");
    // An operator by command_allowlist gets the owner's tools only in a direct chat.
    expect(row("operator", true)).toBe("owner");
    expect(row("operator", false)).toBe("member");
    expect(row("operator", false, true)).toBe("member");
    expect(row("owner", false)).toBe("owner_shared");
    expect(row("owner", false, true)).toBe("owner_shared_on");
    expect(row("allowed", true)).toBe("allowed");
    expect(row("allowed", false, true)).toBe("member");
  });

  test("only the owner's words (an operator's in a direct chat) are trusted", () => {
    expect(TRUST_ROWS.filter((row) => trustedWords(AUDIENCES[row]))).toEqual(["owner", "owner_shared", "owner_shared_on"]);
    expect(trustedWords({ standing: "operator", direct: false, sharedToolsOn: false })).toBe(false);
  });
});

describe("the tools of each row, in each kind of turn", () => {
  for (const row of TRUST_ROWS) {
    for (const mode of TURN_MODES) {
      test(`${row}, ${mode}`, () => {
        const expected = FOREGROUND[row].filter((name) => !NOT_IN[mode].includes(name)).sort();
        expect(offered({ ...AUDIENCES[row], mode })).toEqual(expected);
      });
    }
  }

  test("nobody but the owner reads the workspace or sends a file from it", () => {
    for (const row of ["allowed", "member"] as const) {
      for (const mode of TURN_MODES) {
        const tools = offered({ ...AUDIENCES[row], mode });
        for (const name of [...READS, "write_file", "edit_file", "run_command", "send_attachment", "request_access", "propose_skill"])
          expect(tools).not.toContain(name);
      }
    }
  });

  test("the desktop is the owner's alone: an operator in a direct chat reads the owner row but does not get it", () => {
    for (const mode of TURN_MODES) {
      const operator = offered({ standing: "operator", direct: true, sharedToolsOn: false, mode });
      const owner = offered({ ...AUDIENCES.owner, mode });
      expect(operator).toEqual(owner.filter((name) => name !== "computer"));
    }
    expect(mayUse("computer", { standing: "operator", direct: true, sharedToolsOn: false, mode: "foreground" })).toBe(false);
    expect(mayUse("computer", { ...AUDIENCES.owner, mode: "foreground" })).toBe(true);
  });

  test("a tool the table does not name is offered to nobody, and the gate keeps the order it was given", () => {
    const tool = (name: string) => ({ spec: { name } });
    const owner = { ...AUDIENCES.owner, mode: "foreground" as const };
    expect(offeredTools([tool("write_file"), tool("shiny_new_tool"), tool("read_file")], owner).map((t) => t.spec.name)).toEqual(["write_file", "read_file"]);
    expect(mayUse("shiny_new_tool", owner)).toBe(false);
  });
});

describe("the web tools", () => {
  test("go with the acting tools: the owner's direct chat, or a shared chat the owner switched on; nobody else", () => {
    for (const name of ["web_fetch", "web_search"]) {
      for (const mode of TURN_MODES) {
        expect(TRUST_ROWS.filter((row) => mayUse(name, { ...AUDIENCES[row], mode }))).toEqual(["owner", "owner_shared_on"]);
      }
    }
  });
});

describe("MCP tools, by their server's roles", () => {
  const servers: Record<string, readonly ("owner" | "owner_shared_on" | "allowed" | "member")[]> = {
    files: ["owner"],
    wide: ["owner", "owner_shared_on", "allowed", "member"],
    closed: [],
  };
  const sources = { mcpRoles: (server: string) => servers[server] };
  const rows = (name: string) => TRUST_ROWS.filter((row) => mayUse(name, { ...AUDIENCES[row], mode: "foreground" }, sources));

  test("the default roles offer a server's tools to the owner in a direct chat only", () => {
    expect(rows("files__read")).toEqual(["owner"]);
    for (const mode of TURN_MODES) expect(mayUse("files__read", { ...AUDIENCES.owner, mode }, sources)).toBe(true);
  });

  test("roles widen them, but a shared chat gets them only where the owner switched tools on", () => {
    expect(rows("wide__search")).toEqual(["owner", "owner_shared_on", "allowed", "member"]);
    // The member of AUDIENCES writes in a group where tools are on; in one where they are off, and the owner there too: nothing.
    const off = { direct: false, sharedToolsOn: false, mode: "foreground" as const };
    expect(mayUse("wide__search", { ...off, standing: "allowed" }, sources)).toBe(false);
    expect(mayUse("wide__search", { ...off, standing: "owner" }, sources)).toBe(false);
  });

  test("no roles, an unknown server or a name that is not a server's offers nothing", () => {
    expect(rows("closed__tool")).toEqual([]);
    expect(rows("ghost__tool")).toEqual([]);
    expect(rows("files__")).toEqual([]);
    expect(mayUse("files__read", { ...AUDIENCES.owner, mode: "foreground" })).toBe(false);
  });

  test("a fixed tool's line is never replaced by a server's roles", () => {
    expect(mayUse("run_command", { ...AUDIENCES.allowed, mode: "foreground" }, { mcpRoles: () => ["allowed"] })).toBe(false);
  });
});

describe("docs/security.md", () => {
  /** The role table as the document shows it: tool → the rows marked ✓ ("✓ owner only": the owner themself), and a mode note in the last column. */
  function documentedTable(): Map<string, { rows: TrustRow[]; modes: string; ownerOnly: boolean }> {
    const text = readFileSync(join(import.meta.dir, "../../docs/security.md"), "utf8");
    const start = text.indexOf("<!-- role-table -->");
    const end = text.indexOf("<!-- /role-table -->");
    expect(start).toBeGreaterThan(-1);
    const lines = text
      .slice(start, end)
      .split("\n")
      .filter((line) => line.startsWith("| `"));
    const table = new Map<string, { rows: TrustRow[]; modes: string; ownerOnly: boolean }>();
    for (const line of lines) {
      const cells = line
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim());
      const name = cells[0]!.replace(/`/g, "");
      const marks = cells.slice(1, TRUST_ROWS.length + 1);
      const rows = TRUST_ROWS.filter((_, i) => marks[i] === "✓" || marks[i] === "✓ owner only");
      table.set(name, { rows, modes: cells[TRUST_ROWS.length + 1] ?? "", ownerOnly: marks.includes("✓ owner only") });
    }
    return table;
  }

  test("shows the same table as the code: every tool, every row, and each tool's kinds of turn", () => {
    const documented = documentedTable();
    // The MCP line shows a server's tools under the default roles.
    const mcp = [...documented.keys()].find((name) => name.startsWith("<server>__<tool>"));
    expect(mcp).toBeDefined();
    expect(documented.get(mcp!)!.rows).toEqual([...mcpRule(["owner"]).rows]);
    expect(documented.get(mcp!)!.modes).toBe("all");
    documented.delete(mcp!);
    expect([...documented.keys()].sort()).toEqual([...ALL_TOOLS].sort());
    for (const [name, rule] of Object.entries(TOOL_TABLE)) {
      expect({ name, rows: documented.get(name)!.rows }).toEqual({ name, rows: [...rule.rows] });
      expect({ name, ownerOnly: documented.get(name)!.ownerOnly }).toEqual({ name, ownerOnly: rule.ownerOnly === true });
      const modes = documented.get(name)!.modes;
      for (const mode of TURN_MODES) {
        const inRule = !rule.modes || rule.modes.includes(mode);
        // The last column names the kinds of turn a restricted tool is limited to; "all" otherwise.
        expect({ name, mode, offered: modes === "all" || modes.includes(mode) }).toEqual({ name, mode, offered: inRule });
      }
    }
  });
});
