/** The persona's revision history and pending proposals, on a real SQLite file reopened as a restart would. */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { SoulStore, type StoredProposal } from "../../src/store/soul.ts";

let root: string;
let db: Database;
let store: SoulStore;

function reopen() {
  db?.close();
  db = openDatabase(join(root, "fermix.db"));
  store = new SoulStore(db);
}
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-soul-"));
  reopen();
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

const proposal = (overrides: Partial<StoredProposal> = {}): Omit<StoredProposal, "usedAt"> => ({
  kind: "review",
  note: null,
  baseRevision: 1,
  text: "# Soul\n\nBe brief.\n",
  channel: "telegram",
  senderId: "111",
  conversation: "telegram:111:",
  createdAt: 1_000,
  expiresAt: 301_000,
  ...overrides,
});

describe("revisions", () => {
  test("are numbered from 1 in order, keep their full text, and survive a restart", () => {
    expect(store.latest()).toBeNull();
    const first = store.addRevision("initial", null, "# Soul\n\nHello.\n", 10);
    const second = store.addRevision("review", "be warmer", "# Soul\n\nHello, friend.\n", 20);
    expect([first.id, second.id]).toEqual([1, 2]);
    reopen();
    expect(store.latest()).toEqual({ id: 2, origin: "review", note: "be warmer", createdAt: 20, bytes: 23, text: "# Soul\n\nHello, friend.\n" });
    expect(store.revision(1)?.text).toBe("# Soul\n\nHello.\n");
    expect(store.revision(3)).toBeNull();
  });

  test("history lists every revision oldest first, with sizes in UTF-8 bytes and without the texts", () => {
    store.addRevision("initial", null, "abc", 1);
    store.addRevision("manual", "edited on disk", "é✓", 2);
    store.addRevision("revert", "revision 1", "abc", 3);
    store.addRevision("reset", null, "default", 4);
    const history = store.history();
    expect(history.map((r) => [r.id, r.origin, r.bytes])).toEqual([
      [1, "initial", 3],
      [2, "manual", 5],
      [3, "revert", 3],
      [4, "reset", 7],
    ]);
    expect(history.every((r) => !("text" in r))).toBe(true);
  });

  test("an unknown origin is rejected by the table itself", () => {
    expect(() => store.addRevision("sideways" as never, null, "x", 1)).toThrow();
  });
});

describe("proposals", () => {
  test("are found by their token's hash, with who made them and where", () => {
    store.addProposal("h1", proposal());
    expect(store.proposal("h1")).toEqual({ ...proposal(), usedAt: null });
    expect(store.proposal("h2")).toBeNull();
  });

  test("are used once: the second markUsed reports it was already used", () => {
    store.addProposal("h1", proposal());
    expect(store.markUsed("h1", 5_000)).toBe(true);
    expect(store.markUsed("h1", 6_000)).toBe(false);
    expect(store.proposal("h1")?.usedAt).toBe(5_000);
  });

  test("a transaction that throws leaves neither the revision nor the used mark", () => {
    store.addRevision("initial", null, "a", 1);
    store.addProposal("h1", proposal());
    expect(() =>
      store.transaction(() => {
        store.markUsed("h1", 2);
        store.addRevision("review", null, "b", 2);
        throw new Error("disk full");
      }),
    ).toThrow("disk full");
    expect(store.latest()?.id).toBe(1);
    expect(store.proposal("h1")?.usedAt).toBeNull();
  });

  test("an expired proposal is kept for a day (to be told 'expired'), then swept when another is made", () => {
    const day = 24 * 60 * 60_000;
    store.addProposal("old", proposal({ createdAt: 0, expiresAt: 300_000 }));
    store.addProposal("recent", proposal({ createdAt: day, expiresAt: day + 300_000 }));
    expect(store.proposal("old")).not.toBeNull();
    store.addProposal("later", proposal({ createdAt: day + 400_000, expiresAt: day + 700_000 }));
    expect(store.proposal("old")).toBeNull();
    expect(store.proposal("recent")).not.toBeNull();
  });
});
