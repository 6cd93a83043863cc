/**
 * SQL lives in src/store/ only: the rest of src/ asks a store module for
 * what it needs by a method that says what it is. A failure names the file,
 * the line and what was found there.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sqlFindings, sqlOutsideStore } from "./sql.ts";

const SRC = join(import.meta.dir, "../../src");

test("no file outside src/store/ opens a database, runs a statement or holds SQL", () => {
  expect(sqlOutsideStore(SRC)).toEqual([]);
});

describe("the check itself", () => {
  test("finds each way SQL reached a caller before it moved into store/", () => {
    const sample = [
      'import { Database } from "bun:sqlite";',
      'const row = this.db.query("SELECT value FROM settings WHERE key = ?1").get(key);',
      "this.db",
      "  .query(",
      '    "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET value = excluded.value",',
      "  )",
      "const counts = db.prepare(`",
      "  SELECT COUNT(*) AS live FROM jobs`);",
      "const { user_version } = ro.query('PRAGMA user_version').get();",
      'statement("DELETE FROM settings WHERE key = ?1");',
      "const sql = `UPDATE jobs SET state = 'cancelled'`;",
    ].join("\n");
    expect(sqlFindings(sample)).toEqual([
      { line: 1, what: "opens a database (imports bun:sqlite for its values, not only its types)" },
      { line: 2, what: "SQL in a string (SELECT …)" },
      { line: 2, what: "a statement run on a database (.query())" },
      { line: 4, what: "a statement run on a database (.query())" },
      { line: 5, what: "SQL in a string (INSERT INTO …)" },
      { line: 7, what: "a statement run on a database (.prepare())" },
      { line: 9, what: "SQL in a string (PRAGMA …)" },
      { line: 9, what: "a statement run on a database (.query())" },
      { line: 10, what: "SQL in a string (DELETE FROM …)" },
      { line: 11, what: "SQL in a string (UPDATE jobs SET …)" },
    ]);
  });

  test("leaves alone what only looks like it: the Database type, regular expressions, runners, comments and words in prose", () => {
    const sample = [
      'import type { Database } from "bun:sqlite";',
      'import { type Database } from "./db.ts";',
      "const match = /^fx:(ok|no)$/.exec(data);",
      "await runner.run({ argv });",
      "// SELECT value FROM settings: the store does it",
      "/* INSERT INTO settings … */",
      'say("Select a channel, then update the settings");',
      'const label = "Delete from the list";',
      "const selected = options.selected;",
    ].join("\n");
    expect(sqlFindings(sample)).toEqual([]);
  });
});
