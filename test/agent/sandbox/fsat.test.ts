/**
 * The descriptor-level file layer (src/agent/sandbox/fsat.ts and libc.ts) on
 * a real tree: names opened below a folder descriptor never through a link,
 * a held descriptor that keeps meaning its folder after the name is swapped,
 * pipes, sockets and devices reported and never blocked on, bounded reads,
 * whole-content writes, copies, and one content operation per file at a time.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { constants, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  closeFd,
  copyFd,
  exclusive,
  fileSizeBelow,
  identityOf,
  linkTarget,
  listBelow,
  mkdirBelow,
  openBelow,
  openFolderPath,
  readFd,
  replaceFd,
  type Step,
  TooLarge,
} from "../../../src/agent/sandbox/fsat.ts";
import { FLAGS, openFlagsFor } from "../../../src/agent/sandbox/libc.ts";

let root: string;
let open: number[];

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "fermix-fsat-")));
  mkdirSync(join(root, "d", "sub"), { recursive: true });
  writeFileSync(join(root, "d", "a.txt"), "alpha\n");
  writeFileSync(join(root, "outside.txt"), "outside secret\n");
  symlinkSync(join(root, "outside.txt"), join(root, "d", "to-outside"));
  symlinkSync(root, join(root, "d", "to-root"));
  open = [];
});
afterEach(() => {
  for (const fd of open) closeFd(fd);
  rmSync(root, { recursive: true, force: true });
});

/** A folder opened the careful way, closed after the test. */
function folder(path: string): number {
  const fd = openFolderPath(path);
  open.push(fd);
  return fd;
}

/** The descriptor of an opened step, closed after the test. */
function fdOf(step: Step): number {
  if (step.found !== "opened") throw new Error(`expected an open file, got ${JSON.stringify(step)}`);
  open.push(step.fd);
  return step.fd;
}

describe("the flags", () => {
  test("this platform's open(2) flags are the ones Node knows for it", () => {
    for (const name of ["O_WRONLY", "O_RDWR", "O_CREAT", "O_EXCL", "O_NOCTTY", "O_NONBLOCK", "O_DIRECTORY", "O_NOFOLLOW"] as const) {
      expect([name, FLAGS[name]]).toEqual([name, (constants as Record<string, number>)[name]!]);
    }
  });

  test("each platform gets its own values: x86 and arm64 Linux differ in two, macOS in most", () => {
    const x64 = openFlagsFor("linux", "x64")!;
    const arm = openFlagsFor("linux", "arm64")!;
    const mac = openFlagsFor("darwin", "arm64")!;
    expect([x64.O_DIRECTORY, x64.O_NOFOLLOW]).toEqual([0o200000, 0o400000]);
    expect([arm.O_DIRECTORY, arm.O_NOFOLLOW]).toEqual([0o40000, 0o100000]);
    expect([mac.O_CREAT, mac.O_NOFOLLOW, mac.O_DIRECTORY, mac.O_CLOEXEC]).toEqual([0x200, 0x100, 0x100000, 0x1000000]);
    expect(openFlagsFor("win32", "x64")).toBeUndefined();
  });
});

describe("one name below a folder", () => {
  test("a link is reported as a link, whatever the open wanted, and never followed", () => {
    const d = folder(join(root, "d"));
    for (const how of ["read", "edit", "create", "folder"] as const) {
      expect(openBelow(d, "to-outside", how)).toEqual({ found: "link", target: join(root, "outside.txt") });
      expect(openBelow(d, "to-root", how)).toEqual({ found: "link", target: root });
    }
    expect(readFileSync(join(root, "outside.txt"), "utf8")).toBe("outside secret\n");
  });

  test("a file opens for read, edit and create; a folder only for read and as a folder; missing is missing", () => {
    const d = folder(join(root, "d"));
    const file = openBelow(d, "a.txt", "read");
    expect(file).toMatchObject({ found: "opened", kind: "file", size: 6 });
    fdOf(file);
    fdOf(openBelow(d, "a.txt", "edit"));
    expect(openBelow(d, "a.txt", "folder")).toEqual({ found: "unusable", kind: "not-folder" });
    expect(openBelow(d, "sub", "read")).toMatchObject({ found: "opened", kind: "folder" });
    expect(openBelow(d, "sub", "edit")).toEqual({ found: "unusable", kind: "folder" });
    expect(openBelow(d, "sub", "create")).toEqual({ found: "unusable", kind: "folder" });
    expect(openBelow(d, "nope", "read")).toEqual({ found: "missing" });
    // create makes the file, in this folder and nowhere else.
    fdOf(openBelow(d, "new.txt", "create"));
    expect(readFileSync(join(root, "d", "new.txt"), "utf8")).toBe("");
  });

  test("a named pipe, a socket and a device are reported, never opened for use, and nothing blocks", async () => {
    expect(Bun.spawnSync(["mkfifo", join(root, "d", "pipe")]).exitCode).toBe(0);
    const listener = Bun.listen({ unix: join(root, "d", "sock"), socket: { data() {} } });
    try {
      const d = folder(join(root, "d"));
      for (const how of ["read", "edit"] as const) expect(openBelow(d, "pipe", how)).toEqual({ found: "unusable", kind: "fifo" });
      expect(openBelow(d, "pipe", "folder")).toEqual({ found: "unusable", kind: "not-folder" });
      // With no reader, a pipe cannot even be opened for writing: it is not one to use either way.
      expect(openBelow(d, "pipe", "create")).toEqual({ found: "unusable", kind: "pipe-or-socket" });
      for (const how of ["read", "edit", "create"] as const) expect(openBelow(d, "sock", how)).toEqual({ found: "unusable", kind: "pipe-or-socket" });
      const dev = folder("/dev");
      expect(openBelow(dev, "zero", "read")).toEqual({ found: "unusable", kind: "device" });
      expect(fileSizeBelow(d, "pipe")).toBeUndefined();
      const kinds = Object.fromEntries((await listBelow(d)).map((e) => [e.name, e.kind]));
      expect(kinds).toEqual({ "a.txt": "file", sub: "folder", "to-outside": "link", "to-root": "link", pipe: "fifo", sock: "socket" });
    } finally {
      listener.stop(true);
    }
  });

  test("a folder path is opened from / following no link: a link on the way stops it", () => {
    symlinkSync(join(root, "d"), join(root, "d-link"));
    expect(() => openFolderPath(join(root, "d-link", "sub"))).toThrow("ELOOP");
    expect(() => openFolderPath(join(root, "d", "a.txt"))).toThrow("ENOTDIR");
    expect(() => openFolderPath(join(root, "nope"))).toThrow("ENOENT");
    expect(identityOf(folder(join(root, "d", "sub")))).toBe(identityOf(folder(join(root, "d", "sub"))));
  });

  test("mkdirBelow makes a folder, and one that exists already is fine", () => {
    const d = folder(join(root, "d"));
    mkdirBelow(d, "made");
    mkdirBelow(d, "made");
    expect(openBelow(d, "made", "folder")).toMatchObject({ found: "opened", kind: "folder" });
    expect(linkTarget(d, "made")).toBeUndefined();
  });
});

