/**
 * An OpenClaw home and the Fermix home as they are now, into what the
 * import writes and the rows of its table: the config keys (through
 * setup's own plan, so the config loader validates the result before
 * anything is written), the persona, skills, memory facts, workspace files
 * and jobs. Nothing Fermix already holds is replaced without --force;
 * what it holds already, exactly, is "unchanged", so a second import
 * writes nothing. Pure: the I/O is in apply.ts.
 */
import { DEFAULT_SOUL } from "../../agent/prompt.ts";
import type { Env } from "../../config/load.ts";
import type { Job, NewJob } from "../../store/jobs.ts";
import { planSetup, type SetupChange, type SetupPlan } from "../plan.ts";
import { valueProblem } from "../validate.ts";
import { planChannels } from "./channels.ts";
import type { HomeFiles } from "./files.ts";
import type { OpenClawHome } from "./home.ts";
import { type ConfigItem, decideItems } from "./items.ts";
import { planJobs } from "./jobs.ts";
import { objectAt } from "./json5.ts";
import { planProvider } from "./provider.ts";
import { type ImportRow, row } from "./rows.ts";
import { openClawSource } from "./source.ts";
import { readWorkspace, type SkillImport, type WorkspaceFile } from "./workspace.ts";

/** The Fermix home as the import finds it. */
export interface FermixState {
  configPath: string;
  /** config.toml's text, "" when there is none. */
  configText: string;
  /** The secrets stored now, by dotted path. */
  secrets: Readonly<Record<string, string>>;
  /** SOUL.md now; null when there is none yet. */
  soul: string | null;
  /** SKILL.md of each skill folder now, by name. */
  skills: Readonly<Record<string, string>>;
  /** The owner's memory facts now. */
  memories: ReadonlySet<string>;
  /** A workspace file now (path relative to the workspace), or null. */
  file(path: string): Uint8Array | null;
  /** Jobs still to run. */
  jobs: readonly Job[];
  /** The system's time zone, for schedules when config.toml sets none. */
  timezone: string;
  now: number;
}

export interface ImportPlan {
  rows: ImportRow[];
  /** Config keys to write (credentials among them, which setup stores as secrets). */
  changes: SetupChange[];
  /** Setup's plan of config.toml: validated by the loader. */
  setup: SetupPlan;
  soul?: { text: string; note: string };
  skills: SkillImport[];
  facts: string[];
  files: WorkspaceFile[];
  jobs: NewJob[];
}

/** Whether the plan writes anything at all. */
export function writesNothing(plan: ImportPlan): boolean {
  return plan.changes.length === 0 && !plan.soul && plan.skills.length === 0 && plan.facts.length === 0 && plan.files.length === 0 && plan.jobs.length === 0;
}

