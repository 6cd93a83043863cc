/**
 * The skills service: the folders in `<workspace>/skills/` squared with their
 * state in SQLite. Each call that reads skills first looks at the folder, so
 * a skill dropped in, edited or removed by hand is noticed at the next turn
 * without a restart (recorded with origin "disk"), and a skill idle for
 * `park_after_days` is parked (origin "automatic"). The agent proposes new
 * skills and changes (`propose_skill`); only the owner's approval writes a
 * SKILL.md. Every change is recorded with where it came from.
 */
import { type Dirent, existsSync, readdirSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { writeFileAtomically } from "../../kernel/atomic-file.ts";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { SkillChange, SkillChangeKind, SkillChangeOrigin, SkillProposal, SkillRow, SkillState, SkillStore } from "../../store/skills.ts";
import { SoulFile } from "../soul/file.ts";
import { nameProblem, type ParsedSkill, parseSkill, SkillFormatError, skillHash } from "./file.ts";

export const DAY_MS = 24 * 60 * 60_000;
/** The most files of a skill's folder use_skill lists. */
const MAX_LISTED_FILES = 50;
/** The longest reason a proposal keeps. */
const MAX_REASON_CHARS = 1000;

/** A skill as the folder and the database know it. */
export interface Skill extends SkillRow {
  description: string;
  /** SKILL.md, whole. */
  text: string;
}

/** A folder in skills/ that is not a usable skill, and why. */
export interface SkillProblem {
  folder: string;
  problem: string;
}

export interface SkillsView {
  skills: Skill[];
  problems: SkillProblem[];
}

/** Who asked for a change: the owner's command (channel:sender) or the agent's turn. */
export interface SkillActor {
  channel: string;
  senderId: string;
  conversation: string;
}

/** What use_skill hands the model: the whole SKILL.md and the other files of its folder (paths relative to the workspace). */
export interface LoadedSkill {
  name: string;
  text: string;
  files: string[];
  /** More files than listed. */
  moreFiles: boolean;
}

/** A request the service will not carry out, with words for whoever asked. */
export class SkillRefused extends Error {
  override name = "SkillRefused";
}

export interface SkillLibraryDeps {
  store: SkillStore;
  /** `<workspace>/skills`. */
  dir: string;
  /** The workspace, for the paths use_skill lists. */
  workspace: string;
  /** How long a skill may go unused before it is parked (ms), read at every look (config reloads). */
  parkAfterMs: () => number;
  now?: () => number;
  log?: Logger;
}

export class SkillLibrary {
  private readonly files = new Map<string, SoulFile>();
  private readonly now: () => number;

  constructor(private readonly deps: SkillLibraryDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Square the database with the folder and park idle skills: every skill with
   * its state and usage (by name), and the folders that are not usable skills.
   */
  view(): SkillsView {
    const { store } = this.deps;
    const now = this.now();
    const found = new Map<string, { parsed: ParsedSkill; text: string }>();
    const problems: SkillProblem[] = [];
    const unreadable = new Set<string>();
    for (const folder of this.folders()) {
      const problem = nameProblem(folder);
      if (problem) {
        problems.push({ folder, problem });
        continue;
      }
      try {
        const text = this.file(folder).read().text;
        const parsed = parseSkill(text);
        if (parsed.name !== folder) throw new SkillFormatError(`its front matter names it "${parsed.name}", but the folder is "${folder}"`);
        found.set(folder, { parsed, text });
      } catch (error) {
        unreadable.add(folder);
        const code = (error as NodeJS.ErrnoException).code;
        problems.push({ folder, problem: code === "ENOENT" ? "it has no SKILL.md" : describeError(error) });
      }
    }

    const skills: Skill[] = [];
    store.transaction(() => {
      for (const row of store.all()) {
        // A folder removed by hand: forget the skill (its history stays). One that is there but broken is kept, not offered.
        if (!found.has(row.name) && !unreadable.has(row.name)) {
          store.delete(row.name);
          this.record(row.name, "removed", "disk", null, null, "its folder or SKILL.md is gone", now);
        }
      }
      for (const [name, { parsed, text }] of found) {
        const hash = skillHash(text);
        if (store.insert(name, hash, now)) {
          this.record(name, "found", "disk", null, null, null, now);
          this.deps.log?.info("skill found in the folder", { skill: name });
        }
        let row = store.get(name)!;
        if (row.textHash !== hash) {
          store.setHash(name, hash, now);
          this.record(name, "edited", "disk", null, null, "SKILL.md changed on disk", now);
          row = store.get(name)!;
        }
        const idleSince = Math.max(row.activeSince, row.lastUsedAt ?? 0);
        const parkAfter = this.deps.parkAfterMs();
        if (row.state === "active" && now - idleSince >= parkAfter) {
          store.setState(name, "parked", now);
          this.record(name, "parked", "automatic", null, null, `unused for ${days(parkAfter)}`, now);
          this.deps.log?.info("skill parked: unused too long", { skill: name });
          row = store.get(name)!;
        }
        skills.push({ ...row, description: parsed.description, text });
      }
    });
    skills.sort((a, b) => a.name.localeCompare(b.name));
    return { skills, problems };
  }

  /** The skills offered to the model now. */
  active(): Skill[] {
    return this.view().skills.filter((s) => s.state === "active");
  }

  /** Load an active skill for the model, and count the use. */
  use(name: string): LoadedSkill {
    const skill = this.view().skills.find((s) => s.name === name);
    if (!skill) throw new SkillRefused(`there is no skill named "${name}"`);
    if (skill.state !== "active") throw new SkillRefused(`the skill "${name}" is ${skill.state}: it is not offered now`);
    this.deps.store.use(name, this.now());
    const { files, more } = this.listFiles(name);
    return { name, text: skill.text, files, moreFiles: more };
  }

  /** A proposal from the agent: checked, kept as pending; nothing changes until the owner approves it. */
  propose(who: SkillActor, name: string, content: string, reason: string): SkillProposal {
    const problem = nameProblem(name);
    if (problem) throw new SkillRefused(problem);
    let parsed: ParsedSkill;
    try {
      parsed = parseSkill(content);
    } catch (error) {
      throw new SkillRefused(`content is not a usable SKILL.md: ${(error as Error).message}`);
    }
    if (parsed.name !== name) throw new SkillRefused(`content's front matter names the skill "${parsed.name}", but name is "${name}"`);
    const why = reason.replace(/\s+/g, " ").trim();
    if (why === "") throw new SkillRefused("say in reason why the skill is worth keeping");
    const base = this.currentText(name);
    if (base === content) throw new SkillRefused(`the skill "${name}" already has exactly this content`);
    const now = this.now();
    const { store } = this.deps;
    return store.transaction(() => {
      const proposal = store.addProposal({
        name,
        content,
        reason: why.slice(0, MAX_REASON_CHARS),
        baseText: base,
        channel: who.channel,
        senderId: who.senderId,
        conversation: who.conversation,
        createdAt: now,
      });
      this.record(name, "proposed", "agent", `${who.channel}:${who.senderId}`, proposal.id, proposal.reason, now);
      this.deps.log?.info("skill proposed", { skill: name, proposal: proposal.id, change: base === null ? "new" : "change" });
      return proposal;
    });
  }

  /**
   * Install a skill the owner brings (`fermix import openclaw`): its SKILL.md
   * checked as a proposal's is, written with the other files of its folder
   * (paths relative to it, never outside), active from now, and recorded
   * with `note` as the owner's change.
   */
  install(
    name: string,
    content: string,
    files: ReadonlyArray<{ path: string; bytes: Uint8Array; executable?: boolean }>,
    by: SkillActor,
    note: string,
  ): { created: boolean } {
    const problem = nameProblem(name);
    if (problem) throw new SkillRefused(problem);
    const parsed = parseSkill(content);
    if (parsed.name !== name) throw new SkillRefused(`its front matter names the skill "${parsed.name}", but name is "${name}"`);
    const folder = join(this.deps.dir, name);
    for (const file of files) {
      const target = join(folder, file.path);
      if (file.path === "SKILL.md" || relative(folder, target).startsWith("..") || isAbsolute(file.path)) {
        throw new SkillRefused(`"${file.path}" is not a file inside the skill's folder`);
      }
    }
    const existed = this.currentText(name) !== null;
    const { store } = this.deps;
    const now = this.now();
    store.transaction(() => {
      const hash = skillHash(content);
      if (!store.insert(name, hash, now)) {
        store.setHash(name, hash, now);
        store.setState(name, "active", now);
      }
      this.record(name, existed ? "edited" : "found", "owner", `${by.channel}:${by.senderId}`, null, note, now);
      for (const file of files) writeFileAtomically(join(folder, file.path), file.bytes, file.executable ? 0o700 : 0o600);
      this.file(name).write(content);
    });
    this.deps.log?.info("skill installed", { skill: name });
    return { created: !existed };
  }

  /** Proposals waiting for the owner, oldest first. */
  pending(): SkillProposal[] {
    return this.deps.store.pending();
  }

  /** A proposal with the skill's current text (null when there is no such skill now). */
  proposal(id: number): { proposal: SkillProposal; current: string | null } {
    const proposal = this.deps.store.proposal(id);
    if (!proposal) throw new SkillRefused(`There is no skill proposal #${id}. \`/skills\` lists the pending ones.`);
    return { proposal, current: this.currentText(proposal.name) };
  }

  /** Approve a pending proposal: SKILL.md is written and the skill is active from now. */
  approve(id: number, by: SkillActor): { proposal: SkillProposal; created: boolean } {
    const proposal = this.pendingProposal(id);
    const { store } = this.deps;
    const now = this.now();
    const existed = this.currentText(proposal.name) !== null;
    const actor = `${by.channel}:${by.senderId}`;
    store.transaction(() => {
      if (!store.decide(id, "approved", now, actor)) throw new SkillRefused(`Skill proposal #${id} has already been decided.`);
      const hash = skillHash(proposal.content);
      if (!store.insert(proposal.name, hash, now)) {
        store.setHash(proposal.name, hash, now);
        store.setState(proposal.name, "active", now);
      }
      this.record(proposal.name, "approved", "owner", actor, id, proposal.reason, now);
      this.file(proposal.name).write(proposal.content);
    });
    this.deps.log?.info("skill proposal approved", { skill: proposal.name, proposal: id });
    return { proposal, created: !existed };
  }

  /** Deny a pending proposal: nothing is written. */
  deny(id: number, by: SkillActor): SkillProposal {
    const proposal = this.pendingProposal(id);
    const { store } = this.deps;
    const now = this.now();
    const actor = `${by.channel}:${by.senderId}`;
    store.transaction(() => {
      if (!store.decide(id, "denied", now, actor)) throw new SkillRefused(`Skill proposal #${id} has already been decided.`);
      this.record(proposal.name, "denied", "owner", actor, id, null, now);
    });
    this.deps.log?.info("skill proposal denied", { skill: proposal.name, proposal: id });
    return proposal;
  }

  /** Archive a skill: kept on disk, no longer offered. */
  archive(name: string, by: SkillActor): void {
    this.move(name, by, { from: ["active", "parked"], to: "archived", change: "archived" });
  }

  /** Bring an archived skill back. */
  restore(name: string, by: SkillActor): void {
    this.move(name, by, { from: ["archived"], to: "active", change: "restored" });
  }

  /** Bring a parked skill back. */
  unpark(name: string, by: SkillActor): void {
    this.move(name, by, { from: ["parked"], to: "active", change: "unparked" });
  }

  /** The latest changes, newest first (of one skill, or of all). */
  history(limit: number, name?: string): SkillChange[] {
    this.view();
    return this.deps.store.history(limit, name);
  }

  private move(name: string, by: SkillActor, step: { from: SkillState[]; to: SkillState; change: SkillChangeKind }): void {
    const skill = this.view().skills.find((s) => s.name === name);
    if (!skill) throw new SkillRefused(`There is no skill named "${name}". \`/skills\` lists them.`);
    if (!step.from.includes(skill.state)) throw new SkillRefused(wrongState(name, skill.state, step.change));
    const now = this.now();
    const { store } = this.deps;
    store.transaction(() => {
      store.setState(name, step.to, now);
      this.record(name, step.change, "owner", `${by.channel}:${by.senderId}`, null, null, now);
    });
    this.deps.log?.info(`skill ${step.change}`, { skill: name });
  }

  private pendingProposal(id: number): SkillProposal {
    const { proposal } = this.proposal(id);
    if (proposal.state !== "pending") throw new SkillRefused(`Skill proposal #${id} has already been ${proposal.state}.`);
    return proposal;
  }

  private record(
    name: string,
    change: SkillChangeKind,
    origin: SkillChangeOrigin,
    actor: string | null,
    proposalId: number | null,
    note: string | null,
    at: number,
  ) {
    this.deps.store.record({ name, change, origin, actor, proposalId, note, at });
  }

  /** SKILL.md of `name` as it is on disk now, or null when there is none. */
  private currentText(name: string): string | null {
    try {
      return this.file(name).read().text;
    } catch {
      return null;
    }
  }

  private file(name: string): SoulFile {
    return this.files.getOrInsertComputed(name, () => new SoulFile(join(this.deps.dir, name, "SKILL.md")));
  }

  /** The skill folders (hidden entries and plain files are not skills). */
  private folders(): string[] {
    if (!existsSync(this.deps.dir)) return [];
    let entries: Dirent[];
    try {
      entries = readdirSync(this.deps.dir, { withFileTypes: true });
    } catch (error) {
      this.deps.log?.warn("the skills folder cannot be read", { error: describeError(error) });
      return [];
    }
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();
  }

  /** The files of a skill's folder besides SKILL.md, relative to the workspace, breadth first. */
  private listFiles(name: string): { files: string[]; more: boolean } {
    const files: string[] = [];
    const queue = [join(this.deps.dir, name)];
    while (queue.length > 0) {
      const dir = queue.shift()!;
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.name.startsWith(".")) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) queue.push(path);
        else if (entry.isFile() && !(dir === join(this.deps.dir, name) && entry.name === "SKILL.md")) {
          if (files.length === MAX_LISTED_FILES) return { files, more: true };
          files.push(relative(this.deps.workspace, path));
        }
      }
    }
    return { files, more: false };
  }
}

function days(ms: number): string {
  const n = ms / DAY_MS;
  if (n >= 1) return `${Math.round(n * 10) / 10} day${n === 1 ? "" : "s"}`;
  const seconds = Math.round(ms / 1000);
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

function wrongState(name: string, state: SkillState, change: SkillChangeKind): string {
  switch (change) {
    case "archived":
      return `The skill "${name}" is already archived.`;
    case "restored":
      return state === "parked"
        ? `The skill "${name}" is parked, not archived: \`/skills unpark ${name}\` brings it back.`
        : `The skill "${name}" is not archived.`;
    default:
      return state === "archived"
        ? `The skill "${name}" is archived, not parked: \`/skills restore ${name}\` brings it back.`
        : `The skill "${name}" is not parked.`;
  }
}
