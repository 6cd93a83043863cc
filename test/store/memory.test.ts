/**
 * The memory store on a real SQLite file: facts kept per scope and found by
 * full-text search (bm25, then recency), never across scopes; forgetting by
 * id or by every word of a query; any text a user or model sends is a safe
 * query. Plus the memory tools and the prompt section over the same store.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TurnRequest } from "../../src/agent/agent.ts";
import { MEMORY_HEADING, memorySection } from "../../src/agent/memory/section.ts";
import { memoryTools } from "../../src/agent/memory/tools.ts";
import type { ToolContext } from "../../src/agent/tools/types.ts";
import { resultText } from "../../src/agent/tools/types.ts";
import { openDatabase } from "../../src/store/db.ts";
import { ftsQuery, searchTerms } from "../../src/store/fts.ts";
import { MemoryStore, memoryScope, OWNER_SCOPE } from "../../src/store/memory.ts";
import { rng } from "../helpers/rng.ts";

const DAY = 86_400_000;
let root: string;
let db: Database;
let clock: number;
let store: MemoryStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-memory-"));
  db = openDatabase(join(root, "fermix.db"));
  clock = Date.UTC(2026, 11, 1, 12);
  store = new MemoryStore(db, () => clock);
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

describe("scopes", () => {
  test("the operator is one scope on every channel; anyone else is their own per channel", () => {
    expect(memoryScope({ channel: "telegram", senderId: "1", role: "operator" })).toBe(OWNER_SCOPE);
    expect(memoryScope({ channel: "cli", senderId: "me", role: "operator" })).toBe(OWNER_SCOPE);
    expect(memoryScope({ channel: "telegram", senderId: "2", role: "user" })).toBe("telegram:2");
    expect(memoryScope({ channel: "slack", senderId: "2", role: "user" })).toBe("slack:2");
  });

  test("a fact is found in its own scope and in no other", () => {
    store.add(OWNER_SCOPE, "The owner's sister is called Anna", "telegram:1:");
    store.add("telegram:2", "Bob's sister is called Clara", "telegram:2:");
    expect(store.search(OWNER_SCOPE, "sister", 5).map((m) => m.text)).toEqual(["The owner's sister is called Anna"]);
    expect(store.search("telegram:2", "sister", 5).map((m) => m.text)).toEqual(["Bob's sister is called Clara"]);
    expect(store.search("slack:2", "sister", 5)).toEqual([]);
    expect(store.recent("telegram:2", 5).map((m) => m.text)).toEqual(["Bob's sister is called Clara"]);
  });

  test("forgetting by id leaves another scope's fact with that id alone", () => {
    const bob = store.add("telegram:2", "Bob likes tea", "telegram:2:").memory;
    expect(store.delete(OWNER_SCOPE, [bob.id])).toBe(0);
    expect(store.get("telegram:2", bob.id)?.text).toBe("Bob likes tea");
    expect(store.get(OWNER_SCOPE, bob.id)).toBeUndefined();
  });
});

describe("keeping and finding", () => {
  test("a fact is kept with where and when it was learnt; the same text twice is kept once", () => {
    const first = store.add(OWNER_SCOPE, "  Likes green tea  ", "telegram:1:");
    expect(first).toEqual({
      existed: false,
      memory: { id: first.memory.id, text: "Likes green tea", conversation: "telegram:1:", createdAt: clock, lastUsedAt: null },
    });
    expect(store.add(OWNER_SCOPE, "Likes green tea", "slack:D1:").existed).toBe(true);
    expect(store.count()).toBe(1);
  });

  test("words of a message find the facts that share them; stemming matches word forms; stopwords match nothing", () => {
    store.add(OWNER_SCOPE, "The owner's favourite colour is teal", "c");
    store.add(OWNER_SCOPE, "The owner is allergic to peanuts", "c");
    expect(store.search(OWNER_SCOPE, "What is my favourite colour?", 5).map((m) => m.text)).toEqual(["The owner's favourite colour is teal"]);
    expect(store.search(OWNER_SCOPE, "any peanut allergy?", 5).map((m) => m.text)).toEqual(["The owner is allergic to peanuts"]);
    expect(store.search(OWNER_SCOPE, "what is the", 5)).toEqual([]);
  });

  test("ranked by bm25 first: the fact sharing more of the message's words comes first", () => {
    store.add(OWNER_SCOPE, "Dinner with Anna on Friday", "c");
    store.add(OWNER_SCOPE, "Anna prefers Italian restaurants for dinner on Fridays", "c");
    store.add(OWNER_SCOPE, "Anna lives in Lyon", "c");
    const found = store.search(OWNER_SCOPE, "italian restaurant for anna", 5).map((m) => m.text);
    expect(found[0]).toBe("Anna prefers Italian restaurants for dinner on Fridays");
    expect(found).toHaveLength(3);
  });

  test("between equally good matches, the more recently learnt or used comes first", () => {
    const old = store.add(OWNER_SCOPE, "Parking spot is level 2", "c").memory;
    clock += 200 * DAY;
    const fresh = store.add(OWNER_SCOPE, "Parking spot is level 5", "c").memory;
    expect(store.search(OWNER_SCOPE, "parking spot", 2).map((m) => m.id)).toEqual([fresh.id, old.id]);
    clock += DAY;
    store.touch([old.id]);
    expect(store.search(OWNER_SCOPE, "parking spot", 2).map((m) => m.id)).toEqual([old.id, fresh.id]);
  });

  test("forgetting by query takes the facts containing every word, not those sharing one", () => {
    store.add(OWNER_SCOPE, "Favourite colour is teal", "c");
    store.add(OWNER_SCOPE, "Favourite food is ramen", "c");
    const doomed = store.matchingAll(OWNER_SCOPE, "favourite colour");
    expect(doomed.map((m) => m.text)).toEqual(["Favourite colour is teal"]);
  });

  test("any text is a safe query: FTS5 syntax in a message never reaches the engine", () => {
    store.add(OWNER_SCOPE, 'He said "NEAR" and OR AND NOT * ^ col:umn', "c");
    const r = rng(20);
    const nasty = ['"', "NEAR(a b)", "a OR", "AND", "text:foo", "^x", "*", "(", ")", "'", "-x", "+y", "\u0000", "🙂 ünïcödé", 'a"b"c'];
    for (let i = 0; i < 500; i++) {
      const query = Array.from({ length: r.int(1, 6) }, () => (r.next() < 0.5 ? r.pick(nasty) : r.string(r.int(0, 8)))).join(r.pick([" ", "", "\n", ":"]));
      expect(() => store.search(OWNER_SCOPE, query, 5)).not.toThrow();
      expect(() => store.matchingAll(OWNER_SCOPE, query)).not.toThrow();
    }
    expect(store.search(OWNER_SCOPE, "near column", 5)).toHaveLength(1);
  });

  test("the query builder keeps words only, quoted, at most 24 of them", () => {
    expect(searchTerms("What's my FAVOURITE colour, again? colour!")).toEqual(["favourite", "colour"]);
    expect(ftsQuery("teal or green", "any")).toBe('"teal" OR "green"');
    expect(ftsQuery("teal green", "all")).toBe('"teal" AND "green"');
    expect(ftsQuery("is it the?")).toBeNull();
    expect(searchTerms(Array.from({ length: 40 }, (_, i) => `word${i}`).join(" "))).toHaveLength(24);
  });

  test("the health probe says the store answers, and says why when it does not", () => {
    expect(store.check()).toEqual({ ok: true });
    db.exec("DROP TABLE memories_fts");
    const probe = store.check();
    expect(probe.ok).toBe(false);
    expect(!probe.ok && probe.error).toContain("memories_fts");
  });
});

function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    channel: "telegram",
    conversation: "telegram:1:",
    senderId: "1",
    role: "operator",
    target: { chatId: "1" },
    workspace: root,
    signal: new AbortController().signal,
    effects: { reacted: false, attachments: 0 },
    say: async () => {},
    ...overrides,
  } as ToolContext;
}

describe("the memory tools", () => {
  const tool = (name: string) => memoryTools(store).find((t) => t.spec.name === name)!;

  test("remember, recall with ids and dates, forget by id: in the sender's own scope", async () => {
    const alice = toolContext();
    const bob = toolContext({ senderId: "2", role: "user", conversation: "telegram:2:", target: { chatId: "2" } });
    expect(await tool("remember").run({ text: "Alice's sister is Anna" }, alice)).toMatch(/^remembered as #\d+$/);
    expect(await tool("remember").run({ text: "Bob's sister is Clara" }, bob)).toMatch(/^remembered as #\d+$/);
    expect(await tool("remember").run({ text: "Alice's sister is Anna" }, alice)).toMatch(/^already remembered as #\d+$/);

    expect(await tool("recall").run({ query: "sister" }, alice)).toMatch(/^#\d+ \(learnt 2026-12-01 on telegram\): Alice's sister is Anna$/);
    expect(await tool("recall").run({ query: "sister" }, bob)).toMatch(/Bob's sister is Clara$/);
    expect(await tool("recall").run({ query: "" }, bob)).not.toContain("Alice");
    expect(await tool("recall").run({ query: "nothing like it" }, alice)).toBe('nothing remembered matches "nothing like it"');

    const bobsId = Number(resultText(await tool("recall").run({ query: "Clara" }, bob)).match(/#(\d+)/)![1]);
    expect(tool("forget").run({ id: bobsId }, alice)).rejects.toThrow(`no remembered fact #${bobsId}`);
    expect(await tool("forget").run({ id: bobsId }, bob)).toContain("forgot 1 fact");
    expect(await tool("recall").run({ query: "sister" }, bob)).toBe('nothing remembered matches "sister"');
    expect(await tool("recall").run({ query: "sister" }, alice)).toContain("Anna");
  });

  test("forget by query says what went; bad arguments are refused with a reason the model can act on", async () => {
    const ctx = toolContext();
    await tool("remember").run({ text: "Favourite colour is teal" }, ctx);
    expect(tool("remember").run({ text: "   " }, ctx)).rejects.toThrow("text is empty");
    expect(tool("remember").run({ text: "x".repeat(1001) }, ctx)).rejects.toThrow("keep a fact under 1000");
    expect(tool("forget").run({}, ctx)).rejects.toThrow("give the id");
    expect(tool("forget").run({ id: 1.5 }, ctx)).rejects.toThrow("whole number");
    expect(await tool("forget").run({ query: "colour purple" }, ctx)).toContain("nothing remembered contains all of");
    expect(await tool("forget").run({ query: "favourite colour" }, ctx)).toMatch(/^forgot 1 fact:\n#\d+ .*Favourite colour is teal$/);
    expect(store.count()).toBe(0);
  });
});

describe("the prompt section", () => {
  const request = (text: string, who: Partial<ToolContext> = {}) => ({ text, channel: "telegram", toolContext: toolContext(who) }) as unknown as TurnRequest;

  test("the most relevant facts of the sender's scope, under their own heading; nothing when nothing is relevant", () => {
    store.add(OWNER_SCOPE, "The owner's favourite colour is teal", "c");
    store.add("telegram:2", "Bob's favourite colour is red", "c");
    const section = memorySection(store, { items: 5, chars: 2000 });
    const [owner] = section(request("what colour should the walls be?"));
    expect(owner!.title).toBe(MEMORY_HEADING);
    expect(owner!.body).toMatch(/^- The owner's favourite colour is teal \(#\d+, learnt 2026-12-01\)$/);
    const [bob] = section(request("my favourite colour?", { senderId: "2", role: "user" }));
    expect(bob!.body).toContain("red");
    expect(bob!.body).not.toContain("teal");
    expect(section(request("hello there"))).toEqual([]);
  });

  test("at most prompt_items facts and prompt_chars characters; a fact too long for what is left makes room for a shorter one", () => {
    store.add(OWNER_SCOPE, `Project notes: ${"long detail ".repeat(20)}`, "c");
    for (let i = 0; i < 6; i++) store.add(OWNER_SCOPE, `Project fact number ${i}`, "c");
    const items = memorySection(store, { items: 3, chars: 2000 })(request("project"))[0]!;
    expect(items.body.split("\n")).toHaveLength(3);
    const budget = memorySection(store, { items: 10, chars: 120 })(request("project"))[0]!;
    expect(budget.body.length).toBeLessThanOrEqual(120);
    expect(budget.body).not.toContain("long detail");
    expect(budget.body.split("\n").length).toBeGreaterThanOrEqual(2);
    expect(memorySection(store, { items: 0, chars: 2000 })(request("project"))).toEqual([]);
  });

  test("facts put into a prompt count as used", () => {
    const fact = store.add(OWNER_SCOPE, "Gym on Tuesdays", "c").memory;
    clock += DAY;
    memorySection(store, { items: 5, chars: 2000 })(request("gym today?"));
    expect(store.get(OWNER_SCOPE, fact.id)!.lastUsedAt).toBe(clock);
  });
});
