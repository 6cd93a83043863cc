/** The conversation store's tail read (src/store/conversations.ts `latest`): what realtime voice reads instead of a whole history. */
import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConversationStore } from "../../src/store/conversations.ts";
import { openDatabase } from "../../src/store/db.ts";

let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-conversations-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

test("latest(n) is the window's last n messages, oldest first, as history() ends — without the summary and what it replaced", () => {
  const store = new ConversationStore(db);
  const key = "realtime:alice:";
  const ids = Array.from({ length: 6 }, (_, i) => store.append(key, i % 2 === 0 ? "user" : "assistant", `line ${i}`));
  store.compact(key, ids.slice(0, 2), "they spoke of ferries");
  for (let i = 6; i < 9; i++) store.append(key, i % 2 === 0 ? "user" : "assistant", `line ${i}`);
  const withoutSummary = store.history(key).filter((m) => m.role !== "summary");
  expect(store.latest(key, 4)).toEqual(withoutSummary.slice(-4));
  expect(store.latest(key, 100)).toEqual(withoutSummary);
  expect(store.latest(key, 100).map((m) => m.text)).toEqual(["line 2", "line 3", "line 4", "line 5", "line 6", "line 7", "line 8"]);
  // A new window starts the tail afresh.
  store.newWindow(key);
  expect(store.latest(key, 4)).toEqual([]);
  expect(store.latest("other::", 4)).toEqual([]);
});
