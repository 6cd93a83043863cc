/** The settings table through its store: a value per key, replaced by a write, gone after a delete, and part of the caller's transaction. */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, openDatabaseReadOnly, schemaVersion } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { SettingsStore } from "../../src/store/settings.ts";

let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-settings-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

test("a value is kept, replaced and forgotten by key; other keys are left alone", () => {
  const settings = new SettingsStore(db);
  expect(settings.get("telegram.offset.1")).toBeUndefined();
  settings.set("telegram.offset.1", "41");
  settings.set("telegram.offset.2", "7");
  settings.set("telegram.offset.1", "42");
  expect(settings.get("telegram.offset.1")).toBe("42");
  settings.delete("telegram.offset.1");
  expect(settings.get("telegram.offset.1")).toBeUndefined();
  expect(settings.get("telegram.offset.2")).toBe("7");
});

test("a write inside the caller's transaction is undone with it", () => {
  const settings = new SettingsStore(db);
  settings.set("discord.session.1", "old");
  expect(() =>
    db.transaction(() => {
      settings.set("discord.session.1", "new");
      throw new Error("the inbox write failed");
    })(),
  ).toThrow("the inbox write failed");
  expect(settings.get("discord.session.1")).toBe("old");
});

test("a read-only look sees what was written and the schema version, and cannot write", () => {
  new SettingsStore(db).set("discord.bot_user_id.1", "123");
  const look = openDatabaseReadOnly(join(root, "fermix.db"));
  try {
    expect(schemaVersion(look)).toBe(MIGRATIONS.at(-1)!.version);
    expect(new SettingsStore(look).get("discord.bot_user_id.1")).toBe("123");
    expect(() => new SettingsStore(look).set("discord.bot_user_id.1", "456")).toThrow(/readonly/i);
  } finally {
    look.close();
  }
});
