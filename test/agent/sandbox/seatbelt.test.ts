/**
 * The macOS profile, read from its generated text (sandbox-exec exists only
 * on macOS): the text is parsed as SBPL and each question — may a command
 * read this file, stat that folder, look up this Mach service, connect to
 * that Unix socket — is answered the way Seatbelt answers it: the last rule
 * whose operation and filters match decides, and nothing matching is a
 * denial. The model covers the operations and filters the profile uses.
 */
import { describe, expect, test } from "bun:test";
import type { SandboxPolicy } from "../../../src/agent/sandbox/policy.ts";
import {
  ancestors,
  MACH_SERVICES,
  MACH_SERVICES_NETWORK,
  MDNS_SOCKET,
  sandboxExecArgv,
  sbplString,
  seatbeltProfile,
} from "../../../src/agent/sandbox/seatbelt.ts";

const WS = "/Users/ann/.fermix/workspace";
const TMP = "/private/var/folders/xy/abc/T/fermix-cmd-1";
const policy = (overrides: Partial<SandboxPolicy> = {}): SandboxPolicy => ({
  workspace: WS,
  readOnlyInWorkspace: [`${WS}/SOUL.md`, `${WS}/skills`],
  grants: [
    { path: "/Users/ann/data", mode: "ro" },
    { path: "/Users/ann/data/out", mode: "rw" },
  ],
  presetPaths: ["/Users/ann/.gitconfig"],
  network: false,
  env: { PATH: "/usr/bin:/bin", HOME: WS },
  ...overrides,
});

type Expr = string | { str: string } | { regex: string } | Expr[];

/** SBPL text as nested lists: atoms, strings and #"regex" literals. */
function parse(text: string): Expr[] {
  const stack: Expr[][] = [[]];
  let i = 0;
  const readString = (): string => {
    let out = "";
    i++;
    while (text[i] !== '"') {
      if (i >= text.length) throw new Error("unterminated string");
      if (text[i] === "\\") i++;
      out += text[i++];
    }
    i++;
    return out;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (c === ";") while (i < text.length && text[i] !== "\n") i++;
    else if (c === "(") {
      stack.push([]);
      i++;
    } else if (c === ")") {
      const done = stack.pop()!;
      if (stack.length === 0) throw new Error(`unbalanced ) at ${i}`);
      stack.at(-1)!.push(done);
      i++;
    } else if (c === '"') stack.at(-1)!.push({ str: readString() });
    else if (c === "#" && text[i + 1] === '"') {
      i++;
      stack.at(-1)!.push({ regex: readString() });
    } else {
      const start = i;
      while (i < text.length && !/[\s()]/.test(text[i]!)) i++;
      stack.at(-1)!.push(text.slice(start, i));
    }
  }
  if (stack.length !== 1) throw new Error("unbalanced (");
  return stack[0]!;
}

interface Rule {
  action: "allow" | "deny";
  ops: string[];
  filters: Expr[][];
}

function rules(profile: string): Rule[] {
  return parse(profile)
    .filter((e): e is Expr[] => Array.isArray(e) && (e[0] === "allow" || e[0] === "deny"))
    .map((e) => ({
      action: e[0] as "allow" | "deny",
      ops: e.slice(1).filter((x): x is string => typeof x === "string"),
      filters: e.slice(1).filter((x): x is Expr[] => Array.isArray(x)),
    }));
}

/** One thing a command tries. */
type Request = { op: string; path?: string; mach?: string; unixSocket?: string };

const str = (e: Expr | undefined) => (e && typeof e === "object" && "str" in e ? e.str : undefined);

