/**
 * OpenClaw's workspace (https://docs.openclaw.ai/concepts/agent-workspace)
 * as Fermix's, by these choices:
 * - SOUL.md becomes the persona, with IDENTITY.md (the assistant's name and
 *   manner; else the config's `identity`) and USER.md (who the owner is)
 *   appended under headings of their own: both are persona.
 * - AGENTS.md, TOOLS.md and HEARTBEAT.md describe OpenClaw's own tools and
 *   routines: they are copied to `workspace/openclaw/` and listed for the
 *   owner to merge what still applies (`/soul review`).
 * - MEMORY.md, the curated long-term memory, becomes memory facts: one per
 *   list item or paragraph, under its heading, in the owner's memory.
 * - memory/*.md, the daily logs, are copied to `workspace/memory/` for the
 *   assistant to read with its file tools; the persona says where they are.
 * - skills/<name>/ (the workspace's, then the home's managed skills) become
 *   skills, their other files with them.
 * Pure, given the files.
 */
import { join } from "node:path";
import { nameProblem, parseSkill } from "../../agent/skills/file.ts";
import { MAX_MEMORY_CHARS } from "../../store/memory.ts";
import { type HomeFiles, textOf } from "./files.ts";
import { defaultAgent, type OpenClawHome } from "./home.ts";
import { objectAt, objectOf } from "./json5.ts";
import { type ImportRow, row } from "./rows.ts";

/** The most files copied with one skill, and the deepest folder followed. */
const MAX_SKILL_FILES = 50;
const MAX_SKILL_DEPTH = 4;

export interface WorkspaceFile {
  /** Relative to Fermix's workspace. */
  path: string;
  bytes: Uint8Array;
  /** A script its owner could run (kept executable, for the owner only). */
  executable?: boolean;
}

export interface SkillImport {
  name: string;
  text: string;
  /** The folder's other files, relative to the skill's folder. */
  files: WorkspaceFile[];
  /** Where it came from, for the row. */
  from: string;
}

export interface WorkspaceImport {
  /** The persona, when the home has one. */
  soul?: { text: string; from: string[] };
  facts: string[];
  files: Array<WorkspaceFile & { what: string }>;
  skills: SkillImport[];
  rows: ImportRow[];
}

const encoder = new TextEncoder();

export function readWorkspace(home: OpenClawHome, files: HomeFiles): WorkspaceImport {
  const out: WorkspaceImport = { facts: [], files: [], skills: [], rows: [] };
  const text = (name: string) => {
    const read = files.read(join(home.workspace, name));
    if (read.kind === "unreadable") out.rows.push(row("skipped", name, `cannot be read: ${read.reason}`));
    const value = textOf(read)?.trim();
    return value === "" ? undefined : value;
  };
  if (!files.list(home.workspace).files.length && !files.list(home.workspace).dirs.length) {
    out.rows.push(row("skipped", "workspace", `no OpenClaw workspace at ${home.workspace}`));
  }

  // The persona.
  const soul = text("SOUL.md");
  const identity = text("IDENTITY.md") ?? identityFromConfig(home.config);
  const user = text("USER.md");
  const dailyNotes = files.list(join(home.workspace, "memory")).files.filter((f) => f.endsWith(".md"));
  const parts: string[] = [];
  const from: string[] = [];
  if (soul) {
    parts.push(soul);
    from.push("SOUL.md");
  }
  if (identity) {
    parts.push(`## Identity\n\n${withoutTitle(identity)}`);
    from.push(text("IDENTITY.md") ? "IDENTITY.md" : "the config's identity");
  }
  if (user) {
    parts.push(`## About your owner\n\n${withoutTitle(user)}`);
    from.push("USER.md");
  }
  if (parts.length > 0) {
    if (dailyNotes.length > 0) {
      parts.push(
        "## Earlier notes\n\nYour daily notes from before are in the workspace under memory/ (one file per day, memory/YYYY-MM-DD.md): read them when the past matters.",
      );
    }
    out.soul = { text: `${parts.join("\n\n")}\n`, from };
  } else out.rows.push(row("skipped", "SOUL.md", "the workspace has no SOUL.md, IDENTITY.md or USER.md"));

  // Instructions about OpenClaw's own tools: copied aside for the owner to merge.
  for (const name of ["AGENTS.md", "TOOLS.md", "HEARTBEAT.md"]) {
    const content = text(name);
    if (!content) continue;
    out.files.push({ what: name, path: join("openclaw", name), bytes: encoder.encode(`${content}\n`) });
    out.rows.push(
      row(
        "manual",
        name,
        `Copied to workspace/openclaw/${name}: it describes OpenClaw's tools and routines; merge what still applies into SOUL.md (/soul review "…")`,
      ),
    );
  }

  // Long-term memory as facts; daily logs as files.
  const memory = text("MEMORY.md");
  if (memory) out.facts.push(...memoryFacts(memory));
  for (const name of dailyNotes) {
    const read = files.read(join(home.workspace, "memory", name));
    if (read.kind !== "ok") {
      out.rows.push(row("skipped", `memory/${name}`, read.kind === "missing" ? "missing" : `cannot be read: ${read.reason}`));
      continue;
    }
    out.files.push({ what: `memory/${name}`, path: join("memory", name), bytes: read.bytes });
  }

  // Skills: the workspace's win over the home's managed ones of the same name.
  const entries = objectAt(home.config, "skills.entries") ?? {};
  const seen = new Set<string>();
  for (const root of [join(home.workspace, "skills"), join(home.dir, "skills")]) {
    for (const folder of files.list(root).dirs) {
      if (seen.has(folder) || folder.startsWith(".")) continue;
      seen.add(folder);
      const what = `skill ${folder}`;
      if (objectOf(entries[folder])?.enabled === false) {
        out.rows.push(row("skipped", what, "turned off in OpenClaw (skills.entries)"));
        continue;
      }
      const problem = nameProblem(folder);
      if (problem) {
        out.rows.push(row("skipped", what, problem));
        continue;
      }
      const read = files.read(join(root, folder, "SKILL.md"));
      const skillText = textOf(read);
      if (skillText === undefined) {
        out.rows.push(row("skipped", what, read.kind === "unreadable" ? `SKILL.md cannot be read: ${read.reason}` : "it has no SKILL.md"));
        continue;
      }
      try {
        const parsed = parseSkill(skillText);
        if (parsed.name !== folder) throw new Error(`its front matter names it "${parsed.name}", but the folder is "${folder}"`);
      } catch (error) {
        out.rows.push(row("skipped", what, `not a usable SKILL.md: ${(error as Error).message}`));
        continue;
      }
      const extra = skillFiles(files, join(root, folder), "", 0);
      if (extra.length > MAX_SKILL_FILES) out.rows.push(row("skipped", `${what} files`, `only its first ${MAX_SKILL_FILES} files are copied`));
      const skillEntry = objectOf(entries[folder]);
      if (skillEntry?.apiKey !== undefined || skillEntry?.env !== undefined) {
        out.rows.push(
          row("manual", what, `It had an API key or variables in OpenClaw (skills.entries.${folder}); give them to the commands it runs (/sandbox env)`),
        );
      }
      out.skills.push({
        name: folder,
        text: skillText,
        files: extra.slice(0, MAX_SKILL_FILES),
        from: root === join(home.dir, "skills") ? "managed skills" : "workspace",
      });
    }
  }
  return out;
}