export function planImport(home: OpenClawHome, files: HomeFiles, env: Env, state: FermixState, force: boolean): ImportPlan {
  const rows: ImportRow[] = [];
  if (!home.configFound) rows.push(row("skipped", "openclaw.json", `not found in ${home.dir}: channels, provider and jobs need it; the workspace is imported`));
  for (const problem of home.problems) rows.push(row("skipped", problem.what, problem.why));

  // Config: the provider and the channels, decided key by key against Fermix's.
  const source = openClawSource(home, files, env);
  const currentTable = state.configText.trim() === "" ? {} : (Bun.TOML.parse(state.configText) as Record<string, unknown>);
  const provider = planProvider(home, source, currentTable);
  const channels = planChannels(home, source);
  const zone = timezoneItem(home, rows);
  const decided = decideItems([...provider.items, ...zone, ...channels.items], { table: currentTable, secrets: state.secrets }, force);
  rows.push(...decided.rows, ...provider.rows, ...channels.rows);
  const setup = planSetup({ currentText: state.configText, currentSecrets: state.secrets, changes: decided.changes, filePath: state.configPath });
  const config = setup.resolved.config;

  // The workspace.
  const workspace = readWorkspace(home, files);
  rows.push(...workspace.rows);
  let soul: ImportPlan["soul"];
  if (workspace.soul) {
    const what = "persona (SOUL.md)";
    const from = workspace.soul.from.join(", ");
    const current = state.soul;
    if (current !== null && current.trim() === workspace.soul.text.trim()) rows.push(row("unchanged", what, `already Fermix's SOUL.md (from ${from})`));
    else if (current === null || current === DEFAULT_SOUL || force) {
      soul = { text: workspace.soul.text, note: `imported from OpenClaw (${from})` };
      const replaced = current !== null && current !== DEFAULT_SOUL ? "; the text it replaced stays in /soul history" : "";
      rows.push(row("imported", what, `a new revision of SOUL.md from ${from}${replaced}`));
    } else
      rows.push(
        row("skipped", what, "Fermix's SOUL.md has been changed from the default (--force makes the import a new revision; /soul history keeps the old)"),
      );
  }

  const skills: SkillImport[] = [];
  for (const skill of workspace.skills) {
    const what = `skill ${skill.name}`;
    const current = state.skills[skill.name];
    if (current === skill.text) rows.push(row("unchanged", what, "Fermix already has this skill"));
    else if (current !== undefined && !force) rows.push(row("skipped", what, "Fermix has a different skill of that name (--force replaces it)"));
    else {
      skills.push(skill);
      rows.push(
        row(
          "imported",
          what,
          `from OpenClaw's ${skill.from}${skill.files.length ? ` with ${skill.files.length} more file${skill.files.length === 1 ? "" : "s"}` : ""}`,
        ),
      );
    }
  }

  const facts = workspace.facts.filter((f) => !state.memories.has(f));
  if (facts.length > 0) rows.push(row("imported", "MEMORY.md", `${facts.length} fact${facts.length === 1 ? "" : "s"} into the owner's memory`));
  if (workspace.facts.length > facts.length) {
    const had = workspace.facts.length - facts.length;
    rows.push(row("unchanged", "MEMORY.md", `${had} fact${had === 1 ? " is" : "s are"} already in the owner's memory`));
  }

  const written: WorkspaceFile[] = [];
  let notes = 0;
  for (const file of workspace.files) {
    const current = state.file(file.path);
    if (current !== null && Bun.deepEquals(current, file.bytes)) {
      rows.push(row("unchanged", file.what, `already workspace/${file.path}`));
      continue;
    }
    if (current !== null && !force) {
      rows.push(row("skipped", file.what, `workspace/${file.path} exists with other content (--force replaces it)`));
      continue;
    }
    written.push(file);
    if (file.path.startsWith("memory/")) notes += 1;
    else rows.push(row("imported", file.what, `copied to workspace/${file.path}`));
  }
  if (notes > 0) rows.push(row("imported", "memory/ daily notes", `${notes} file${notes === 1 ? "" : "s"} copied to workspace/memory/`));

  // Jobs last: where they deliver depends on the channels as they will be.
  const jobs = planJobs({
    jobs: home.jobs ?? [],
    channels: channels.channels,
    config,
    timezone: config.fermix_core.timezone ?? state.timezone,
    now: state.now,
    live: state.jobs,
  });
  rows.push(...jobs.rows);

  return { rows, changes: decided.changes, setup, ...(soul ? { soul } : {}), skills, facts, files: written, jobs: jobs.jobs };
}

/** OpenClaw's `agents.defaults.userTimezone` as the owner's zone, which schedules and the prompt's clock read. */
function timezoneItem(home: OpenClawHome, rows: ImportRow[]): ConfigItem[] {
  const zone = objectAt(home.config, "agents.defaults")?.userTimezone;
  if (typeof zone !== "string" || zone.trim() === "") return [];
  const problem = valueProblem("fermix_core.timezone", zone.trim());
  if (problem) {
    rows.push(row("skipped", "time zone", problem));
    return [];
  }
  return [{ what: "time zone", detail: zone.trim(), changes: [{ path: "fermix_core.timezone", value: zone.trim() }] }];
}
