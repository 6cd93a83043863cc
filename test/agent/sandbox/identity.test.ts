/**
 * Who a command runs as and what its /etc holds, on data: a root daemon's
 * commands get the unprivileged id, an ordinary daemon's keep its own; the
 * generated passwd and group; the /etc list never names a secret; and the
 * root warning doctor and `fermix run` show.
 */
import { describe, expect, test } from "bun:test";
import { ETC_NETWORK_ONLY, ETC_NEVER, ETC_PASSTHROUGH, etcArgs, etcCandidates } from "../../../src/agent/sandbox/etc.ts";
import { groupFile, passwdFile, rootWarning, SANDBOX_ID, sandboxIdentity } from "../../../src/agent/sandbox/identity.ts";

describe("the command's identity", () => {
  test("a root daemon's commands are mapped to the unprivileged id, named sandbox", () => {
    expect(sandboxIdentity({ uid: 0, gid: 0, name: "root", group: "root" })).toEqual({
      uid: SANDBOX_ID,
      gid: SANDBOX_ID,
      user: "sandbox",
      group: "sandbox",
      remapped: true,
    });
    expect(SANDBOX_ID).not.toBe(0);
  });

  test("an ordinary daemon's commands keep its uid, gid and names; an unknown or unsafe name falls back", () => {
    expect(sandboxIdentity({ uid: 1001, gid: 100, name: "ann", group: "users" })).toEqual({
      uid: 1001,
      gid: 100,
      user: "ann",
      group: "users",
      remapped: false,
    });
    expect(sandboxIdentity({ uid: 1001, gid: 1001 })).toMatchObject({ user: "sandbox", group: "sandbox" });
    // A name that would break the colon-separated files is not used.
    expect(sandboxIdentity({ uid: 1001, gid: 1001, name: "ann:x:0:0", group: "g\nroot" })).toMatchObject({ user: "sandbox", group: "sandbox" });
  });

  test("passwd and group: root, the command's user with the workspace as home, nobody; the home cannot add a field or a line", () => {
    const root = sandboxIdentity({ uid: 0, gid: 0 });
    expect(passwdFile(root, "/home/ann/.fermix/workspace").split("\n")).toEqual([
      "root:x:0:0:root:/root:/usr/sbin/nologin",
      "sandbox:x:1000:1000:sandbox:/home/ann/.fermix/workspace:/bin/sh",
      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
      "",
    ]);
    expect(groupFile(root)).toBe("root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
    expect(passwdFile(root, "/w:0:0\nevil:x:0:0::/:/bin/sh").split("\n")).toHaveLength(4);
    // A daemon running as nobody itself: one line for the id, not two.
    const nobody = sandboxIdentity({ uid: 65534, gid: 65534, name: "nobody", group: "nogroup" });
    expect(passwdFile(nobody, "/w").match(/:65534:/g)).toHaveLength(1);
    expect(groupFile(nobody).match(/:65534:/g)).toHaveLength(1);
  });

  test("the root warning: said for uid 0 only, naming who commands run as on each platform", () => {
    expect(rootWarning(1000, "linux")).toBeUndefined();
    expect(rootWarning(0, "linux")).toBe(
      "fermix runs as root: run_command's commands run as uid 1000 (sandbox) in the sandbox, but the daemon itself holds every right on this machine; run it as an ordinary user",
    );
    expect(rootWarning(0, "darwin")).toContain("run as root too");
  });
});

describe("the sandbox's /etc", () => {
  test("no listed entry is, holds or lies in a secret: shadow, sudoers, host keys, private keys, machine id, PAM", () => {
    const listed = etcCandidates(["python3.11", "shadow", "sudoers", "python3.12"]);
    expect(listed).toContain("python3.11");
    expect(listed).toContain("python3.12");
    for (const name of listed) {
      for (const never of ETC_NEVER) {
        expect(name.startsWith(never)).toBe(false);
        // Nor a folder that holds one (binding "ssl" would expose ssl/private).
        expect(never.startsWith(`${name}/`)).toBe(false);
      }
    }
    expect(listed).not.toContain("passwd");
    expect(listed).not.toContain("group");
  });

  test("what common programs need is on the list", () => {
    for (const needed of ["hosts", "ssl/certs", "ld.so.cache", "ld.so.conf.d", "alternatives", "localtime", "os-release", "ca-certificates", "pki/ca-trust"]) {
      expect(ETC_PASSTHROUGH as readonly string[]).toContain(needed);
    }
    expect(ETC_NETWORK_ONLY as readonly string[]).toEqual(["resolv.conf"]);
  });

  test("files and folders are bound read-only (if still there), symlinks recreated, resolv.conf only with the network", () => {
    const entries = [
      { name: "hosts", kind: "file" as const },
      { name: "alternatives", kind: "dir" as const },
      { name: "os-release", kind: "symlink" as const, target: "../usr/lib/os-release" },
      { name: "resolv.conf", kind: "file" as const },
    ];
    expect(etcArgs(entries, false)).toEqual([
      "--ro-bind-try",
      "/etc/hosts",
      "/etc/hosts",
      "--ro-bind-try",
      "/etc/alternatives",
      "/etc/alternatives",
      "--symlink",
      "../usr/lib/os-release",
      "/etc/os-release",
    ]);
    expect(etcArgs(entries, true).slice(-3)).toEqual(["--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"]);
  });
});
