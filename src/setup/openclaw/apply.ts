/**
 * The import's edge: the Fermix home read as the plan needs it (without
 * creating or changing anything, so `--dry-run` writes nothing), and the
 * plan written through the same code as setup and the daemon — config.toml
 * and the secrets by setup's applySetup (validated, atomic, credentials to
 * the keychain or the 0600 secrets.toml), SOUL.md as a new revision
 * (Persona.adopt), skills by the skill library, memory facts and jobs by
 * their stores. Config is written first: a plan the loader refuses stops
 * before anything else is touched.
 */
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SkillLibrary } from "../../agent/skills/library.ts";
import { Persona } from "../../agent/soul/persona.ts";
import type { Env } from "../../config/load.ts";
import { systemTimeZone } from "../../config/timezone.ts";
import { writeFileAtomically } from "../../kernel/atomic-file.ts";
import { ConversationStore } from "../../store/conversations.ts";
import { openDatabase, openDatabaseReadOnly } from "../../store/db.ts";
import { JobStore } from "../../store/jobs.ts";
import { MemoryStore, OWNER_SCOPE } from "../../store/memory.ts";
import { SkillStore } from "../../store/skills.ts";
import { SoulStore } from "../../store/soul.ts";
import { type AppliedSetup, applySetup, type CurrentSetup, readCurrentSetup } from "../write.ts";
import { diskFiles, textOf } from "./files.ts";
import type { FermixState, ImportPlan } from "./plan.ts";

/** Who the skill history and the memory's conversation name as the import's actor (the owner, running it). */
const ACTOR = { channel: "import", senderId: "openclaw", conversation: "import:openclaw:" };
/** The most facts read back to tell the ones memory already has. */
const MAX_FACTS_READ = 100_000;

export interface FermixHome {
  current: CurrentSetup;
  state: FermixState;
}

/** The Fermix home as it is: nothing is created, migrated or written. */
export async function readFermixHome(env: Env, now: number): Promise<FermixHome> {
  const current = await readCurrentSetup(env);
  const { paths } = current;
  const skills: Record<string, string> = {};
  for (const name of diskFiles.list(join(paths.workspace, "skills")).dirs) {
    const text = textOf(diskFiles.read(join(paths.workspace, "skills", name, "SKILL.md")));
    if (text !== undefined) skills[name] = text;
  }
  const state: FermixState = {
    configPath: paths.config,
    configText: current.text,
    secrets: current.secrets,
    soul: existsSync(paths.soul) ? readFileSync(paths.soul, "utf8") : null,
    skills,
    memories: new Set(),
    file(path) {
      const read = diskFiles.read(join(paths.workspace, path));
      return read.kind === "ok" ? read.bytes : null;
    },
    jobs: [],
    timezone: systemTimeZone(),
    now,
  };
  if (existsSync(paths.database)) {
    let db: Database | undefined;
    try {
      db = openDatabaseReadOnly(paths.database);
      state.jobs = new JobStore(db).live();
      state.memories = new Set(new MemoryStore(db).recent(OWNER_SCOPE, MAX_FACTS_READ).map((m) => m.text));
    } catch {
      // A database from before jobs and memory existed holds none of either; `fermix run` migrates it.
    } finally {
      db?.close();
    }
  }
  return { current, state };
}

export interface AppliedImport {
  setup?: AppliedSetup;
  soulRevision?: number;
}

/** Write the plan. Throws ConfigError (nothing written) when the loader refuses the new config. */
export async function applyImport(home: FermixHome, plan: ImportPlan, parkAfterMs: number): Promise<AppliedImport> {
  const { paths } = home.current;
  const applied: AppliedImport = {};
  if (plan.changes.length > 0) applied.setup = await applySetup(home.current, plan.changes);
  const needsDatabase = plan.soul || plan.skills.length > 0 || plan.facts.length > 0 || plan.jobs.length > 0;
  for (const dir of [paths.home, paths.workspace]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of plan.files) writeFileAtomically(join(paths.workspace, file.path), file.bytes);
  if (!needsDatabase) return applied;
  const db = openDatabase(paths.database);
  try {
    if (plan.soul) {
      const persona = new Persona({ store: new SoulStore(db), path: paths.soul, conversations: new ConversationStore(db), model: () => null, ttlMs: 0 });
      applied.soulRevision = persona.adopt(plan.soul.text, plan.soul.note).id;
    }
    if (plan.skills.length > 0) {
      const library = new SkillLibrary({
        store: new SkillStore(db),
        dir: join(paths.workspace, "skills"),
        workspace: paths.workspace,
        parkAfterMs: () => parkAfterMs,
      });
      for (const skill of plan.skills) library.install(skill.name, skill.text, skill.files, ACTOR, "imported from OpenClaw");
    }
    const memory = new MemoryStore(db);
    for (const fact of plan.facts) memory.add(OWNER_SCOPE, fact, ACTOR.conversation);
    const jobs = new JobStore(db);
    for (const job of plan.jobs) jobs.create(job);
  } finally {
    db.close();
  }
  return applied;
}