function filterMatches(filter: Expr[], request: Request): boolean {
  const [kind, arg, inner] = filter;
  switch (kind) {
    case "literal":
      return request.path === str(arg);
    case "subpath": {
      const base = str(arg)!;
      return request.path !== undefined && (request.path === base || request.path.startsWith(`${base}/`));
    }
    case "regex":
      return request.path !== undefined && new RegExp((arg as { regex: string }).regex).test(request.path);
    case "global-name":
      return request.mach === str(arg);
    case "remote":
    case "local":
      if (arg !== "unix-socket" || request.unixSocket === undefined) return false;
      return inner === undefined || (Array.isArray(inner) && inner[0] === "path-literal" && str(inner[1]) === request.unixSocket);
    case "target":
      return false;
    default:
      throw new Error(`filter the model does not know: ${JSON.stringify(filter)}`);
  }
}

const opMatches = (ruleOp: string, op: string) => (ruleOp.endsWith("*") ? op.startsWith(ruleOp.slice(0, -1)) : ruleOp === op);

/** Seatbelt's answer: the last matching rule wins; nothing matching is "deny" (the profile says deny default). */
function decide(profile: string, request: Request): "allow" | "deny" {
  let answer: "allow" | "deny" = "deny";
  for (const rule of rules(profile)) {
    if (rule.ops.includes("default")) continue;
    if (!rule.ops.some((op) => opMatches(op, request.op))) continue;
    if (rule.filters.length === 0 || rule.filters.some((f) => filterMatches(f, request))) answer = rule.action;
  }
  return answer;
}

const read = (path: string): Request => ({ op: "file-read-data", path });
const write = (path: string): Request => ({ op: "file-write-data", path });
const stat = (path: string): Request => ({ op: "file-read-metadata", path });
const lookup = (mach: string): Request => ({ op: "mach-lookup", mach });
const connectUnix = (path: string): Request => ({ op: "network-outbound", unixSocket: path });
const bindUnix = (path: string): Request => ({ op: "network-bind", unixSocket: path });

