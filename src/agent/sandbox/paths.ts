/**
 * Where the agent's tools may reach, described by paths: the workspace
 * (`<home>/workspace`, but not its SOUL.md and skills/, which change only
 * through /soul and /skills) and the granted paths; what each refusal tells
 * the model; and the rules for what may be granted at all — never a path
 * that holds the Fermix home (config, secrets, database) or lies inside it.
 *
 * The file tools do not judge a path string and open it again: open.ts
 * opens it inside this reach through descriptors and judges what it opened.
 * `resolveToolPath` is left for run_command's working folder, a path handed
 * on to the OS sandbox, which judges it again.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from "node:path";
import type { GrantMode } from "../../store/sandbox.ts";
import { ToolError } from "../tools/types.ts";

/** The places a turn's tools may reach, as real paths. */
export interface Reach {
  /** The workspace, real path. */
  workspace: string;
  /** Inside the workspace but read-only to the tools (SOUL.md, skills/). */
  readOnly: readonly string[];
  grants: ReadonlyArray<{ path: string; mode: GrantMode }>;
  /** The user's home directory, for `~/…` paths. */
  homeDir: string;
  /** Whether the model can ask for more (request_access is offered): refusals say how. */
  canAsk: boolean;
}

export type Want = "read" | "write";

/** A path the tools may not use, with what the model can do about it. */
export class PathRefused extends ToolError {
  override name = "PathRefused";
}

/** True when `child` is `parent` or lies inside it (both absolute and normalized). */
export function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** `~` and `~/x` against the home directory; anything else unchanged. */
export function expandHome(path: string, homeDir: string): string {
  if (path === "~") return homeDir;
  if (path.startsWith("~/")) return join(homeDir, path.slice(2));
  return path;
}

/**
 * The real path of `path`, which need not exist: the deepest ancestor that
 * exists is resolved (its symlinks followed), the rest appended as written.
 * `..` is resolved first, as the path's own words say.
 */
export function realPath(path: string, depth = 0): string {
  let head = normalize(path);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      // A link whose target does not exist (yet) still decides where a write would land: follow it by hand.
      const link = danglingLink(head);
      if (link !== undefined && depth < 40) return realPath(join(resolve(dirname(head), link), ...rest.reverse()), depth + 1);
      const parent = dirname(head);
      if (parent === head) return normalize(path);
      rest.push(basename(head));
      head = parent;
    }
  }
}

/** The target of `path` when it is a symbolic link, else undefined. */
function danglingLink(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** The real, absolute path a tool argument names: relative paths are relative to the workspace. */
export function absoluteFor(path: string, reach: Pick<Reach, "workspace" | "homeDir">): string {
  const expanded = expandHome(path.trim(), reach.homeDir);
  return resolve(reach.workspace, expanded);
}

/** The access the reach gives to a real path: "rw", "ro", or null (out of reach). */
export function accessTo(real: string, reach: Reach): GrantMode | null {
  if (within(reach.workspace, real)) return reach.readOnly.some((p) => within(p, real)) ? "ro" : "rw";
  // The most specific grant decides (an rw folder inside an ro one is writable, and the other way round).
  let best: { path: string; mode: GrantMode } | undefined;
  for (const grant of reach.grants) {
    if (within(grant.path, real) && (!best || grant.path.length > best.path.length)) best = grant;
  }
  return best?.mode ?? null;
}

const askHint = (path: string, mode: GrantMode) =>
  ` To use it, ask the owner with request_access (path "${path}", mode "${mode}", and your reason); they decide.`;

/**
 * The refusal of a path out of reach: `path` as the model gave it, `target`
 * where it leads (real, absolute), and `link` the symbolic link that led
 * there when one did (the path itself, or a folder on its way).
 */
export function outsideRefusal(path: string, target: string, want: Want, reach: Reach, link?: { path: string; isTheArgument: boolean }): PathRefused {
  const hint = reach.canAsk ? askHint(target, want === "write" ? "rw" : "ro") : "";
  const why = !link
    ? `${path} is outside the workspace (${reach.workspace})${reach.grants.length > 0 ? " and the paths granted to you" : ""}.`
    : link.isTheArgument
      ? `${path} is a symbolic link that points outside the workspace (to ${target}), where you have no access.`
      : `${path} goes through a symbolic link (${link.path}) that points outside the workspace (to ${target}), where you have no access.`;
  return new PathRefused(`${why} Work inside the workspace (paths relative to it).${hint}`);
}

/** The refusal of a write to a read-only place: SOUL.md and skills/ of the workspace, or a read-only grant (`target` names it). */
export function readOnlyRefusal(path: string, inWorkspace: boolean, target: string, reach: Reach): PathRefused {
  if (inWorkspace) return new PathRefused(`${path} is read-only to you: SOUL.md and skills/ change only through the owner's /soul and /skills commands.`);
  return new PathRefused(`${path} is granted read-only.${reach.canAsk ? askHint(target, "rw") : ""}`);
}

/**
 * Resolve a path argument by its real path now and check it may be used for
 * `want`; returns that real path. Only for what a path string is handed on
 * to (run_command's working folder, judged again inside the OS sandbox): a
 * tool that opens files uses open.ts, which judges what it opened.
 */
export function resolveToolPath(path: unknown, want: Want, reach: Reach): string {
  if (typeof path !== "string" || path.trim() === "") throw new ToolError("path is required (relative to the workspace, or absolute)");
  if (path.includes("\0")) throw new ToolError("path contains a NUL character");
  const lexical = absoluteFor(path, reach);
  const real = realPath(lexical);
  const access = accessTo(real, reach);
  if (access === null) {
    const viaLink = real !== lexical && accessTo(lexical, reach) !== null;
    throw outsideRefusal(path, real, want, reach, viaLink ? { path, isTheArgument: true } : undefined);
  }
  if (want === "write" && access === "ro") throw readOnlyRefusal(path, within(reach.workspace, real), real, reach);
  return real;
}

/** What `fermixHome` and `workspace` are, for judging a grant. */
export interface GrantRules {
  fermixHome: string;
  workspace: string;
}

/**
 * The path a grant would be kept under (real, absolute), or an Error saying
 * why it cannot be granted: it must exist, be absolute or `~/…`, and neither
 * hold the Fermix home nor lie inside it (the workspace is reachable anyway).
 */
export function grantablePath(path: string, homeDir: string, rules: GrantRules): { path: string } | { refused: string } {
  const expanded = expandHome(path.trim(), homeDir);
  if (expanded === "" || !isAbsolute(expanded)) return { refused: `give an absolute path (or ~/…), not "${path}"` };
  if (!existsSync(expanded)) return { refused: `${expanded} does not exist` };
  const real = realpathSync(expanded);
  const home = realPath(rules.fermixHome);
  if (within(real, home)) return { refused: `${real} contains the Fermix home (${home}: config, secrets, database), which is never granted` };
  if (within(home, real)) {
    return within(realPath(rules.workspace), real)
      ? { refused: `${real} is inside the workspace, which the tools reach already` }
      : { refused: `${real} is inside the Fermix home (${home}), which is never granted` };
  }
  return { path: real };
}