describe("a held descriptor", () => {
  test("keeps meaning its folder after the name is swapped for a link: listing and opening below it stay inside", async () => {
    const d = folder(join(root, "d"));
    renameSync(join(root, "d"), join(root, "d-moved"));
    mkdirSync(join(root, "elsewhere"));
    writeFileSync(join(root, "elsewhere", "a.txt"), "elsewhere\n");
    symlinkSync(join(root, "elsewhere"), join(root, "d"));
    expect((await listBelow(d)).map((e) => e.name).sort()).toEqual(["a.txt", "sub", "to-outside", "to-root"]);
    const a = fdOf(openBelow(d, "a.txt", "read"));
    expect((await readFd(a, 100)).bytes.toString()).toBe("alpha\n");
    expect(fileSizeBelow(d, "a.txt")).toBe(6);
  });
});

describe("contents", () => {
  test("readFd reads at most max bytes and says whether there is more, however wrong the expected size", async () => {
    writeFileSync(join(root, "d", "long.txt"), "x".repeat(5000));
    const d = folder(join(root, "d"));
    const fd = fdOf(openBelow(d, "long.txt", "read"));
    expect(await readFd(fd, 10_000, 10)).toEqual({ bytes: Buffer.from("x".repeat(5000)), more: false });
    const capped = await readFd(fd, 4999, 5000);
    expect([capped.bytes.length, capped.more]).toEqual([4999, true]);
    expect((await readFd(fd, 5000, 0)).more).toBe(false);
  });

  test("replaceFd replaces the whole content, shorter or longer", async () => {
    const d = folder(join(root, "d"));
    const fd = fdOf(openBelow(d, "a.txt", "edit"));
    await replaceFd(fd, Buffer.from("a much longer content\n"));
    expect(readFileSync(join(root, "d", "a.txt"), "utf8")).toBe("a much longer content\n");
    await replaceFd(fd, Buffer.from("z"));
    expect(readFileSync(join(root, "d", "a.txt"), "utf8")).toBe("z");
  });

  test("copyFd copies what the descriptor holds into a new private file, and stops past its limit", async () => {
    const d = folder(join(root, "d"));
    const fd = fdOf(openBelow(d, "a.txt", "read"));
    const seen: string[] = [];
    expect(await copyFd(fd, join(root, "copy.txt"), 100, (bytes) => seen.push(Buffer.from(bytes).toString()), 2)).toBe(6);
    expect(readFileSync(join(root, "copy.txt"), "utf8")).toBe("alpha\n");
    expect(seen).toEqual(["al", "ph", "a\n"]);
    expect(statSync(join(root, "copy.txt")).mode & 0o777).toBe(0o600);
    await expect(copyFd(fd, join(root, "copy.txt"), 100, () => {})).rejects.toThrow();
    await expect(copyFd(fd, join(root, "copy2.txt"), 3, () => {}, 2)).rejects.toBeInstanceOf(TooLarge);
  });

  test("exclusive: work on one file waits for the work before it; other files do not wait", async () => {
    const d = folder(join(root, "d"));
    linkSync(join(root, "d", "a.txt"), join(root, "d", "a-hardlink.txt"));
    const one = fdOf(openBelow(d, "a.txt", "read"));
    const same = fdOf(openBelow(d, "a-hardlink.txt", "read"));
    const other = fdOf(openBelow(folder(root), "outside.txt", "read"));
    const events: string[] = [];
    let releaseFirst!: () => void;
    const gate = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = exclusive(identityOf(one), async () => {
      events.push("first starts");
      await gate;
      events.push("first ends");
    });
    const second = exclusive(identityOf(same), async () => {
      events.push("second runs");
    });
    const third = exclusive(identityOf(other), async () => {
      events.push("other file runs");
    });
    await third;
    expect(events).toEqual(["first starts", "other file runs"]);
    releaseFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(["first starts", "other file runs", "first ends", "second runs"]);
  });
});