describe("the macOS profile", () => {
  const off = seatbeltProfile(policy(), TMP);
  const on = seatbeltProfile(policy({ network: true }), TMP);

  test("it parses, denies by default, and every rule is one the model reads", () => {
    expect(off.split("\n").slice(0, 2)).toEqual(["(version 1)", "(deny default)"]);
    for (const profile of [off, on]) for (const rule of rules(profile)) for (const f of rule.filters) filterMatches(f, { op: "x" });
  });

  test("files: the system, the workspace, grants and its temp dir as granted; the read-only parts stay read-only", () => {
    for (const path of [
      "/usr/bin/awk",
      "/bin/sh",
      "/System/Library/Frameworks/x",
      "/private/etc/hosts",
      "/private/etc/ssl/cert.pem",
      "/Users/ann/.gitconfig",
      `${WS}/notes.txt`,
      "/Users/ann/data/report.txt",
    ]) {
      expect(decide(off, read(path))).toBe("allow");
    }
    for (const path of [`${WS}/notes.txt`, `${TMP}/x`, "/Users/ann/data/out/result.txt", "/dev/null"]) expect(decide(off, write(path))).toBe("allow");
    for (const path of [`${WS}/SOUL.md`, `${WS}/skills/a.md`, "/Users/ann/data/report.txt", "/Users/ann/.gitconfig", "/usr/bin/awk", "/private/etc/hosts"]) {
      expect(decide(off, write(path))).toBe("deny");
    }
  });

  test("no /etc secret, no disk, nothing else of the home or of /Library", () => {
    for (const path of [
      "/private/etc/master.passwd",
      "/private/etc/sudoers",
      "/private/etc/sudoers.d/x",
      "/private/etc/ssh/ssh_host_ed25519_key",
      "/private/etc/kcpassword",
      "/dev/disk0",
      "/dev/rdisk0",
      "/Users/ann/diary.txt",
      "/Users/ann/.ssh/id_ed25519",
      "/Users/ann/.fermix/config.toml",
      "/Library/Keychains/System.keychain",
      "/Library/Application Support/x",
      "/private/var/db/SystemKey",
    ]) {
      expect(decide(off, read(path))).toBe("deny");
      expect(decide(on, read(path))).toBe("deny");
    }
  });

  test("metadata only of what it may read and the folders down to it: a sibling folder cannot even be stat'ed", () => {
    for (const path of [
      "/",
      "/Users",
      "/Users/ann",
      "/Users/ann/.fermix",
      WS,
      `${WS}/notes.txt`,
      "/private/var/folders/xy/abc/T",
      "/etc",
      "/tmp",
      "/var",
      "/usr/lib/libz.dylib",
    ]) {
      expect(decide(off, stat(path))).toBe("allow");
    }
    for (const path of [
      "/Users/bob",
      "/Users/ann/Documents",
      "/Users/ann/.ssh",
      "/Users/ann/.fermix/fermix.db",
      "/private/var/folders/zz",
      "/Volumes/Backup",
      "/Library/Keychains",
    ]) {
      expect(decide(off, stat(path))).toBe("deny");
    }
    expect(ancestors("/Users/ann/.fermix/workspace")).toEqual(["/Users", "/Users/ann", "/Users/ann/.fermix"]);
  });

  test("Mach services: only the named ones, never every service; the network's only with the network on", () => {
    for (const profile of [off, on]) {
      for (const rule of rules(profile).filter((r) => r.ops.includes("mach-lookup"))) {
        expect(rule.filters.length).toBeGreaterThan(0);
        for (const f of rule.filters) expect(f[0]).toBe("global-name");
      }
    }
    for (const name of MACH_SERVICES) expect(decide(off, lookup(name))).toBe("allow");
    for (const name of MACH_SERVICES_NETWORK) {
      expect(decide(off, lookup(name))).toBe("deny");
      expect(decide(on, lookup(name))).toBe("allow");
    }
    for (const name of ["com.apple.coreservices.launchservicesd", "com.apple.pasteboard.1", "com.apple.security.agent", "com.apple.windowserver.active"]) {
      expect(decide(on, lookup(name))).toBe("deny");
    }
    expect(
      rules(on)
        .filter((r) => r.ops.includes("file-read-metadata"))
        .every((r) => r.filters.length > 0),
    ).toBe(true);
  });

  test("Unix sockets: none reachable with the network off, granted folders included; with it on, only mDNSResponder's", () => {
    const granted = "/Users/ann/data/out/daemon.sock";
    for (const path of [granted, `${WS}/x.sock`, "/private/var/run/docker.sock", MDNS_SOCKET]) {
      expect(decide(off, connectUnix(path))).toBe("deny");
      expect(decide(off, bindUnix(path))).toBe("deny");
    }
    for (const path of [granted, `${WS}/x.sock`, "/private/var/run/docker.sock"]) {
      expect(decide(on, connectUnix(path))).toBe("deny");
      expect(decide(on, bindUnix(path))).toBe("deny");
    }
    expect(decide(on, connectUnix(MDNS_SOCKET))).toBe("allow");
    // Off, no network rule allows anything at all; on, IP networking is allowed.
    expect(rules(off).some((r) => r.action === "allow" && r.ops.some((op) => op.startsWith("network")))).toBe(false);
    expect(decide(on, { op: "network-outbound" })).toBe("allow");
    expect(decide(off, { op: "network-outbound" })).toBe("deny");
  });

  test("paths are quoted so no path can break out of its string", () => {
    expect(sbplString('/tmp/a"b\\c')).toBe('"/tmp/a\\"b\\\\c"');
    const evil = seatbeltProfile(policy({ grants: [{ path: '/srv/x") (allow default) ("', mode: "ro" }] }), "/tmp/x");
    expect(rules(evil).some((r) => r.action === "allow" && r.ops.includes("default"))).toBe(false);
    expect(decide(evil, read('/srv/x") (allow default) ("/file'))).toBe("allow");
    expect(decide(evil, read("/Users/ann/diary.txt"))).toBe("deny");
    expect(sandboxExecArgv("/usr/bin/sandbox-exec", "(version 1)", ["ls"])).toEqual(["/usr/bin/sandbox-exec", "-p", "(version 1)", "ls"]);
  });
});
