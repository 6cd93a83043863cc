/**
 * An OpenClaw home read into one value: openclaw.json (JSON5, with its
 * `$include`s), the variables it can draw on (its `env` block and `.env`),
 * the default agent's auth profiles, the senders approved by pairing, the
 * cron jobs, and where the workspace is. The layout is OpenClaw's own
 * (https://docs.openclaw.ai/gateway/configuration-reference,
 * https://docs.openclaw.ai/channels/pairing,
 * https://docs.openclaw.ai/automation/cron-jobs). A broken openclaw.json
 * stops the import (OpenClawFileError: file, line, reason); any other file
 * that cannot be read is a note, and the rest is imported.
 *
 * Pure, given the files (HomeFiles) and the environment.
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import { parseEnv } from "node:util";
import type { OpenClawNote } from "../../channels/openclaw.ts";
import type { Env } from "../../config/load.ts";
import { CHANNEL_NAMES } from "../../config/schema.ts";
import { type HomeFiles, textOf } from "./files.ts";
import { OpenClawFileError, objectAt, objectOf, parseJson5 } from "./json5.ts";

/** An API key or token in the default agent's auth-profiles.json. */
export interface AuthProfile {
  id: string;
  provider: string;
  type: string;
  /** The key (api_key) or token (token), when stored in the file; refs are resolved later. */
  secret?: unknown;
}

export interface OpenClawHome {
  /** The home (OpenClaw's state directory). */
  dir: string;
  configFile: string;
  /** openclaw.json with its includes; {} when there is none. */
  config: Record<string, unknown>;
  configFound: boolean;
  /** The `env` block and `.env`, the block winning. */
  vars: Record<string, string>;
  authProfiles: AuthProfile[];
  /** Preferred profile ids per provider. */
  authOrder: Record<string, string[]>;
  /** Senders approved by pairing, per channel name. */
  paired: Record<string, string[]>;
  /** cron/jobs.json's jobs, undefined when there is no such file. */
  jobs?: unknown[];
  cronFile: string;
  workspace: string;
  /** Files that exist but cannot be used, and why. */
  problems: OpenClawNote[];
}

/** The longest chain of `$include`s followed, as OpenClaw allows. */
const MAX_INCLUDE_DEPTH = 10;

/** Where the OpenClaw home is: `--from`, else OPENCLAW_STATE_DIR, else $OPENCLAW_HOME/.openclaw, else ~/.openclaw. */
export function openClawDir(env: Env, from?: string, cwd: string = process.cwd()): string {
  if (from !== undefined && from.trim() !== "") return resolve(cwd, expandHome(from.trim(), env));
  const state = env.OPENCLAW_STATE_DIR?.trim();
  if (state) return resolve(cwd, expandHome(state, env));
  return join(userHome(env), ".openclaw");
}

/** The home directory `~` means to OpenClaw: OPENCLAW_HOME, else HOME. */
function userHome(env: Env): string {
  const explicit = env.OPENCLAW_HOME?.trim();
  if (explicit) return explicit.replace(/^~(?=$|\/)/, env.HOME ?? "");
  return env.HOME ?? "/";
}

function expandHome(path: string, env: Env): string {
  return path.replace(/^~(?=$|\/)/, userHome(env));
}

/**
 * A path openclaw.json names, on this machine: `~` expanded, relative paths
 * against the home; and a path under the usual home (`~/.openclaw/…`) read
 * from the home being imported when that is elsewhere (a copy brought over
 * with --from).
 */
export function homePath(path: string, dir: string, env: Env): string {
  const absolute = resolve(dir, expandHome(path.trim(), env));
  const usual = join(userHome(env), ".openclaw");
  const inside = relative(usual, absolute);
  if (usual !== dir && !inside.startsWith("..") && !isAbsolute(inside)) return join(dir, inside);
  return absolute;
}

/** Whether `path` is `dir` or inside it. */
export function insideDir(dir: string, path: string): boolean {
  const inside = relative(dir, path);
  return !inside.startsWith("..") && !isAbsolute(inside);
}

