/**
 * Opening a tool's path inside the reach (src/agent/sandbox/open.ts) on a
 * real tree: `..` by the path's words, links followed only while they stay
 * in the reach, read-only decided by what was opened (a folder renamed over
 * skills/, a second name of SOUL.md), grants by their own root, and pipes,
 * sockets and devices refused before anything reads or writes them.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readFd } from "../../../src/agent/sandbox/fsat.ts";
import { type Opened, openInReach, type Purpose } from "../../../src/agent/sandbox/open.ts";
import type { Reach } from "../../../src/agent/sandbox/paths.ts";
import { type Machine, makeMachine } from "./fixture.ts";

let m: Machine;
let grants: Reach["grants"];
let opened: Opened[];

beforeEach(() => {
  m = makeMachine();
  grants = [];
  opened = [];
});
afterEach(() => {
  for (const o of opened) o.close();
  m.cleanup();
});

const reach = (canAsk = true): Reach => ({
  workspace: m.workspace,
  readOnly: [join(m.workspace, "SOUL.md"), join(m.workspace, "skills")],
  grants,
  homeDir: m.home,
  canAsk,
});

/** Open and keep for closing; undefined when nothing is there. */
function open(path: string, purpose: Purpose = "read", r = reach()): Opened | undefined {
  const got = openInReach(path, purpose, r);
  if (got) opened.push(got);
  return got;
}

