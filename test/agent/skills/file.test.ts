/** SKILL.md parsing: front matter with Bun.YAML, the checks, and hostile input that must only ever be refused with a reason. */
import { describe, expect, test } from "bun:test";
import { MAX_SKILL_BYTES, nameProblem, parseSkill, SkillFormatError } from "../../../src/agent/skills/file.ts";
import { rng } from "../../helpers/fuzz.ts";

describe("parseSkill", () => {
  test("reads name, description and body; the description is one line", () => {
    const parsed = parseSkill("---\nname: weekly-report\ndescription: >\n  Write the weekly\n  report.\nlicense: MIT\n---\n\n# Steps\n\n1. Read.\n");
    expect(parsed).toEqual({ name: "weekly-report", description: "Write the weekly report.", body: "# Steps\n\n1. Read." });
  });

  test("a byte-order mark and CRLF line ends are fine; a quoted description may hold a colon", () => {
    expect(parseSkill('\uFEFF---\r\nname: a\r\ndescription: "x: y"\r\n---\r\nbody').description).toBe("x: y");
    expect(parseSkill("---\nname: a\ndescription: d\n---").body).toBe("");
  });

  test("what is wrong is said", () => {
    const why = (text: string) => {
      try {
        parseSkill(text);
      } catch (error) {
        expect(error).toBeInstanceOf(SkillFormatError);
        return (error as Error).message;
      }
      throw new Error("parsed");
    };
    expect(why("name: a\n")).toContain("must start with YAML front matter");
    expect(why("---\nname: a\ndescription: d\n")).toContain("must start with YAML front matter");
    expect(why("---\n- a\n- b\n---\n")).toContain("must be a YAML mapping");
    expect(why("---\ndescription: d\n---\n")).toContain("no `name`");
    expect(why("---\nname: 12\ndescription: d\n---\n")).toContain("no `name`");
    expect(why("---\nname: Big_Name\ndescription: d\n---\n")).toContain('"Big_Name" is not a skill name');
    expect(why("---\nname: a\ndescription: ''\n---\n")).toContain("no `description`");
    expect(why(`---\nname: a\ndescription: ${"x".repeat(1025)}\n---\n`)).toContain("longer than 1024 characters");
    expect(why(`---\nname: a\ndescription: d\n---\n${"x".repeat(MAX_SKILL_BYTES)}`)).toContain("larger than 64 KB");
  });

  test("names: lower-case letters, digits and single hyphens, at most 64", () => {
    for (const ok of ["a", "weekly-report", "x2", "a-b-c"]) expect(nameProblem(ok)).toBeNull();
    for (const bad of ["", "A", "a--b", "-a", "a-", "a_b", "a b", "../x", "a/b", "x".repeat(65)]) expect(nameProblem(bad)).not.toBeNull();
  });

  test("fuzz: random and mutated texts are parsed or refused with SkillFormatError, never anything else", () => {
    const base = "---\nname: weekly-report\ndescription: Write the report.\n---\n\nSteps.\n";
    const pieces = ["---", "\n", ":", "name", "description", "'", '"', "[", "{", "&a", "*a", "!!binary", "- ", "  ", "\u0000", "\uFEFF", "#"];
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      let text = base;
      for (let i = r.int(1, 6); i > 0; i--) {
        const at = r.int(0, text.length);
        text = r.next() < 0.5 ? text.slice(0, at) + r.pick(pieces) + text.slice(at) : text.slice(0, at) + text.slice(at + r.int(1, 8));
      }
      if (r.next() < 0.2) text = r.string(r.int(0, 80));
      try {
        const parsed = parseSkill(text);
        expect(nameProblem(parsed.name)).toBeNull();
        expect(parsed.description.length).toBeGreaterThan(0);
      } catch (error) {
        if (!(error instanceof SkillFormatError)) throw new Error(`seed ${seed}: ${String(error)}`);
      }
    }
  });
});
