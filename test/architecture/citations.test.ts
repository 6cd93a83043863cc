/**
 * Comments and documents cite only what the repository holds: each `*.md`
 * named in a comment, a document or a script exists (and so does the
 * heading or anchor named with it), and no text points at notes a
 * contributor does not have. A failure names the file, the line, the
 * citation and what is wrong with it.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { anchorOf, checkText, commentsOf, type Repository, runtimeNames, unresolvedCitations } from "./citations.ts";

const ROOT = join(import.meta.dir, "../..");

/**
 * Files being rewritten on another branch of this change, whose opening
 * comments still cite notes outside the repository; the rewrite fixes them.
 * Each entry must still have a finding (the last test fails once its file is
 * clean, so the entry goes with it).
 */

const findings = () => unresolvedCitations(ROOT).map((c) => ({ ...c, text: `${c.file}:${c.line}: ${c.cited} (${c.problem})` }));

test("every comment, document and script of the repository cites only files and headings it holds", () => {
  expect(findings().map((c) => c.text)).toEqual([]);
});

describe("the check itself", () => {
  const repo: Repository = { root: ROOT, runtimeNames: runtimeNames(ROOT) };
  const problems = (text: string, file = "src/gateway/example.ts", own?: Set<string>) =>
    checkText(repo, file, text, 1, own).map((c) => `${c.line}: ${c.cited}: ${c.problem}`);

  test("a missing file, a missing heading or anchor, and notes outside the repository are each named", () => {
    expect(
      problems(
        [
          "The pipeline of DESIGN.md, in order.",
          'Shaped as docs/http.md "Health checks" says.',
          "See docs/operations.md#backup-and-restore.",
          'The slash commands (seed page "Channels").',
          "As the seed's table has it.",
        ].join("\n"),
      ),
    ).toEqual([
      "4: seed page: names notes the repository does not have: point at docs/ or say it in place",
      "5: seed's: names notes the repository does not have: point at docs/ or say it in place",
      "1: DESIGN.md: DESIGN.md is not in the repository",
      '2: docs/http.md "Health checks": docs/http.md has no heading "Health checks"',
      "3: docs/operations.md#backup-and-restore: docs/operations.md has no heading #backup-and-restore",
    ]);
  });

  test("what is there resolves: docs by path, heading or anchor, a README section, a name beside the citing document, a file Fermix keeps at run time", () => {
    expect(problems('docs/http.md "The health report", docs/operations.md#the-command-sandbox, README.md "Skills: /skills", src/store/db.ts')).toEqual([]);
    expect(problems("[backups](operations.md#backups)", "docs/security.md")).toEqual([]);
    expect(problems("the persona lives in SOUL.md; a skill is its SKILL.md")).toEqual([]);
    expect(problems("a URL is not a citation: https://github.com/example/repo/blob/main/DESIGN.md")).toEqual([]);
    // A name the citing file itself makes as data (a test's fixture) is not a citation.
    expect(problems("Bob asking for notes/diary.md got it", "test/security/x.test.ts", new Set(["notes/diary.md"]))).toEqual([]);
    expect(problems("Bob asking for notes/diary.md got it", "test/security/x.test.ts")).toEqual(["1: notes/diary.md: notes/diary.md is not in the repository"]);
  });

  test("comments are read and strings, templates and regular expressions are not", () => {
    const source = [
      "/** Opening comment: see docs/http.md. */",
      'const a = "not // a comment, DESIGN.md";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text for the tokenizer under test; its ${ is what it must read, not a placeholder
      "const b = `template ${c /* in a template: x.md */} // still the template`;",
      "const re = /\\/\\/ not a comment/g; // a comment after a regex",
      "const half = total / 2; // division, then a comment",
      "/*",
      " * two lines down",
      " */",
    ].join("\n");
    expect(commentsOf(source)).toEqual([
      { line: 1, text: "* Opening comment: see docs/http.md. " },
      { line: 3, text: " in a template: x.md " },
      { line: 4, text: " a comment after a regex" },
      { line: 5, text: " division, then a comment" },
      { line: 6, text: "\n * two lines down\n " },
    ]);
  });

  test("anchors are made as GitHub makes them", () => {
    expect(anchorOf("The command sandbox")).toBe("the-command-sandbox");
    expect(anchorOf("Who may ask: host names and the dashboard token")).toBe("who-may-ask-host-names-and-the-dashboard-token");
    expect(anchorOf("`[fermix_core.delivery]`".replace(/`/g, ""))).toBe("fermix_coredelivery");
  });
});
