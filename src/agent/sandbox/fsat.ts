/**
 * Files reached through open directory descriptors, one name at a time,
 * never through a symbolic link. A path checked and then opened again by
 * name can be changed in between (a command running beside the tool swaps a
 * folder for a link); a name opened below a descriptor with O_NOFOLLOW
 * cannot lead anywhere but into that folder, and what was opened is then
 * judged by its descriptor (`fstat`), never by what a name meant before.
 *
 * Only regular files and folders come back open. Every open is O_NONBLOCK,
 * so a named pipe never blocks it, and a pipe, socket or device is closed
 * and reported as such. The opens and fstat run on the caller's thread
 * (short, and never waiting on a pipe); contents and folder listings go
 * through the thread pool (`fs.read`, `fs.write`, `fs.promises.readdir`), so
 * the event loop never waits on reading or writing them.
 *
 * A folder is listed through its descriptor's own name in /proc/self/fd
 * (Linux) or /dev/fd (macOS): opening that name opens the very folder the
 * descriptor holds, wherever it has moved — not the path it was opened by.
 * The macOS path (where /dev/fd/N is a duplicate sharing the offset, fine
 * for one listing per open folder) is untested.
 */
import { type BigIntStats, closeSync, promises as fsp, fstatSync, ftruncate, read, write } from "node:fs";
import { FLAGS, mkdirat, openat, readlinkat, SysError } from "./libc.ts";

/** What a name is. */
export type Kind = "file" | "folder" | "link" | "fifo" | "socket" | "device" | "other";

/** Which object a descriptor holds (device and inode), to compare with another. */
export type Identity = string;

/** What one name below a folder turned out to be. */
export type Step =
  /** A regular file or a folder, open; the caller closes `fd`. */
  | { found: "opened"; fd: number; kind: "file" | "folder"; size: number; identity: Identity }
  /** A symbolic link (not followed). */
  | { found: "link"; target: string }
  | { found: "missing" }
  /**
   * Something that cannot be used this way: a folder where a file is wanted,
   * a pipe, a socket, a device; "not-folder" where a folder is wanted (what
   * it is instead, O_DIRECTORY does not say).
   */
  | { found: "unusable"; kind: Kind | "pipe-or-socket" | "not-folder" };

/** How a name is opened: read (file or folder), edit (an existing file), create (a file, made if missing), folder (a folder only). */
export type OpenHow = "read" | "edit" | "create" | "folder";

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_NOCTTY, O_NONBLOCK, O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC } = FLAGS;
const ALWAYS = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
const OPEN_FLAGS: Record<OpenHow, number> = {
  read: O_RDONLY | ALWAYS,
  edit: O_RDWR | ALWAYS,
  create: O_WRONLY | O_CREAT | ALWAYS,
  folder: O_RDONLY | O_DIRECTORY | ALWAYS,
};

/** The kind a stat's mode names. */
export function kindOf(stats: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): Kind {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "folder";
  if (stats.isSymbolicLink()) return "link";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "device";
  return "other";
}

function identity(stats: BigIntStats): Identity {
  return `${stats.dev}:${stats.ino}`;
}

/** The identity of what `fd` holds. */
export function identityOf(fd: number): Identity {
  return identity(fstatSync(fd, { bigint: true }));
}

/** Close a descriptor, ignoring one already closed. */
export function closeFd(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed: nothing left to release.
  }
}

/** The target of the link `name` in `dirfd`, or undefined when it is not a link (or not there). */
export function linkTarget(dirfd: number, name: string): string | undefined {
  try {
    return readlinkat(dirfd, name);
  } catch {
    return undefined;
  }
}

/** Opens tried on a name that changes between a link and not a link while it is opened. */
const SWAP_RETRIES = 4;

/**
 * Open `name` in the folder `dirfd` without following a link and without
 * blocking, and say what it is. Only a regular file, or a folder where one
 * may be (`read`, `folder`), comes back open.
 */
export function openBelow(dirfd: number, name: string, how: OpenHow): Step {
  let fd: number | undefined;
  for (let attempt = 1; fd === undefined; attempt++) {
    try {
      fd = openat(dirfd, name, OPEN_FLAGS[how]);
    } catch (error) {
      if (!(error instanceof SysError)) throw error;
      // Whatever errno says (ELOOP, or ENOTDIR with O_DIRECTORY), a link is told by reading it.
      const target = linkTarget(dirfd, name);
      if (target !== undefined) return { found: "link", target };
      // It was a link when opened and is not one now: the name is being swapped. Look again.
      const wasLink = error.code === "ELOOP" || (error.code === "ENOTDIR" && how === "folder");
      if (wasLink && attempt < SWAP_RETRIES) continue;
      return failed(error);
    }
  }
  return opened(fd, how);
}

/** A failed open, as a step where it says what is there. */
function failed(error: SysError): Step {
  switch (error.code) {
    case "ENOENT":
      return { found: "missing" };
    case "EISDIR":
      return { found: "unusable", kind: "folder" };
    case "ENOTDIR":
      return { found: "unusable", kind: "not-folder" };
    // A socket cannot be opened at all; a pipe with no reader cannot be opened for writing.
    case "ENXIO":
    case "EOPNOTSUPP":
    case "ENOTSUP":
      return { found: "unusable", kind: "pipe-or-socket" };
    default:
      throw error;
  }
}

/** What `fd` turned out to hold: kept open when it may be used `how`, else closed. */
function opened(fd: number, how: OpenHow): Step {
  let stats: BigIntStats;
  try {
    stats = fstatSync(fd, { bigint: true });
  } catch (error) {
    closeFd(fd);
    throw error;
  }
  const kind = kindOf(stats);
  if ((kind === "file" && how !== "folder") || (kind === "folder" && (how === "read" || how === "folder"))) {
    return { found: "opened", fd, kind, size: Number(stats.size), identity: identity(stats) };
  }
  closeFd(fd);
  return { found: "unusable", kind };
}

