/** The words of an ultra turn: reading the planner's plan, the merge request, the footer. */
import { describe, expect, test } from "bun:test";
import { mergeInput, parsePlan, ultraFooter } from "../../../src/agent/ultra/plan.ts";
import { randomJson, rng } from "../../helpers/fuzz.ts";

const REQUEST = "compare three databases";

describe("parsePlan", () => {
  test("the JSON plan, bare, fenced, or with words around it", () => {
    const json = JSON.stringify({
      parts: [
        { title: "Postgres", task: "Look at Postgres" },
        { title: "SQLite", task: "Look at SQLite" },
      ],
    });
    const expected = {
      parts: [
        { title: "Postgres", task: "Look at Postgres" },
        { title: "SQLite", task: "Look at SQLite" },
      ],
      source: "plan",
    };
    expect(parsePlan(json, REQUEST, 4)).toEqual(expected as never);
    expect(parsePlan(`Here is the plan:\n\`\`\`json\n${json}\n\`\`\`\nGood luck.`, REQUEST, 4)).toEqual(expected as never);
    expect(parsePlan(`Sure! ${json} That's it.`, REQUEST, 4)).toEqual(expected as never);
  });

  test("a bare list of tasks or strings; parts without a task are skipped, titles default", () => {
    expect(parsePlan('["one", "  ", {"task": "two"}, {"title": "no task"}, {"description": "three"}]', REQUEST, 4)).toEqual({
      parts: [
        { title: "part 1", task: "one" },
        { title: "part 2", task: "two" },
        { title: "part 3", task: "three" },
      ],
      source: "plan",
    });
  });

  test("more parts than allowed: none is dropped, the extra ones join the last part kept", () => {
    const plan = parsePlan(JSON.stringify({ parts: ["a", "b", "c", "d", "e"].map((t) => ({ title: t.toUpperCase(), task: `do ${t}` })) }), REQUEST, 3);
    expect(plan.source).toBe("capped");
    expect(plan.parts).toEqual([
      { title: "A", task: "do a" },
      { title: "B", task: "do b" },
      { title: "C + D + E", task: "- do c\n- do d\n- do e" },
    ]);
  });

  test("no usable plan: one part, the whole request", () => {
    for (const reply of ["", "I would split this into three parts.", '{"parts": []}', '{"parts": "x"}', "{broken", "[]", "42"]) {
      expect(parsePlan(reply, REQUEST, 4)).toEqual({ parts: [{ title: "the whole request", task: REQUEST }], source: "fallback" });
    }
  });

  test("fuzz: whatever the planner writes, a plan of 1..max parts with non-empty tasks", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const value = r.next() < 0.5 ? { parts: randomJson(r) } : randomJson(r);
      const text = r.next() < 0.3 ? `words ${JSON.stringify(value)} more` : (JSON.stringify(value) ?? "");
      const max = r.int(1, 6);
      const plan = parsePlan(text, REQUEST, max);
      expect(plan.parts.length).toBeGreaterThanOrEqual(1);
      expect(plan.parts.length).toBeLessThanOrEqual(max);
      for (const part of plan.parts) {
        expect(typeof part.task).toBe("string");
        expect(part.task.trim()).not.toBe("");
        expect(typeof part.title).toBe("string");
      }
    }
  });
});

describe("mergeInput", () => {
  test("the request, then every part with its task and how it ended", () => {
    const text = mergeInput(
      REQUEST,
      [
        { title: 'Postgres "big"', task: "look at Postgres" },
        { title: "SQLite", task: "look at SQLite" },
        { title: "DuckDB", task: "look at DuckDB" },
        { title: "Mongo", task: "look at Mongo" },
      ],
      [
        { status: "done", text: "Postgres is solid.", stepLimit: false },
        { status: "failed", error: "the model request failed (server, HTTP 500)" },
        { status: "unfinished", text: "DuckDB is fast, and" },
        { status: "unfinished", text: "" },
      ],
    );
    expect(text).toStartWith(`<request>\n${REQUEST}\n</request>`);
    expect(text).toContain('<part number="1" title="Postgres &quot;big&quot;" status="done">\nTask: look at Postgres\n\nPostgres is solid.\n</part>');
    expect(text).toContain(
      '<part number="2" title="SQLite" status="failed">\nTask: look at SQLite\n\nThis part failed: the model request failed (server, HTTP 500). Its result is missing.',
    );
    expect(text).toContain("stopped when the token budget ran out; what it had so far:\n\nDuckDB is fast, and");
    expect(text).toContain("This part was not done: the token budget ran out first.");
  });
});

describe("ultraFooter", () => {
  test("parts, requests and tokens; failures and the budget when they happened", () => {
    expect(ultraFooter({ parts: 4, failed: 0, unfinished: 0, requests: 6, tokens: 12345 })).toBe("_Ultra: 4 parts · 6 requests · 12,345 tokens_");
    expect(ultraFooter({ parts: 1, failed: 1, unfinished: 0, requests: 3, tokens: 30 })).toBe("_Ultra: 1 part (1 failed) · 3 requests · 30 tokens_");
    expect(ultraFooter({ parts: 3, failed: 1, unfinished: 2, requests: 4, tokens: 1200, budget: 1000 })).toBe(
      "_Ultra: 3 parts (1 failed, 2 unfinished) · 4 requests · 1,200 tokens · token budget of 1,000 reached: merged what was done_",
    );
  });
});
