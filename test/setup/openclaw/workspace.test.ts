/** MEMORY.md into memory facts (src/setup/openclaw/workspace.ts). */
import { expect, test } from "bun:test";
import { memoryFacts } from "../../../src/setup/openclaw/workspace.ts";
import { MAX_MEMORY_CHARS } from "../../../src/store/memory.ts";

test("each list item and paragraph is a fact under its heading; the file's title, rules and blank lines are not", () => {
  const markdown = [
    "# MEMORY.md",
    "",
    "Alice lives in Lyon.",
    "",
    "## Preferences",
    "- Coffee: black,",
    "  no sugar.",
    "* Answers in bullet points",
    "1. Metric units",
    "- [x] Dark mode",
    "",
    "---",
    "### Work",
    "Works at the library",
    "on weekdays.",
  ].join("\n");
  expect(memoryFacts(markdown)).toEqual([
    "Alice lives in Lyon.",
    "Preferences: Coffee: black, no sugar.",
    "Preferences: Answers in bullet points",
    "Preferences: Metric units",
    "Preferences: Dark mode",
    "Work: Works at the library on weekdays.",
  ]);
});

test("a fact longer than memory keeps is cut at sentence ends, each piece within the limit, nothing lost", () => {
  const text = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} is one of many about the garden.`).join(" ");
  const facts = memoryFacts(`- ${text}`);
  expect(facts.length).toBeGreaterThan(1);
  for (const fact of facts) {
    expect(fact.length).toBeLessThanOrEqual(MAX_MEMORY_CHARS);
    expect(fact).toMatch(/^Sentence number \d+ .*garden\.$/);
  }
  expect(facts.join(" ")).toBe(text);
});

test("the same fact twice is kept once", () => {
  expect(memoryFacts("- Likes tea\n- Likes tea\n")).toEqual(["Likes tea"]);
});
