/**
 * The skills service on a real SQLite file and a real skills folder; time is
 * an injected clock, so parking is tested by moving it, not by waiting.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TurnRequest } from "../../../src/agent/agent.ts";
import { DAY_MS, SkillLibrary, SkillRefused } from "../../../src/agent/skills/library.ts";
import { skillsSection, skillTools } from "../../../src/agent/skills/tools.ts";
import type { ToolContext } from "../../../src/agent/tools/types.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { SkillStore } from "../../../src/store/skills.ts";

const OWNER = { channel: "telegram", senderId: "111", conversation: "telegram:111:" };
const skill = (name: string, description: string, body = "Do it step by step.") => `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

let root: string;
let workspace: string;
let dir: string;
let db: Database;
let now: number;
let parkDays: number;

function library(): SkillLibrary {
  return new SkillLibrary({ store: new SkillStore(db), dir, workspace, parkAfterMs: () => parkDays * DAY_MS, now: () => now });
}

function drop(name: string, text: string, files: Record<string, string> = {}): void {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, "SKILL.md"), text);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, file, ".."), { recursive: true });
    writeFileSync(join(dir, name, file), content);
  }
}

const names = (lib: SkillLibrary) => lib.active().map((s) => s.name);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-skills-"));
  workspace = join(root, "workspace");
  dir = join(workspace, "skills");
  mkdirSync(dir, { recursive: true });
  db = openDatabase(join(root, "fermix.db"));
  now = 1_700_000_000_000;
  parkDays = 30;
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the folder", () => {
  test("skills dropped in, edited and removed by hand are noticed at the next look, each recorded with origin disk", () => {
    const lib = library();
    expect(lib.view()).toEqual({ skills: [], problems: [] });
    drop("weekly-report", skill("weekly-report", "Write the weekly report."));
    expect(names(lib)).toEqual(["weekly-report"]);
    drop("weekly-report", skill("weekly-report", "Write the weekly report as an email."));
    expect(lib.active()[0]!.description).toBe("Write the weekly report as an email.");
    rmSync(join(dir, "weekly-report"), { recursive: true });
    expect(names(lib)).toEqual([]);
    expect(lib.history(10).map((c) => `${c.change}/${c.origin}`)).toEqual(["removed/disk", "edited/disk", "found/disk"]);
  });

  test("folders that are not usable skills are listed with why, and never offered", () => {
    drop("no-front-matter", "# Just a heading\n");
    drop("wrong-name", skill("other-name", "x"));
    drop("no-description", "---\nname: no-description\n---\nbody\n");
    drop("bad-yaml", "---\nname: bad-yaml\ndescription: [unclosed\n---\n");
    mkdirSync(join(dir, "Not A Name"));
    mkdirSync(join(dir, "empty"));
    mkdirSync(join(dir, ".hidden"));
    writeFileSync(join(dir, "stray.md"), "not a folder");
    const { skills, problems } = library().view();
    expect(skills).toEqual([]);
    const why = Object.fromEntries(problems.map((p) => [p.folder, p.problem]));
    expect(Object.keys(why).sort()).toEqual(["Not A Name", "bad-yaml", "empty", "no-description", "no-front-matter", "wrong-name"]);
    expect(why["no-front-matter"]).toContain("must start with YAML front matter");
    expect(why["wrong-name"]).toContain('names it "other-name", but the folder is "wrong-name"');
    expect(why["no-description"]).toContain("no `description`");
    expect(why["bad-yaml"]).toContain("not valid YAML");
    expect(why.empty).toBe("it has no SKILL.md");
  });

  test("a skill that breaks is kept (not offered, not forgotten) and comes back with its usage when fixed", () => {
    const lib = library();
    drop("tidy", skill("tidy", "Tidy up."));
    lib.use("tidy");
    writeFileSync(join(dir, "tidy", "SKILL.md"), "oops");
    expect(names(lib)).toEqual([]);
    drop("tidy", skill("tidy", "Tidy up."));
    expect(lib.active()[0]!.uses).toBe(1);
  });
});

describe("parking", () => {
  test("a skill unused for park_after_days is parked automatically; a use restarts the count; unpark brings it back", () => {
    const lib = library();
    drop("tidy", skill("tidy", "Tidy up."));
    expect(names(lib)).toEqual(["tidy"]);
    now += 20 * DAY_MS;
    lib.use("tidy");
    now += 29 * DAY_MS;
    expect(names(lib)).toEqual(["tidy"]);
    now += 1 * DAY_MS;
    expect(names(lib)).toEqual([]);
    expect(lib.view().skills[0]!.state).toBe("parked");
    expect(() => lib.use("tidy")).toThrow('the skill "tidy" is parked: it is not offered now');
    expect(() => lib.restore("tidy", OWNER)).toThrow("is parked, not archived");

    lib.unpark("tidy", OWNER);
    expect(names(lib)).toEqual(["tidy"]);
    // Unparking starts the idle time again.
    now += 29 * DAY_MS;
    expect(names(lib)).toEqual(["tidy"]);
    now += 1 * DAY_MS;
    expect(names(lib)).toEqual([]);
    expect(lib.history(10, "tidy").map((c) => `${c.change}/${c.origin}`)).toEqual(["parked/automatic", "unparked/owner", "parked/automatic", "found/disk"]);
    expect(lib.history(10, "tidy")[0]!.note).toBe("unused for 30 days");
  });

  test("the park time is read at every look (a config reload shortens it)", () => {
    const lib = library();
    drop("tidy", skill("tidy", "Tidy up."));
    expect(names(lib)).toEqual(["tidy"]);
    now += 2 * DAY_MS;
    expect(names(lib)).toEqual(["tidy"]);
    parkDays = 1;
    expect(names(lib)).toEqual([]);
  });

  test("archived skills are not parked; archive and restore move between the lists", () => {
    const lib = library();
    drop("tidy", skill("tidy", "Tidy up."));
    lib.archive("tidy", OWNER);
    expect(() => lib.archive("tidy", OWNER)).toThrow("already archived");
    now += 100 * DAY_MS;
    expect(lib.view().skills[0]!.state).toBe("archived");
    lib.restore("tidy", OWNER);
    expect(names(lib)).toEqual(["tidy"]);
    expect(() => lib.unpark("tidy", OWNER)).toThrow("is not parked");
    expect(() => lib.archive("nope", OWNER)).toThrow('There is no skill named "nope"');
  });
});

describe("proposals", () => {
  test("a proposal takes effect only when approved; deny writes nothing; each is decided once", () => {
    const lib = library();
    const first = lib.propose(OWNER, "weekly-report", skill("weekly-report", "Write the weekly report."), "asked every Friday");
    expect(first.id).toBe(1);
    expect(first.baseText).toBeNull();
    expect(names(lib)).toEqual([]);
    expect(lib.pending().map((p) => p.id)).toEqual([1]);

    expect(lib.approve(1, OWNER).created).toBe(true);
    expect(names(lib)).toEqual(["weekly-report"]);
    expect(readFileSync(join(dir, "weekly-report", "SKILL.md"), "utf8")).toBe(skill("weekly-report", "Write the weekly report."));
    expect(() => lib.approve(1, OWNER)).toThrow("already been approved");
    expect(() => lib.deny(1, OWNER)).toThrow("already been approved");

    const change = lib.propose(OWNER, "weekly-report", skill("weekly-report", "Write it as an email."), "now an email");
    expect(change.baseText).toBe(skill("weekly-report", "Write the weekly report."));
    lib.deny(change.id, OWNER);
    expect(lib.active()[0]!.description).toBe("Write the weekly report.");
    expect(lib.pending()).toEqual([]);
    expect(() => lib.proposal(99)).toThrow("no skill proposal #99");

    const third = lib.propose(OWNER, "weekly-report", skill("weekly-report", "Write it as an email."), "really");
    expect(lib.approve(third.id, OWNER).created).toBe(false);
    expect(lib.active()[0]!.description).toBe("Write it as an email.");
    // The approval is not mistaken for an edit by hand.
    expect(lib.history(20, "weekly-report").map((c) => `${c.change}/${c.origin}`)).toEqual([
      "approved/owner",
      "proposed/agent",
      "denied/owner",
      "proposed/agent",
      "approved/owner",
      "proposed/agent",
    ]);
  });

  test("approving a change to a parked or archived skill makes it active again", () => {
    const lib = library();
    drop("tidy", skill("tidy", "Tidy up."));
    lib.archive("tidy", OWNER);
    lib.approve(lib.propose(OWNER, "tidy", skill("tidy", "Tidy up better."), "better").id, OWNER);
    expect(lib.active().map((s) => s.description)).toEqual(["Tidy up better."]);
  });

  test("a proposal that is not a usable skill is refused with why", () => {
    const lib = library();
    const refused = (name: string, content: string, reason = "because") => {
      try {
        lib.propose(OWNER, name, content, reason);
      } catch (error) {
        expect(error).toBeInstanceOf(SkillRefused);
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    expect(refused("Weekly Report", skill("weekly-report", "x"))).toContain("is not a skill name");
    expect(refused("../escape", skill("escape", "x"))).toContain("is not a skill name");
    expect(refused("weekly", "no front matter")).toContain("content is not a usable SKILL.md: SKILL.md must start with YAML front matter");
    expect(refused("weekly", skill("other", "x"))).toContain('names the skill "other", but name is "weekly"');
    expect(refused("weekly", skill("weekly", "x"), "  ")).toContain("say in reason why");
    drop("tidy", skill("tidy", "Tidy up."));
    expect(refused("tidy", skill("tidy", "Tidy up."))).toContain("already has exactly this content");
  });
});

describe("the tools and the prompt section", () => {
  const context = (said: string[]): ToolContext =>
    ({ ...OWNER, role: "operator", say: async (text: string) => void said.push(text) }) as unknown as ToolContext;
  const request = (tools: ReturnType<typeof skillTools>) => ({ text: "hi", tools }) as unknown as TurnRequest;

  test("the library makes both tools (the role table offers them), and only turns with use_skill get the section", () => {
    const lib = library();
    drop("tidy", skill("tidy", "Tidy up."));
    const tools = skillTools(lib);
    expect(tools.map((t) => t.spec.name)).toEqual(["use_skill", "propose_skill"]);
    const section = skillsSection(lib);
    expect(section(request([]))).toEqual([]);
    expect(section(request(tools))).toEqual([{ title: "Skills you have learnt", body: expect.stringContaining("- tidy: Tidy up.") }]);
  });

  test("use_skill returns the text and lists the skill's other files, and counts the use; propose_skill tells the owner", async () => {
    const lib = library();
    drop("deploy", skill("deploy", "Deploy the site."), { "scripts/run.sh": "echo hi", "notes.md": "n" });
    const [useSkill, proposeSkill] = skillTools(lib);
    const said: string[] = [];
    const out = await useSkill!.run({ name: "deploy" }, context(said));
    expect(out).toStartWith("---\nname: deploy");
    expect(out).toContain("Do it step by step.");
    expect(out).toContain("- skills/deploy/notes.md\n- skills/deploy/scripts/run.sh");
    expect(lib.active()[0]!.uses).toBe(1);
    expect(lib.active()[0]!.lastUsedAt).toBe(now);
    await expect(useSkill!.run({ name: "missing" }, context(said))).rejects.toThrow('there is no skill named "missing"');

    const result = await proposeSkill!.run({ name: "deploy", content: skill("deploy", "Deploy the site safely."), reason: "it broke once" }, context(said));
    expect(result).toBe("proposal #1 is waiting for the owner's review; it takes effect only if they approve it");
    expect(said).toEqual([expect.stringContaining("a change to the skill **deploy** (proposal #1)")]);
    expect(lib.active()[0]!.description).toBe("Deploy the site.");
  });
});
