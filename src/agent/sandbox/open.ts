/**
 * Open a tool's path inside the reach (the workspace and the granted paths),
 * immune to the tree changing meanwhile. The path names a root of the reach
 * (the most specific one that holds it, by its words after `..` is resolved);
 * the root is opened from `/` and the rest walked below it one name at a
 * time with fsat.ts, following no link. A symbolic link met on the way is
 * read and its target, spelled out in full, is looked up in the reach again
 * from the top: one that stays in the reach is followed that way, one that
 * leaves it is refused. Nothing is ever opened through a name that could
 * lead elsewhere.
 *
 * Read-only is decided by what was opened, not by the words: a write is
 * refused when a read-only place (SOUL.md, skills/, a read-only grant) is
 * named on the way, and when any folder or file opened on the way is one of
 * them by its device and inode — so a folder swapped for skills/ under the
 * path is caught too.
 */
import { basename, dirname, isAbsolute, join, normalize, relative, sep } from "node:path";
import type { GrantMode } from "../../store/sandbox.ts";
import { ToolError } from "../tools/types.ts";
import { closeFd, type Identity, mkdirBelow, openBelow, openFolderPath, type Step } from "./fsat.ts";
import { SysError } from "./libc.ts";
import { absoluteFor, outsideRefusal, PathRefused, type Reach, readOnlyRefusal, type Want, within } from "./paths.ts";

/** A regular file or folder of the reach, open. */
export interface Opened {
  fd: number;
  kind: "file" | "folder";
  /** Bytes, for a file (fstat on the descriptor). */
  size: number;
  /** Which file or folder it is (device and inode). */
  identity: Identity;
  /** The path it was reached by: absolute, with the links inside the reach resolved. */
  path: string;
  close(): void;
}

/** What a tool means to do: read a file or folder, edit a file that exists, or write one (created with its folders). */
export type Purpose = "read" | "edit" | "write";

/** Links followed in one lookup before giving up, as the kernel's own limit. */
const MAX_LINKS = 40;

interface Root {
  path: string;
  mode: GrantMode;
  workspace: boolean;
}

/** Read-only places of the reach: by the words naming them, and by the identity of what exists there now. */
interface ReadOnly {
  /** Paths under the workspace (SOUL.md, skills), as names. */
  names: string[][];
  /** Identity → whether it is a workspace part (else a read-only grant). */
  identities: Map<Identity, boolean>;
}

const KIND_WORDS: Record<string, string> = {
  fifo: "a named pipe (FIFO)",
  socket: "a socket",
  device: "a device",
  "pipe-or-socket": "a socket or a named pipe",
  other: "a special file",
};

/** The refusal of a pipe, socket or device: the file tools never open them for real. */
function specialRefusal(path: string, kind: string): PathRefused {
  return new PathRefused(`${path} is ${KIND_WORDS[kind] ?? "a special file"}, not a regular file or folder: the file tools read and write only those.`);
}

/**
 * Open `path` (a tool argument) for `purpose`. Resolves with undefined when
 * nothing is there (for read and edit; a write creates it); throws a
 * PathRefused for a path out of reach, read-only for a write, or not a
 * regular file or folder, and a ToolError for a file that is a folder and
 * the like. The caller closes what it gets.
 */
export function openInReach(path: unknown, purpose: Purpose, reach: Reach): Opened | undefined {
  if (typeof path !== "string" || path.trim() === "") throw new ToolError("path is required (relative to the workspace, or absolute)");
  if (path.includes("\0")) throw new ToolError("path contains a NUL character");
  const want: Want = purpose === "read" ? "read" : "write";
  const roots: Root[] = [
    { path: reach.workspace, mode: "rw", workspace: true },
    ...reach.grants.map((g) => ({ path: g.path, mode: g.mode, workspace: false })),
  ];
  const readOnly = want === "write" ? readOnlyPlaces(reach) : undefined;
  const asked = absoluteFor(path, reach);
  let target = asked;
  let link: { path: string; isTheArgument: boolean } | undefined;
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const root = rootFor(target, roots);
    if (!root) throw outsideRefusal(path, target, want, reach, link);
    let outcome: Walked;
    try {
      outcome = walk(path, target, root, purpose, reach, readOnly);
    } catch (error) {
      if (error instanceof SysError) throw new ToolError(`${path}: ${SYS_WORDS[error.code] ?? `cannot open it (${error.code})`}`);
      throw error;
    }
    if (outcome.kind !== "link") return outcome.opened;
    link = { path: outcome.at, isTheArgument: outcome.at === asked };
    target = outcome.target;
  }
  throw new ToolError(`${path}: too many levels of symbolic links`);
}

/** What a failed open means to the model. */
const SYS_WORDS: Record<string, string> = {
  ELOOP: "it keeps changing between a symbolic link and something else; try again",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  ENAMETOOLONG: "a name in it is too long",
  ENOSPC: "the disk is full",
  EMFILE: "too many files open; try again",
  ENFILE: "too many files open; try again",
};

/** The most specific root holding `target` by its words. */
function rootFor(target: string, roots: Root[]): Root | undefined {
  let best: Root | undefined;
  for (const root of roots) if (within(root.path, target) && (!best || root.path.length > best.path.length)) best = root;
  return best;
}

