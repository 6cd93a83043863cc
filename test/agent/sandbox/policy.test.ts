/**
 * The sandbox policy and the bubblewrap command line built from it, on data:
 * what bubblewrap is told to bind, who the command runs as, which /etc it
 * sees, where its filter comes from, and how the network and the environment
 * are decided. The macOS profile has its own file (seatbelt.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { type BwrapCommand, bwrapArgs, dataFiles, type SystemLayout } from "../../../src/agent/sandbox/bwrap.ts";
import type { EtcEntry } from "../../../src/agent/sandbox/etc.ts";
import { sandboxIdentity } from "../../../src/agent/sandbox/identity.ts";
import { buildPolicy, commandEnv, effectiveNetwork, isSecretName, type SandboxPolicy, usableGrants } from "../../../src/agent/sandbox/policy.ts";
import { findPreset } from "../../../src/agent/sandbox/presets.ts";
import { SANDBOX_FILTER_BYTES } from "../../../src/agent/sandbox/seccomp.ts";
import type { SandboxState } from "../../../src/store/sandbox.ts";

const WS = "/home/ann/.fermix/workspace";
const policy = (overrides: Partial<SandboxPolicy> = {}): SandboxPolicy => ({
  workspace: WS,
  readOnlyInWorkspace: [`${WS}/SOUL.md`, `${WS}/skills`],
  grants: [
    { path: "/srv/data", mode: "ro" },
    { path: "/srv/data/out", mode: "rw" },
  ],
  presetPaths: ["/home/ann/.gitconfig"],
  network: false,
  env: { PATH: "/usr/bin:/bin", HOME: WS },
  ...overrides,
});
const MERGED: SystemLayout = {
  "/bin": { kind: "symlink", target: "usr/bin" },
  "/sbin": { kind: "symlink", target: "usr/sbin" },
  "/lib": { kind: "symlink", target: "usr/lib" },
  "/lib64": { kind: "dir" },
};

/** The flag pairs and triples of an argv, joined, for reading. */
const pairs = (args: string[]) => args.join(" ");

/** A host's /etc entries as detect.ts reports them (Debian-like). */
const ETC: EtcEntry[] = [
  { name: "hosts", kind: "file" },
  { name: "ssl/certs", kind: "dir" },
  { name: "alternatives", kind: "dir" },
  { name: "localtime", kind: "symlink", target: "/usr/share/zoneinfo/Europe/Paris" },
  { name: "resolv.conf", kind: "symlink", target: "../run/systemd/resolve/stub-resolv.conf" },
];
const FDS = { passwd: 3, group: 4, nsswitch: 5, seccomp: 6 };
const OWNER = sandboxIdentity({ uid: 1001, gid: 1001, name: "ann", group: "ann" });
const ROOT = sandboxIdentity({ uid: 0, gid: 0, name: "root", group: "root" });
const command = (overrides: Partial<BwrapCommand> = {}): BwrapCommand => ({
  policy: policy(),
  cwd: WS,
  argv: ["ls", "-la"],
  layout: MERGED,
  etc: ETC,
  identity: OWNER,
  fds: FDS,
  ...overrides,
});

