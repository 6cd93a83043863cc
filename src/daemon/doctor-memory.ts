/**
 * Doctor's rows for long-term memory and scheduled jobs: the time zone the
 * scheduler reads times in, the jobs still to run (and any overdue, which a
 * running daemon would have run), and the memory store. Read-only: the
 * database is opened for reading and never migrated from here.
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { formatLocal } from "../agent/jobs/when.ts";
import type { Config } from "../config/schema.ts";
import { ownerTimeZone } from "../config/timezone.ts";
import { describeError } from "../kernel/errors.ts";
import { openDatabaseReadOnly, schemaVersion } from "../store/db.ts";
import { JobStore } from "../store/jobs.ts";
import { MemoryStore } from "../store/memory.ts";

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
    db = openDatabaseReadOnly(databasePath);
    const user_version = schemaVersion(db);
    rows.push(
      user_version >= JOBS_SCHEMA
        ? jobsRow(db, zone, now)
        : { check: "jobs", status: "ok", detail: "none scheduled yet (the database migrates at next start)" },
    );
    rows.push(
      user_version >= MEMORY_SCHEMA
        ? memoryRow(db, config)
        : { check: "memory", status: "ok", detail: "nothing remembered yet (the database migrates at next start)" },
    );
  } catch (error) {
    rows.push({ check: "jobs", status: "fail", detail: `cannot read the jobs: ${describeError(error)}` });
  } finally {
    db?.close();
  }
  return rows;
}

function jobsRow(db: Database, zone: string, now: number): MemoryDoctorRow {
  const live = new JobStore(db).live();
  if (live.length === 0) return { check: "jobs", status: "ok", detail: "no scheduled jobs pending" };
  const pending = live.filter((job) => job.state === "pending");
  const repeating = live.filter((job) => job.schedule !== null).length;
  const overdue = pending.filter((job) => job.dueAt < now - OVERDUE_MS).length;
  const next = pending.length > 0 ? `; next due ${formatLocal(Math.min(...pending.map((job) => job.dueAt)), zone)}` : "";
  const detail = `${live.length} pending (${repeating} repeating)${next}`;
  if (overdue > 0) {
    return { check: "jobs", status: "warn", detail: `${detail}; ${overdue} overdue: they run (once, marked late) when \`fermix run\` is running` };
  }
  return { check: "jobs", status: "ok", detail };
}

function memoryRow(db: Database, config: Config): MemoryDoctorRow {
  const { enabled, prompt_items, prompt_chars } = config.fermix_core.memory;
  try {
    const store = new MemoryStore(db);
    const n = store.count();
    const probe = store.check();
    if (!probe.ok) throw new Error(probe.error);
    const facts = `${n} fact${n === 1 ? "" : "s"} remembered`;
    return {
      check: "memory",
      status: "ok",
      detail: enabled
        ? `on; ${facts}; up to ${prompt_items} relevant facts (${prompt_chars} characters) in each turn`
        : `off ([fermix_core.memory] enabled = false); ${facts}`,
    };
  } catch (error) {
    return { check: "memory", status: "fail", detail: `the memory store does not answer: ${describeError(error)}` };
  }
}