/** The refusal (or other error) `open` throws, as the model reads it. */
function refusal(path: string, purpose: Purpose = "read", r = reach()): string {
  try {
    open(path, purpose, r);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  throw new Error(`${path} was opened for ${purpose}`);
}

async function text(o: Opened | undefined): Promise<string> {
  if (!o) throw new Error("nothing was opened");
  return (await readFd(o.fd, 1_000_000)).bytes.toString("utf8");
}

describe("words and links", () => {
  test("`..` is resolved by the path's words: inside stays inside, past the workspace is refused", async () => {
    mkdirSync(join(m.workspace, "a", "b"), { recursive: true });
    expect(await text(open("a/b/../../notes.txt"))).toBe("hello from the workspace\n");
    expect(open("a/../notes.txt")!.path).toBe(join(m.workspace, "notes.txt"));
    expect(refusal("../config.toml")).toStartWith("PathRefused: ../config.toml is outside the workspace");
    expect(refusal(`${m.workspace}/../../diary.txt`)).toContain("outside the workspace");
  });

  test("a link on the way or at the end that points out is refused, saying which link; nothing outside is created", () => {
    symlinkSync(m.home, join(m.workspace, "home-link"));
    symlinkSync(m.secretFile, join(m.workspace, "diary-link"));
    expect(refusal("diary-link")).toBe(
      `PathRefused: diary-link is a symbolic link that points outside the workspace (to ${m.secretFile}), where you have no access. Work inside the workspace (paths relative to it). To use it, ask the owner with request_access (path "${m.secretFile}", mode "ro", and your reason); they decide.`,
    );
    expect(refusal("home-link/diary.txt")).toContain(
      `goes through a symbolic link (${join(m.workspace, "home-link")}) that points outside the workspace (to ${m.secretFile})`,
    );
    expect(refusal("home-link/planted/new.txt", "write")).toStartWith("PathRefused:");
    expect(existsSync(join(m.home, "planted"))).toBe(false);
    // Without request_access offered, no hint to use it.
    expect(refusal("diary-link", "read", reach(false))).not.toContain("request_access");
  });

  test("links that stay inside are followed, chains included; a loop is refused", async () => {
    symlinkSync("notes.txt", join(m.workspace, "n1"));
    symlinkSync(join(m.workspace, "n1"), join(m.workspace, "n2"));
    mkdirSync(join(m.workspace, "real"));
    symlinkSync("real", join(m.workspace, "dir-link"));
    expect(await text(open("n2"))).toBe("hello from the workspace\n");
    expect(open("n2")!.path).toBe(join(m.workspace, "notes.txt"));
    open("dir-link/made/new.txt", "write");
    expect(existsSync(join(m.workspace, "real", "made", "new.txt"))).toBe(true);
    symlinkSync("loop-b", join(m.workspace, "loop-a"));
    symlinkSync("loop-a", join(m.workspace, "loop-b"));
    expect(refusal("loop-a")).toContain("too many levels of symbolic links");
  });

  test("what is missing is undefined for read and edit, and created with its folders for a write", () => {
    expect(open("nope.txt")).toBeUndefined();
    expect(open("nope/deeper.txt", "edit")).toBeUndefined();
    expect(open("new/deeper/file.txt", "write")).toMatchObject({ kind: "file", size: 0, path: join(m.workspace, "new/deeper/file.txt") });
    expect(refusal("notes.txt/inside")).toContain("is not a folder");
    expect(refusal("new", "write")).toBe("ToolError: new is a directory");
  });
});

describe("read-only places", () => {
  test("SOUL.md and skills/ can be read, never written or edited, nor created when missing", () => {
    expect(open("SOUL.md")!.kind).toBe("file");
    expect(open("skills")!.kind).toBe("folder");
    for (const purpose of ["write", "edit"] as const) {
      expect(refusal("SOUL.md", purpose)).toBe(
        "PathRefused: SOUL.md is read-only to you: SOUL.md and skills/ change only through the owner's /soul and /skills commands.",
      );
    }
    expect(refusal("skills/new/SKILL.md", "write")).toContain("read-only to you");
    expect(existsSync(join(m.workspace, "skills", "new"))).toBe(false);
    rmSync(join(m.workspace, "skills"), { recursive: true });
    expect(refusal("skills/x.md", "write")).toContain("read-only to you");
    expect(existsSync(join(m.workspace, "skills"))).toBe(false);
  });

  test("by what was opened, not the words: a link to the workspace, a second name of SOUL.md", () => {
    symlinkSync(m.workspace, join(m.workspace, "e"));
    expect(refusal("e/SOUL.md", "write")).toContain("read-only to you");
    expect(refusal("e/skills/x.md", "write")).toContain("read-only to you");
    linkSync(join(m.workspace, "SOUL.md"), join(m.workspace, "soul-alias.md"));
    expect(refusal("soul-alias.md", "write")).toContain("read-only to you");
    expect(refusal("soul-alias.md", "edit")).toContain("read-only to you");
    expect(readFileSync(join(m.workspace, "SOUL.md"), "utf8")).toBe("# Soul\n");
  });

  test("skills/ swapped with another folder after the read-only places are taken and before the walk: still read-only, by identity", () => {
    const skills = join(m.workspace, "skills");
    const other = join(m.workspace, "x");
    mkdirSync(other);
    let swaps = 0;
    // The home directory is read after the read-only places are noted and before the walk (to expand "~"): the swap goes there.
    const r: Reach = {
      ...reach(),
      get homeDir() {
        if (swaps++ === 0) {
          renameSync(skills, `${skills}.tmp`);
          renameSync(other, skills);
          renameSync(`${skills}.tmp`, other);
        }
        return m.home;
      },
    };
    expect(refusal("x/new.md", "write", r)).toContain("read-only to you");
    expect(swaps).toBe(1);
    expect(existsSync(join(other, "new.md"))).toBe(false);
  });
});

describe("grants", () => {
  test("read-only can be read, not written; read-write both; a file grant is that file alone", async () => {
    grants = [
      { path: m.outsideRo, mode: "ro" },
      { path: m.outsideRw, mode: "rw" },
      { path: m.secretFile, mode: "ro" },
    ];
    expect(await text(open(join(m.outsideRo, "report.txt")))).toBe("quarterly numbers\n");
    expect(refusal(join(m.outsideRo, "report.txt"), "edit")).toStartWith(
      `PathRefused: ${join(m.outsideRo, "report.txt")} is granted read-only. To use it, ask the owner`,
    );
    expect(refusal(join(m.outsideRo, "new.txt"), "write")).toContain("granted read-only");
    expect(existsSync(join(m.outsideRo, "new.txt"))).toBe(false);
    expect(open(join(m.outsideRw, "sub", "out.txt"), "write")!.path).toBe(join(m.outsideRw, "sub", "out.txt"));
    expect(await text(open("~/diary.txt"))).toBe(m.secretText);
    expect(refusal(join(m.home, "other.txt"))).toContain("outside the workspace");
  });

  test("the most specific grant decides, and a read-only one inside a read-write one stays read-only when reached through a link", () => {
    const inner = join(m.outsideRw, "inner");
    mkdirSync(inner);
    grants = [
      { path: m.outsideRw, mode: "rw" },
      { path: inner, mode: "ro" },
    ];
    expect(refusal(join(inner, "x.txt"), "write")).toContain("granted read-only");
    symlinkSync(inner, join(m.outsideRw, "to-inner"));
    expect(refusal(join(m.outsideRw, "to-inner", "x.txt"), "write")).toContain("granted read-only");
  });

  test("a grant whose own path now runs through a link is not reached at all", () => {
    const real = join(m.root, "real-data");
    mkdirSync(real);
    writeFileSync(join(real, "f.txt"), "f");
    const viaLink = join(m.root, "data-link");
    symlinkSync(real, viaLink);
    grants = [{ path: viaLink, mode: "ro" }];
    // The grant names data-link itself, which is a link to somewhere no grant covers.
    expect(refusal(join(viaLink, "f.txt"))).toContain(
      `goes through a symbolic link (${viaLink}) that points outside the workspace (to ${join(real, "f.txt")})`,
    );
  });
});

describe("only regular files and folders", () => {
  test("a named pipe, a socket and a device are refused for every purpose, at once", () => {
    expect(Bun.spawnSync(["mkfifo", join(m.workspace, "pipe")]).exitCode).toBe(0);
    const listener = Bun.listen({ unix: join(m.workspace, "sock"), socket: { data() {} } });
    grants = [{ path: "/dev", mode: "rw" }];
    try {
      for (const purpose of ["read", "edit", "write"] as const) {
        expect(refusal("pipe", purpose)).toMatch(/^PathRefused: pipe is a (named pipe \(FIFO\)|socket or a named pipe), not a regular file or folder/);
        expect(refusal("sock", purpose)).toStartWith("PathRefused: sock is a socket or a named pipe, not a regular file or folder");
        expect(refusal("/dev/zero", purpose)).toStartWith("PathRefused: /dev/zero is a device, not a regular file or folder");
      }
    } finally {
      listener.stop(true);
    }
  });
});