type Walked = { kind: "done"; opened: Opened | undefined } | { kind: "link"; at: string; target: string };

/** Walk from the root's parent folder down to `target`, one name at a time. */
function walk(path: string, target: string, root: Root, purpose: Purpose, reach: Reach, readOnly: ReadOnly | undefined): Walked {
  const rest = relative(root.path, target)
    .split(sep)
    .filter((part) => part !== "");
  const names = [basename(root.path), ...rest];
  let dirfd = openRoot(dirname(root.path));
  let at = dirname(root.path);
  /** Why a write here is refused, once known: a workspace part, or a read-only grant. */
  let locked: "workspace" | "grant" | undefined = root.mode === "ro" ? "grant" : undefined;
  try {
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const last = i === names.length - 1;
      const here = join(at, name);
      if (readOnly && root.workspace && i > 0 && readOnly.names.some((words) => startsWith(names.slice(1, i + 1), words))) locked ??= "workspace";
      if (!last) {
        let step = openBelow(dirfd, name, "folder");
        if (step.found === "missing" && purpose === "write") {
          if (locked) throw readOnlyRefusal(path, locked === "workspace", here, reach);
          mkdirBelow(dirfd, name);
          step = openBelow(dirfd, name, "folder");
        }
        if (step.found === "link") return followed(here, step.target, names.slice(i + 1));
        if (step.found === "missing") return { kind: "done", opened: undefined };
        if (step.found === "unusable") throw new ToolError(`${path}: ${here} is not a folder`);
        closeFd(dirfd);
        dirfd = step.fd;
        at = here;
        locked ??= readOnly?.identities.has(step.identity) ? (readOnly.identities.get(step.identity) ? "workspace" : "grant") : undefined;
        continue;
      }
      if (locked && purpose !== "read") throw readOnlyRefusal(path, locked === "workspace", here, reach);
      const step: Step = openBelow(dirfd, name, purpose === "read" ? "read" : purpose === "edit" ? "edit" : "create");
      if (step.found === "link") return followed(here, step.target, []);
      if (step.found === "missing") return { kind: "done", opened: undefined };
      if (step.found === "unusable") {
        if (step.kind === "folder") throw new ToolError(`${path} is a directory`);
        if (step.kind === "not-folder") throw new ToolError(`${path}: ${here} is not a folder`);
        throw specialRefusal(path, step.kind);
      }
      const lockedByIdentity = readOnly?.identities.get(step.identity);
      if (lockedByIdentity !== undefined) {
        closeFd(step.fd);
        throw readOnlyRefusal(path, lockedByIdentity, here, reach);
      }
      const fd = step.fd;
      return { kind: "done", opened: { fd, kind: step.kind, size: step.size, identity: step.identity, path: here, close: () => closeFd(fd) } };
    }
    throw new ToolError(`${path}: nothing to open`);
  } finally {
    closeFd(dirfd);
  }
}

/** A link met at `at`: where the whole path leads now, spelled out from `/`. */
function followed(at: string, linkTarget: string, after: string[]): Walked {
  const base = isAbsolute(linkTarget) ? linkTarget : join(dirname(at), linkTarget);
  return { kind: "link", at, target: normalize(join(base, ...after)) };
}

function startsWith(names: string[], prefix: string[]): boolean {
  return prefix.length > 0 && prefix.length <= names.length && prefix.every((word, i) => names[i] === word);
}

/** A root's parent folder, opened from `/` following no link. */
function openRoot(path: string): number {
  try {
    return openFolderPath(path);
  } catch (error) {
    if (error instanceof SysError)
      throw new ToolError(
        `cannot reach ${path} (${error.code === "ELOOP" ? "a part of it is now a symbolic link" : error.code}); ask the owner to check the workspace and grants`,
      );
    throw error;
  }
}

/**
 * The read-only places now: SOUL.md and skills/ by their names under the
 * workspace, and what exists at those names and at each read-only grant by
 * identity (opened the same careful way; what is missing has none yet).
 */
function readOnlyPlaces(reach: Reach): ReadOnly {
  const names = reach.readOnly.filter((p) => within(reach.workspace, p) && p !== reach.workspace).map((p) => relative(reach.workspace, p).split(sep));
  const identities = new Map<Identity, boolean>();
  const note = (place: string, workspace: boolean) => {
    const found = identityAt(place);
    if (found !== undefined && !identities.has(found)) identities.set(found, workspace);
  };
  for (const place of reach.readOnly) note(place, true);
  for (const grant of reach.grants) if (grant.mode === "ro") note(grant.path, false);
  return { names, identities };
}

/** The identity of what is at `path` (absolute), reached without following a link; undefined when nothing usable is there. */
function identityAt(path: string): Identity | undefined {
  let dirfd: number;
  try {
    dirfd = openFolderPath(dirname(path));
  } catch {
    return undefined;
  }
  try {
    const step = openBelow(dirfd, basename(path), "read");
    if (step.found !== "opened") return undefined;
    closeFd(step.fd);
    return step.identity;
  } finally {
    closeFd(dirfd);
  }
}