/** The config's `identity` (name, theme, emoji) in words, when IDENTITY.md is not there. */
function identityFromConfig(config: Record<string, unknown>): string | undefined {
  const identity = objectOf(defaultAgent(config)?.identity);
  if (!identity) return undefined;
  const lines = [
    typeof identity.name === "string" ? `- Name: ${identity.name}` : undefined,
    typeof identity.theme === "string" ? `- Manner: ${identity.theme}` : undefined,
    typeof identity.emoji === "string" ? `- Emoji: ${identity.emoji}` : undefined,
  ].filter(Boolean);
  return lines.length > 0 ? lines.join("\n") : undefined;
}

/** A file's text without its first-line `# Title` (the heading it goes under replaces it). */
function withoutTitle(text: string): string {
  return text.replace(/^#\s+[^\n]*\n+/, "").trim();
}

/** The files of a skill's folder besides SKILL.md, relative to it; hidden entries and links are left out. */
function skillFiles(files: HomeFiles, dir: string, prefix: string, depth: number): WorkspaceFile[] {
  const found: WorkspaceFile[] = [];
  const { files: names, dirs } = files.list(dir);
  for (const name of names) {
    if (name.startsWith(".") || (prefix === "" && name === "SKILL.md")) continue;
    const read = files.read(join(dir, name));
    if (read.kind === "ok") found.push({ path: join(prefix, name), bytes: read.bytes, ...(read.executable ? { executable: true } : {}) });
  }
  if (depth < MAX_SKILL_DEPTH) {
    for (const sub of dirs) {
      if (sub.startsWith(".") || sub === "node_modules") continue;
      found.push(...skillFiles(files, join(dir, sub), join(prefix, sub), depth + 1));
    }
  }
  return found;
}

/**
 * MEMORY.md as facts: each list item and each paragraph one fact, prefixed
 * with the heading it sits under ("Preferences: likes tea"); headings alone
 * are not facts. A fact longer than memory takes is cut at sentence ends.
 */
export function memoryFacts(markdown: string): string[] {
  const facts: string[] = [];
  let heading = "";
  let block: string[] = [];
  const flush = () => {
    const text = block.join(" ").replace(/\s+/g, " ").trim();
    block = [];
    if (text === "") return;
    facts.push(...fit(heading ? `${heading}: ${text}` : text));
  };
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trimEnd();
    const title = /^#{1,6}\s+(.*)$/.exec(line.trim());
    if (title) {
      flush();
      const name = title[1]!.replace(/#+\s*$/, "").trim();
      heading = /^memory(\.md)?$/i.test(name) || /^MEMORY\.md\b/.test(name) ? "" : name;
      continue;
    }
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      block.push(item[1]!.replace(/^\[[ xX]\]\s+/, ""));
      continue;
    }
    if (line.trim() === "" || /^(?:-{3,}|\*{3,}|_{3,})$/.test(line.trim())) {
      flush();
      continue;
    }
    block.push(line.trim());
  }
  flush();
  return [...new Set(facts)];
}

/** A fact as pieces memory takes, cut at sentence ends (or hard, for one endless sentence). */
function fit(text: string): string[] {
  if (text.length <= MAX_MEMORY_CHARS) return [text];
  const pieces: string[] = [];
  let current = "";
  for (const sentence of text.match(/[^.!?]+[.!?]*\s*/g) ?? [text]) {
    if ((current + sentence).length > MAX_MEMORY_CHARS && current !== "") {
      pieces.push(current.trim());
      current = "";
    }
    current += sentence;
    while (current.length > MAX_MEMORY_CHARS) {
      pieces.push(current.slice(0, MAX_MEMORY_CHARS).trim());
      current = current.slice(MAX_MEMORY_CHARS);
    }
  }
  if (current.trim() !== "") pieces.push(current.trim());
  return pieces;
}
