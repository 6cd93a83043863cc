/** The one SQLite database (`<home>/fermix.db`, WAL), opened once by the core. */
import { Database } from "bun:sqlite";
import { chmodSync, existsSync } from "node:fs";
import { describeError } from "../kernel/errors.ts";
import { MIGRATIONS, type Migration } from "./migrations.ts";

export class MigrationError extends Error {
  override name = "MigrationError";
}

/** The database cannot be used: the message names the file and what to do about it. */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
}

/** Open (creating if needed) the database, owner-only, in WAL mode, migrated to the latest version. */
export function openDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): Database {
  let db: Database | undefined;
  try {
    db = new Database(path, { create: true, strict: true });
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA foreign_keys = ON");
    restrictFiles(path);
    migrate(db, migrations);
  } catch (error) {
    db?.close();
    throw explain(path, error);
  }
  return db;
}

/**
 * The database at `path` for looking only (`fermix doctor`, beside a running
 * daemon): never created, never migrated, never written. Throws when the
 * file does not open.
 */
export function openDatabaseReadOnly(path: string): Database {
  return new Database(path, { readonly: true, strict: true });
}

/** The version of the last migration applied to the database (SQLite's `user_version`). */
export function schemaVersion(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/**
 * Checkpoint the WAL on a timer instead of inside whichever commit crosses
 * SQLite's 1000-page mark. A checkpoint copies pages into the database and
 * fsyncs it: done inside a commit it stalls that webhook's answer (and every
 * request behind it on the event loop) for milliseconds, and under load it
 * ran every few hundred messages. From a timer it runs at most once per
 * `everyMs`, for everything written meanwhile. Durability is the WAL's, as
 * before: a commit is in the WAL file before the platform hears "ok", which
 * a SIGKILL cannot undo; when pages reach the main file does not change that.
 * Returns the function that stops the timer (the connection's close then
 * checkpoints the rest, as SQLite always does).
 */
export function checkpointEvery(db: Database, everyMs: number): () => void {
  db.exec("PRAGMA wal_autocheckpoint = 0");
  const timer = setInterval(() => {
    try {
      db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // Busy or closing: the next tick (or the close) does it.
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** SQLite's terse errors, as a sentence an operator can act on. */
function explain(path: string, error: unknown): unknown {
  if (error instanceof MigrationError) return error;
  const message = describeError(error);
  if (/not a database|malformed|corrupt/i.test(message)) {
    return new DatabaseUnavailable(
      `the database ${path} is damaged (${message}): stop fermix, move the file aside and restore the latest backup of it (see docs/operations.md), or start without it to begin afresh`,
    );
  }
  if (/locked|busy/i.test(message)) {
    return new DatabaseUnavailable(
      `the database ${path} is locked by another process (${message}): stop the other fermix (or whatever holds the file) and start again`,
    );
  }
  if (/readonly|permission|unable to open|cannot open/i.test(message)) {
    return new DatabaseUnavailable(`cannot open the database ${path} (${message}): check that the file and its folder belong to you and are writable`);
  }
  return error;
}

/** Apply every migration newer than the database's `user_version`. */
export function migrate(db: Database, migrations: readonly Migration[]): number {
  const current = schemaVersion(db);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new MigrationError(`database schema version ${current} is newer than this fermix understands (${latest}); upgrade fermix`);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.exec(`PRAGMA user_version = ${migration.version}`);
    })();
  }
  return latest;
}

/** The database and its WAL/SHM companions hold conversations: readable by the owner only. */
function restrictFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}
