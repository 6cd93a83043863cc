import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkpointEvery, MigrationError, openDatabase } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { until } from "../helpers/wait.ts";

const dirs: string[] = [];
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), "fermix-db-"));
  dirs.push(dir);
  return join(dir, "fermix.db");
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("opens in WAL mode, owner-only, migrated to the latest version", () => {
  const path = tempDb();
  const db = openDatabase(path);
  expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
  expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(MIGRATIONS.at(-1)!.version);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  db.close();
});

test("reopening applies nothing twice and keeps data", () => {
  const path = tempDb();
  const first = openDatabase(path);
  first.run("INSERT INTO settings (key, value, updated_at) VALUES ('k', 'v', 1)");
  first.close();
  const second = openDatabase(path);
  expect(second.query("SELECT value FROM settings WHERE key = 'k'").get()).toEqual({ value: "v" });
  second.close();
});

test("a later migration is applied to an older database, in order", () => {
  const path = tempDb();
  openDatabase(path, MIGRATIONS).close();
  const next = [...MIGRATIONS, { version: 999, name: "extra", sql: "CREATE TABLE extra (id INTEGER PRIMARY KEY) STRICT;" }];
  const db = openDatabase(path, next);
  expect(db.query("SELECT name FROM sqlite_master WHERE name = 'extra'").get()).toEqual({ name: "extra" });
  db.close();
});

test("a failing migration leaves the version untouched", () => {
  const path = tempDb();
  openDatabase(path).close();
  const broken = [...MIGRATIONS, { version: 999, name: "broken", sql: "CREATE TABLE x (;" }];
  expect(() => openDatabase(path, broken)).toThrow();
  const db = openDatabase(path);
  expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(MIGRATIONS.at(-1)!.version);
  db.close();
});

test("a database from a newer fermix is refused with a clear error", () => {
  const path = tempDb();
  const db = openDatabase(path);
  db.exec("PRAGMA user_version = 9999");
  db.close();
  expect(() => openDatabase(path)).toThrow(MigrationError);
  expect(() => openDatabase(path)).toThrow("newer than this fermix understands");
});

test("checkpoints run from the timer, not inside a commit: a commit leaves the main file alone, the next tick moves it in", async () => {
  const path = tempDb();
  const db = openDatabase(path);
  const stop = checkpointEvery(db, 50);
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const before = statSync(path).size;
    // Well past SQLite's own 1000-page mark, in one commit: with auto-checkpoint it would copy into the file now.
    const insert = db.query("INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, 1)");
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) insert.run(`key-${i}`, "x".repeat(2000));
    })();
    expect(statSync(path).size).toBe(before);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(1000 * 4096);
    await until("the timer's checkpoint", () => statSync(path).size !== before, 5000);
    expect(statSync(path).size).toBeGreaterThan(before + 3000 * 2000);
  } finally {
    stop();
    db.close();
  }
  // Everything is there after a reopen.
  const again = openDatabase(path);
  expect((again.query("SELECT COUNT(*) AS n FROM settings WHERE key LIKE 'key-%'").get() as { n: number }).n).toBe(3000);
  again.close();
});
