/**
 * The three libc calls Node's fs has no form of — `openat`, `mkdirat` and
 * `readlinkat`, relative to a directory descriptor — through bun:ffi, with
 * the open(2) flags of this OS and architecture. Failures throw a SysError
 * carrying the errno name (ENOENT, ELOOP…), as Node's fs errors do.
 *
 * The library is opened on first use, not at import: most turns never touch
 * a file. bun:ffi itself is loaded then too: importing it costs an idle
 * daemon ~2 MiB (docs/performance.md). Linux x86-64 is what the test suite runs. Linux arm64 and macOS
 * (libSystem, x86-64 and arm64) only choose their library, symbols and
 * constants here and are untested; so is the arm64-macOS way of passing
 * openat's mode (see `openatSignature`).
 */
import type { FFIType } from "bun:ffi";
import { constants } from "node:os";

/** The open(2) flags the file tools use, as numbers of this platform. */
export interface OpenFlags {
  O_RDONLY: number;
  O_WRONLY: number;
  O_RDWR: number;
  O_CREAT: number;
  O_EXCL: number;
  O_NOCTTY: number;
  O_NONBLOCK: number;
  O_DIRECTORY: number;
  O_NOFOLLOW: number;
  O_CLOEXEC: number;
}

/** The flags for `platform`/`arch` (from each system's <fcntl.h>); undefined where Fermix does not run. */
export function openFlagsFor(platform: string, arch: string): OpenFlags | undefined {
  if (platform === "linux") {
    // asm-generic values, except where x86 differs: O_DIRECTORY and O_NOFOLLOW swap places with O_DIRECT/O_LARGEFILE on arm64.
    const arm = arch === "arm64" || arch === "arm";
    return {
      O_RDONLY: 0,
      O_WRONLY: 0o1,
      O_RDWR: 0o2,
      O_CREAT: 0o100,
      O_EXCL: 0o200,
      O_NOCTTY: 0o400,
      O_NONBLOCK: 0o4000,
      O_DIRECTORY: arm ? 0o40000 : 0o200000,
      O_NOFOLLOW: arm ? 0o100000 : 0o400000,
      O_CLOEXEC: 0o2000000,
    };
  }
  if (platform === "darwin") {
    return {
      O_RDONLY: 0,
      O_WRONLY: 0x1,
      O_RDWR: 0x2,
      O_CREAT: 0x200,
      O_EXCL: 0x800,
      O_NOCTTY: 0x20000,
      O_NONBLOCK: 0x4,
      O_DIRECTORY: 0x100000,
      O_NOFOLLOW: 0x100,
      O_CLOEXEC: 0x1000000,
    };
  }
  return undefined;
}

/** A failed call: `code` is the errno's name, as in Node's fs errors. */
export class SysError extends Error {
  override name = "SysError";
  constructor(
    readonly syscall: string,
    readonly code: string,
    readonly errno: number,
  ) {
    super(`${syscall}: ${code}`);
  }
}

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, value]) => [value, name]));

/**
 * openat's declaration. It is variadic (the mode follows `...`): x86-64 and
 * Linux arm64 pass a variadic int where they pass a fixed one, but Apple's
 * arm64 passes every variadic argument on the stack, so there the mode is
 * declared as the ninth argument — past the eight argument registers, the
 * first stack slot, where the callee looks for it. Untested (no macOS here).
 */
function openatSignature(types: typeof FFIType, platform: string, arch: string) {
  if (platform === "darwin" && arch === "arm64") {
    const pad = types.i64;
    return { args: [types.i32, types.ptr, types.i32, pad, pad, pad, pad, pad, types.u64], returns: types.i32 } as const;
  }
  return { args: [types.i32, types.ptr, types.i32, types.u32], returns: types.i32 } as const;
}

function load() {
  const { dlopen, FFIType, read }: typeof import("bun:ffi") = require("bun:ffi");
  const darwin = process.platform === "darwin";
  const lib = dlopen(darwin ? "libSystem.B.dylib" : "libc.so.6", {
    openat: openatSignature(FFIType, process.platform, process.arch),
    mkdirat: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    readlinkat: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
    [darwin ? "__error" : "__errno_location"]: { args: [], returns: FFIType.ptr },
  });
  const errnoAt = lib.symbols[darwin ? "__error" : "__errno_location"] as () => number | null;
  const errno = (): number => {
    const at = errnoAt();
    return at === null ? 0 : read.i32(at as never, 0);
  };
  const openat = lib.symbols.openat as unknown as (...args: Array<number | bigint | Buffer>) => number;
  const padded = darwin && process.arch === "arm64";
  return {
    openat: (dirfd: number, name: Buffer, flags: number, mode: number): number =>
      padded ? openat(dirfd, name, flags, 0, 0, 0, 0, 0, mode) : openat(dirfd, name, flags, mode),
    mkdirat: lib.symbols.mkdirat as unknown as (dirfd: number, name: Buffer, mode: number) => number,
    readlinkat: lib.symbols.readlinkat as unknown as (dirfd: number, name: Buffer, buf: Buffer, size: number) => number | bigint,
    errno,
  };
}

let loaded: ReturnType<typeof load> | undefined;
const libc = () => (loaded ??= load());

/** The flags of the running platform (Fermix builds only for Linux and macOS; elsewhere loading libc fails first). */
export const FLAGS: OpenFlags = openFlagsFor(process.platform, process.arch) ?? openFlagsFor("linux", "x64")!;

/** A name as C wants it; a NUL inside would cut it short, so it is refused. */
function cName(name: string): Buffer {
  if (name.includes("\0")) throw new SysError("path", "EINVAL", 22);
  return Buffer.from(`${name}\0`);
}

function fail(syscall: string): never {
  const errno = libc().errno();
  throw new SysError(syscall, ERRNO_NAMES.get(errno) ?? `errno ${errno}`, errno);
}

/** openat(2): `name` (one component, or a path) relative to `dirfd`; returns the new descriptor. */
export function openat(dirfd: number, name: string, flags: number, mode = 0o666): number {
  const fd = libc().openat(dirfd, cName(name), flags, mode);
  return fd >= 0 ? fd : fail("openat");
}

/** mkdirat(2): a folder `name` in `dirfd` (mode before the umask). */
export function mkdirat(dirfd: number, name: string, mode = 0o777): void {
  if (libc().mkdirat(dirfd, cName(name), mode) !== 0) fail("mkdirat");
}

/** readlinkat(2): the target of the link `name` in `dirfd` (EINVAL: it is not a link). */
export function readlinkat(dirfd: number, name: string): string {
  const buffer = Buffer.alloc(4096);
  const length = Number(libc().readlinkat(dirfd, cName(name), buffer, buffer.length));
  if (length < 0) fail("readlinkat");
  return buffer.subarray(0, length).toString("utf8");
}