/** Read the home at `dir`; throws OpenClawFileError when openclaw.json does not parse. */
export function readOpenClawHome(files: HomeFiles, dir: string, env: Env): OpenClawHome {
  const problems: OpenClawNote[] = [];
  const configFile = join(dir, "openclaw.json");
  const read = files.read(configFile);
  if (read.kind === "unreadable") throw new OpenClawFileError(configFile, read.reason);
  const configFound = read.kind === "ok";
  const config = configFound ? withIncludes(files, configFile, dir, objectOrFail(parseJson5(textOf(read)!, configFile), configFile), 0) : {};

  const vars: Record<string, string> = {};
  const dotenv = textOf(files.read(join(dir, ".env")));
  if (dotenv !== undefined) Object.assign(vars, parseEnv(dotenv));
  const block = objectOf(config.env) ?? {};
  for (const [key, value] of Object.entries({ ...block, ...(objectOf(block.vars) ?? {}) })) {
    if (typeof value === "string") vars[key] = value;
  }

  const agent = defaultAgent(config);
  // The auth profiles hold keys: read only from inside the home, as every file the config names that holds a credential.
  const namedAgentDir = typeof agent?.agentDir === "string" ? homePath(agent.agentDir, dir, env) : undefined;
  if (namedAgentDir && !insideDir(dir, namedAgentDir))
    problems.push({ what: "agents.list[].agentDir", why: `${namedAgentDir} is outside ${dir}: its auth profiles are not read` });
  const agentDir = namedAgentDir && insideDir(dir, namedAgentDir) ? namedAgentDir : join(dir, "agents", agentId(agent), "agent");
  const auth = jsonFile(files, dir, join(agentDir, "auth-profiles.json"), problems);
  const authProfiles: AuthProfile[] = Object.entries(objectOf(objectOf(auth)?.profiles) ?? {}).flatMap(([id, raw]) => {
    const p = objectOf(raw);
    if (!p || typeof p.provider !== "string") return [];
    const type = typeof p.type === "string" ? p.type : typeof p.mode === "string" ? p.mode : "unknown";
    return [{ id, provider: p.provider, type, secret: p.key ?? p.keyRef ?? p.token ?? p.tokenRef }];
  });
  const authOrder: Record<string, string[]> = {};
  for (const source of [objectAt(config, "auth.order"), objectOf(objectOf(auth)?.order)]) {
    for (const [provider, ids] of Object.entries(source ?? {})) {
      if (Array.isArray(ids)) authOrder[provider] = ids.filter((id): id is string => typeof id === "string");
    }
  }

  const paired: Record<string, string[]> = {};
  for (const name of CHANNEL_NAMES) {
    const entries = [`${name}-allowFrom.json`, `${name}-default-allowFrom.json`].flatMap((file) => {
      const list = objectOf(jsonFile(files, dir, join(dir, "credentials", file), problems))?.allowFrom;
      return Array.isArray(list) ? list.map(String) : [];
    });
    if (entries.length > 0) paired[name] = [...new Set(entries)];
  }

  const cronStore = objectAt(config, "cron")?.store;
  const cronFile = typeof cronStore === "string" ? homePath(cronStore, dir, env) : join(dir, "cron", "jobs.json");
  const cron = jsonFile(files, dir, cronFile, problems);
  const jobs = Array.isArray(cron) ? cron : Array.isArray(objectOf(cron)?.jobs) ? (objectOf(cron)!.jobs as unknown[]) : undefined;
  if (cron !== undefined && jobs === undefined) problems.push({ what: relative(dir, cronFile), why: "it has no jobs list" });

  const workspaceSetting = agent?.workspace ?? objectAt(config, "agents.defaults")?.workspace;
  const workspace = typeof workspaceSetting === "string" && workspaceSetting.trim() !== "" ? homePath(workspaceSetting, dir, env) : join(dir, "workspace");

  return {
    dir,
    configFile,
    config,
    configFound,
    vars,
    authProfiles,
    authOrder,
    paired,
    ...(jobs ? { jobs } : {}),
    cronFile,
    workspace,
    problems,
  };
}

/** The agent OpenClaw answers with by default: the one marked default, else the first listed. */
export function defaultAgent(config: Record<string, unknown>): Record<string, unknown> | undefined {
  const list = objectAt(config, "agents")?.list;
  if (!Array.isArray(list)) return undefined;
  const agents = list.map(objectOf).filter((a): a is Record<string, unknown> => a !== undefined);
  return agents.find((a) => a.default === true) ?? agents[0];
}

function agentId(agent: Record<string, unknown> | undefined): string {
  return typeof agent?.id === "string" && /^[A-Za-z0-9_-]+$/.test(agent.id) ? agent.id : "main";
}

function objectOrFail(value: unknown, file: string): Record<string, unknown> {
  const object = objectOf(value);
  if (!object) throw new OpenClawFileError(file, "it is not a JSON5 object ({ … })", 1);
  return object;
}

/** A JSON(5) file other than openclaw.json: undefined when missing; a note (and undefined) when it cannot be used. */
function jsonFile(files: HomeFiles, dir: string, path: string, problems: OpenClawNote[]): unknown {
  const read = files.read(path);
  if (read.kind === "missing") return undefined;
  const what = relative(dir, path).startsWith("..") ? path : relative(dir, path);
  if (read.kind === "unreadable") {
    problems.push({ what, why: read.reason });
    return undefined;
  }
  try {
    return parseJson5(textOf(read)!, path);
  } catch (error) {
    if (!(error instanceof OpenClawFileError)) throw error;
    problems.push({ what, why: `does not parse${error.line === undefined ? "" : ` (line ${error.line})`}: ${error.reason}` });
    return undefined;
  }
}

/**
 * `$include` as OpenClaw reads it: a file (or a list, merged in order)
 * replacing the object that names it, its sibling keys merged over it;
 * paths relative to the including file and inside the home.
 */
function withIncludes(files: HomeFiles, file: string, dir: string, node: Record<string, unknown>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const include = node.$include;
  if (include !== undefined) {
    if (depth >= MAX_INCLUDE_DEPTH) throw new OpenClawFileError(file, `$include nests deeper than ${MAX_INCLUDE_DEPTH} levels`);
    for (const target of Array.isArray(include) ? include : [include]) {
      if (typeof target !== "string") throw new OpenClawFileError(file, "$include must name a file or a list of files");
      const path = resolve(join(file, ".."), target);
      const inside = relative(dir, path);
      if (inside.startsWith("..") || isAbsolute(inside)) throw new OpenClawFileError(file, `$include "${target}" points outside ${dir}`);
      const read = files.read(path);
      if (read.kind !== "ok") throw new OpenClawFileError(file, `$include "${target}": ${read.kind === "missing" ? "no such file" : read.reason}`);
      mergeInto(out, withIncludes(files, path, dir, objectOrFail(parseJson5(textOf(read)!, path), path), depth + 1));
    }
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "$include") continue;
    const object = objectOf(value);
    mergeInto(out, { [key]: object ? withIncludes(files, file, dir, object, depth) : value });
  }
  return out;
}

function mergeInto(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const before = objectOf(target[key]);
    const after = objectOf(value);
    if (before && after) mergeInto(before, after);
    else target[key] = value;
  }
}
