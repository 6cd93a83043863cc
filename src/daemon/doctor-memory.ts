/**
 * Doctor's rows for long-term memory and scheduled jobs: the time zone the
 * scheduler reads times in, the jobs still to run (and any overdue, which a
 * running daemon would have run), and the memory store. Read-only: the
 * database is opened for reading and never migrated from here.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { formatLocal } from "../agent/jobs/when.ts";
import type { Config } from "../config/schema.ts";
import { ownerTimeZone } from "../config/timezone.ts";

export interface MemoryDoctorRow {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

/** The migrations that made the memory and jobs tables. */
const MEMORY_SCHEMA = 6;
const JOBS_SCHEMA = 7;
/** A pending job this far past its due time has been missed by the scheduler (ms). */
const OVERDUE_MS = 60_000;

export function memoryAndJobRows(config: Config, databasePath: string, now = Date.now()): MemoryDoctorRow[] {
  const zone = ownerTimeZone(config);
  const rows: MemoryDoctorRow[] = [
    {
      check: "scheduler",
      status: "ok",
      detail: `runs inside \`fermix run\`; times in ${zone}${config.fermix_core.timezone ? "" : " (the system's zone; set [fermix_core] timezone to choose)"}`,
    },
  ];
  if (!existsSync(databasePath)) {
    rows.push({ check: "jobs", status: "ok", detail: "none scheduled yet" });
    rows.push({ check: "memory", status: "ok", detail: `${config.fermix_core.memory.enabled ? "on" : "off"}; nothing remembered yet` });
    return rows;
  }
  let db: Database | undefined;
  try {
    db = new Database(databasePath, { readonly: true });
    const { user_version } = db.query("PRAGMA user_version").get() as { user_version: number };
    rows.push(user_version >= JOBS_SCHEMA ? jobsRow(db, zone, now) : { check: "jobs", status: "ok", detail: "none scheduled yet (the database migrates at next start)" });
    rows.push(user_version >= MEMORY_SCHEMA ? memoryRow(db, config) : { check: "memory", status: "ok", detail: "nothing remembered yet (the database migrates at next start)" });
  } catch (error) {
    rows.push({ check: "jobs", status: "fail", detail: `cannot read the jobs: ${error instanceof Error ? error.message : String(error)}` });
  } finally {
    db?.close();
  }
  return rows;
}

function jobsRow(db: Database, zone: string, now: number): MemoryDoctorRow {
  const counts = db
    .query(
      `SELECT COUNT(*) AS live, COALESCE(SUM(schedule IS NOT NULL), 0) AS repeating,
              COALESCE(SUM(state = 'pending' AND due_at < ?1), 0) AS overdue, MIN(CASE WHEN state = 'pending' THEN due_at END) AS next
       FROM jobs WHERE state IN ('pending', 'running')`,
    )
    .get(now - OVERDUE_MS) as { live: number; repeating: number; overdue: number; next: number | null };
  if (counts.live === 0) return { check: "jobs", status: "ok", detail: "no scheduled jobs pending" };
  const next = counts.next !== null ? `; next due ${formatLocal(counts.next, zone)}` : "";
  const detail = `${counts.live} pending (${counts.repeating} repeating)${next}`;
  if (counts.overdue > 0) {
    return { check: "jobs", status: "warn", detail: `${detail}; ${counts.overdue} overdue: they run (once, marked late) when \`fermix run\` is running` };
  }
  return { check: "jobs", status: "ok", detail };
}

function memoryRow(db: Database, config: Config): MemoryDoctorRow {
  const { enabled, prompt_items, prompt_chars } = config.fermix_core.memory;
  try {
    const { n } = db.query("SELECT COUNT(*) AS n FROM memories").get() as { n: number };
    db.query("SELECT COUNT(*) AS n FROM memories_fts WHERE memories_fts MATCH '\"fermix\"'").get();
    const facts = `${n} fact${n === 1 ? "" : "s"} remembered`;
    return {
      check: "memory",
      status: "ok",
      detail: enabled ? `on; ${facts}; up to ${prompt_items} relevant facts (${prompt_chars} characters) in each turn` : `off ([fermix_core.memory] enabled = false); ${facts}`,
    };
  } catch (error) {
    return { check: "memory", status: "fail", detail: `the memory store does not answer: ${error instanceof Error ? error.message : String(error)}` };
  }
}