const busy = new Map<Identity, Promise<void>>();

/**
 * Run `work` once no other content operation of this process on the same
 * file (by identity) is running, and hold the others off until it is done:
 * a read never meets another tool call's half-written file, and two edits
 * never lose one of them. Commands outside the process are not held off.
 */
export async function exclusive<T>(file: Identity, work: () => Promise<T>): Promise<T> {
  const before = busy.get(file) ?? Promise.resolve();
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const mine = before.then(() => done);
  busy.set(file, mine);
  await before;
  try {
    return await work();
  } finally {
    release();
    if (busy.get(file) === mine) busy.delete(file);
  }
}

/** Make the folder `name` in `dirfd`; one that exists already (made meanwhile) is fine. */
export function mkdirBelow(dirfd: number, name: string): void {
  try {
    mkdirat(dirfd, name);
  } catch (error) {
    if (!(error instanceof SysError) || error.code !== "EEXIST") throw error;
  }
}

/**
 * Open an absolute folder path from the root down, one name at a time,
 * following no link: how a reach's own folders are opened. Throws a
 * SysError (ELOOP for a link, ENOTDIR, ENOENT) naming where it stopped.
 */
export function openFolderPath(path: string): number {
  let fd = openat(-1, "/", OPEN_FLAGS.folder);
  let at = "";
  for (const name of path.split("/").filter((part) => part !== "")) {
    at = `${at}/${name}`;
    let step: Step;
    try {
      step = openBelow(fd, name, "folder");
    } finally {
      closeFd(fd);
    }
    if (step.found !== "opened") {
      const code = step.found === "link" ? "ELOOP" : step.found === "missing" ? "ENOENT" : "ENOTDIR";
      throw new SysError(`open ${at}`, code, 0);
    }
    fd = step.fd;
  }
  return fd;
}

/** The name under which a descriptor's folder can be opened again, itself and nothing else. */
export function descriptorPath(fd: number): string {
  return process.platform === "linux" ? `/proc/self/fd/${fd}` : `/dev/fd/${fd}`;
}

/** The names in the folder `dirfd` holds, with their kinds (links not followed). */
export async function listBelow(dirfd: number): Promise<Array<{ name: string; kind: Kind }>> {
  const entries = await fsp.readdir(descriptorPath(dirfd), { withFileTypes: true });
  return entries.map((entry) => ({ name: entry.name, kind: kindOf(entry) }));
}

/** The size of `name` in `dirfd` when it is a regular file, else undefined (opened without following or blocking). */
export function fileSizeBelow(dirfd: number, name: string): number | undefined {
  const step = openBelow(dirfd, name, "read");
  if (step.found !== "opened") return undefined;
  closeFd(step.fd);
  return step.kind === "file" ? step.size : undefined;
}

const readAt = (fd: number, buffer: Buffer, offset: number, length: number, position: number) =>
  new Promise<number>((resolve, reject) => read(fd, buffer, offset, length, position, (error, bytes) => (error ? reject(error) : resolve(bytes))));

/**
 * Up to `max` bytes of the file `fd` holds, from the start; `more` says
 * whether anything lies beyond them. `expected` (the size fstat gave) only
 * sizes the first buffer: a file that grew meanwhile is read on, to `max`.
 */
export async function readFd(fd: number, max: number, expected = 0): Promise<{ bytes: Buffer; more: boolean }> {
  let buffer = Buffer.alloc(Math.min(max, Math.max(expected, 0)) + 1);
  let filled = 0;
  for (;;) {
    if (filled === buffer.length) {
      if (buffer.length > max) break;
      const grown = Buffer.alloc(Math.min(max + 1, buffer.length * 2));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const got = await readAt(fd, buffer, filled, buffer.length - filled, filled);
    if (got === 0) break;
    filled += got;
  }
  return { bytes: buffer.subarray(0, Math.min(filled, max)), more: filled > max };
}

/** Replace the whole content of the file `fd` holds with `data`. */
export async function replaceFd(fd: number, data: Uint8Array): Promise<void> {
  await new Promise<void>((resolve, reject) => ftruncate(fd, 0, (error) => (error ? reject(error) : resolve())));
  let done = 0;
  while (done < data.byteLength) {
    done += await new Promise<number>((resolve, reject) =>
      write(fd, data, done, data.byteLength - done, done, (error, bytes) => (error ? reject(error) : resolve(bytes))),
    );
  }
}

/**
 * Copy the file `fd` holds into a new file `dest` (mode 0600, which must not
 * exist), `chunk` bytes at a time, handing each chunk to `seen`; returns the
 * bytes copied. Stops with `TooLarge` past `max` bytes.
 */
export async function copyFd(fd: number, dest: string, max: number, seen: (bytes: Uint8Array) => void, chunk = 1024 * 1024): Promise<number> {
  const out = await fsp.open(dest, "wx", 0o600);
  try {
    const buffer = Buffer.alloc(chunk);
    let position = 0;
    for (;;) {
      const got = await readAt(fd, buffer, 0, buffer.length, position);
      if (got === 0) return position;
      position += got;
      if (position > max) throw new TooLarge(max);
      const bytes = buffer.subarray(0, got);
      seen(bytes);
      await out.write(bytes);
    }
  } finally {
    await out.close();
  }
}

/** A file over the size a copy allows. */
export class TooLarge extends Error {
  override name = "TooLarge";
  constructor(readonly max: number) {
    super(`larger than ${max} bytes`);
  }
}