describe("bubblewrap", () => {
  test("system read-only, private /proc /dev /tmp, workspace writable with its read-only parts, grants outer before inner, no network", () => {
    const args = bwrapArgs(command());
    const line = pairs(args);
    expect(args.slice(0, 5)).toEqual(["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]);
    expect(args).not.toContain("--share-net");
    for (const part of [
      "--ro-bind /usr /usr",
      "--symlink usr/bin /bin",
      "--symlink usr/sbin /sbin",
      "--symlink usr/lib /lib",
      "--ro-bind /lib64 /lib64",
      "--proc /proc --dev /dev --tmpfs /tmp",
      "--ro-bind /home/ann/.gitconfig /home/ann/.gitconfig",
      `--bind ${WS} ${WS} --ro-bind ${WS}/SOUL.md ${WS}/SOUL.md --ro-bind ${WS}/skills ${WS}/skills`,
      "--ro-bind /srv/data /srv/data --bind /srv/data/out /srv/data/out",
      `--remount-ro / --chdir ${WS} -- ls -la`,
    ]) {
      expect(line).toContain(part);
    }
    // Nothing else of the home is bound, and /lib32 (absent here) is not mentioned.
    expect(line).not.toContain("--bind /home/ann ");
    expect(line).not.toContain("/lib32");
    // The workspace is bound after /tmp's tmpfs, or a workspace under /tmp would be hidden by it.
    expect(line.indexOf("--tmpfs /tmp")).toBeLessThan(line.indexOf(`--bind ${WS}`));
  });

  test("/etc is rebuilt from the listed entries (symlinks kept as links) and the generated files; never bound whole", () => {
    const line = pairs(bwrapArgs(command()));
    expect(line).not.toContain("--ro-bind /etc /etc");
    expect(line).not.toMatch(/--(ro-)?bind(-try)? \/etc /);
    expect(line).toContain("--ro-bind-try /etc/hosts /etc/hosts");
    expect(line).toContain("--ro-bind-try /etc/ssl/certs /etc/ssl/certs");
    expect(line).toContain("--ro-bind-try /etc/alternatives /etc/alternatives");
    expect(line).toContain("--symlink /usr/share/zoneinfo/Europe/Paris /etc/localtime");
    expect(line).toContain(
      "--perms 0644 --ro-bind-data 3 /etc/passwd --perms 0644 --ro-bind-data 4 /etc/group --perms 0644 --ro-bind-data 5 /etc/nsswitch.conf",
    );
    // resolv.conf only with the network on.
    expect(line).not.toContain("resolv.conf");
    expect(pairs(bwrapArgs(command({ policy: policy({ network: true }) })))).toContain("--symlink ../run/systemd/resolve/stub-resolv.conf /etc/resolv.conf");
  });

  test("the seccomp filter is read from its descriptor, after every mount and before the command", () => {
    const args = bwrapArgs(command());
    const at = args.indexOf("--seccomp");
    expect(args[at + 1]).toBe("6");
    expect(at).toBeGreaterThan(args.lastIndexOf("--bind"));
    expect(at).toBeLessThan(args.indexOf("--"));
    expect(args.filter((a) => a === "--seccomp")).toHaveLength(1);
  });

  test("the owner's daemon: commands keep its uid; a root daemon's commands are mapped to the unprivileged id", () => {
    const own = bwrapArgs(command());
    expect(own).not.toContain("--uid");
    expect(own).not.toContain("--unshare-user");
    const asRoot = bwrapArgs(command({ identity: ROOT }));
    expect(pairs(asRoot)).toContain("--unshare-all --unshare-user --uid 1000 --gid 1000 --cap-drop ALL");
    // The identity flags come before anything that runs inside the namespace.
    expect(asRoot.indexOf("--uid")).toBeLessThan(asRoot.indexOf("--ro-bind"));
  });

  test("the data files: passwd and group name the command's user with the workspace as home; the filter's bytes", () => {
    const files = dataFiles(ROOT, WS);
    expect(files.passwd).toBe(
      `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:${WS}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    );
    expect(files.group).toBe("root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
    expect(files.nsswitch).toContain("passwd: files\n");
    expect(files.nsswitch).toContain("hosts: files dns\n");
    expect(files.seccomp).toBe(SANDBOX_FILTER_BYTES);
  });

  test("with the network on it shares the network and binds where name resolution lives", () => {
    const args = bwrapArgs(command({ policy: policy({ network: true }), argv: ["true"], networkPaths: ["/run/systemd/resolve"] }));
    expect(args).toContain("--share-net");
    expect(pairs(args)).toContain("--ro-bind-try /run/systemd/resolve /run/systemd/resolve");
  });
});

describe("the policy", () => {
  const state = (overrides: Partial<SandboxState> = {}): SandboxState => ({ grants: [], env: [], presets: [], network: undefined, ...overrides });

  test("the network: the stored setting wins over the config default; a preset that needs it turns it on", () => {
    expect(effectiveNetwork(state(), false)).toBe(false);
    expect(effectiveNetwork(state(), true)).toBe(true);
    expect(effectiveNetwork(state({ network: false }), true)).toBe(false);
    expect(effectiveNetwork(state({ network: true }), false)).toBe(true);
    expect(effectiveNetwork(state({ network: false, presets: ["node"] }), false)).toBe(true);
    expect(effectiveNetwork(state({ presets: ["git"] }), false)).toBe(false);
  });

  test("the environment: fixed defaults, base names passed through, presets, then allow/set/deny; nothing else", () => {
    const daemonEnv = { LANG: "de_DE.UTF-8", OPENAI_API_KEY: "sk-x", GIT_AUTHOR_NAME: "Ann", EDITOR: "vim", TERM: "xterm" };
    const at = 0;
    const env = commandEnv({
      rules: [
        { name: "EDITOR", rule: "allow", changedBy: "t", changedAt: at },
        { name: "TERM", rule: "deny", changedBy: "t", changedAt: at },
        { name: "COLOR", rule: "set", value: "1", changedBy: "t", changedAt: at },
      ],
      presets: [findPreset("git")!, findPreset("node")!],
      daemonEnv,
      workspace: WS,
      homeDir: "/home/ann",
    });
    expect(env).toEqual({
      PATH: "/home/ann/.bun/bin:/home/ann/.volta/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
      HOME: WS,
      TMPDIR: "/tmp",
      LANG: "de_DE.UTF-8",
      GIT_AUTHOR_NAME: "Ann",
      GIT_TERMINAL_PROMPT: "0",
      npm_config_cache: "/tmp/.npm",
      npm_config_update_notifier: "false",
      EDITOR: "vim",
      COLOR: "1",
    });
  });

  test("grants that hold the Fermix home or lie in it, or no longer exist, are never used", () => {
    const grants = [
      { path: "/home/ann", mode: "ro" as const, grantedBy: "x", grantedAt: 0 },
      { path: "/home/ann/.fermix/fermix.db", mode: "rw" as const, grantedBy: "x", grantedAt: 0 },
      { path: "/gone", mode: "ro" as const, grantedBy: "x", grantedAt: 0 },
      { path: "/srv/data/out", mode: "rw" as const, grantedBy: "x", grantedAt: 0 },
      { path: "/srv/data", mode: "ro" as const, grantedBy: "x", grantedAt: 0 },
    ];
    expect(usableGrants(grants, "/home/ann/.fermix", (p) => p !== "/gone")).toEqual([
      { path: "/srv/data", mode: "ro" },
      { path: "/srv/data/out", mode: "rw" },
    ]);
    const built = buildPolicy({
      state: state({ grants }),
      networkDefault: false,
      workspace: WS,
      fermixHome: "/home/ann/.fermix",
      homeDir: "/home/ann",
      daemonEnv: {},
      exists: (p) => p !== "/gone",
    });
    expect(built.grants.map((g) => g.path)).toEqual(["/srv/data", "/srv/data/out"]);
  });

  test("secret-looking names", () => {
    for (const name of ["OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "SESSION_COOKIE", "SSH_AUTH_SOCK"])
      expect(isSecretName(name)).toBe(true);
    for (const name of ["EDITOR", "LANG", "PATH", "GREETING"]) expect(isSecretName(name)).toBe(false);
  });
});
