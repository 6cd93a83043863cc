/**
 * The bubblewrap command line for one sandboxed command (Linux). The command
 * starts in a fresh root with every namespace unshared: the system's /usr,
 * /bin, /sbin and /lib* read-only, a minimal /etc (etc.ts: what programs
 * need, with generated passwd, group and nsswitch.conf), a private /proc,
 * /dev and /tmp, the workspace read-write (SOUL.md and skills/ read-only on
 * top), grants as granted, preset paths read-only — and nothing else: no
 * other home files, no other /tmp, no network unless the policy has it; the
 * root itself is read-only, so only the workspace, rw grants and the
 * private /tmp take writes. It runs as an unprivileged user when the daemon
 * is root (identity.ts), with every capability dropped, under a seccomp
 * filter that refuses Unix sockets (seccomp.ts); it dies with the daemon,
 * and it cannot reach the daemon's terminal (`--new-session`).
 *
 * The generated files and the filter reach bubblewrap as file descriptors
 * the caller opens (`DataFds`): bubblewrap reads each once at start. Pure:
 * the host's layout, /etc entries and descriptor numbers are passed in.
 */
import { type EtcEntry, etcArgs, NSSWITCH_CONF } from "./etc.ts";
import { groupFile, passwdFile, type SandboxIdentity } from "./identity.ts";
import type { SandboxPolicy } from "./policy.ts";
import { SANDBOX_FILTER_BYTES } from "./seccomp.ts";

/** How one top-level system directory looks on this host. */
export type SystemEntry = { kind: "dir" } | { kind: "symlink"; target: string } | { kind: "missing" };

/** The host's /bin, /sbin, /lib… (merged-/usr systems have them as symlinks into /usr). */
export type SystemLayout = Readonly<Record<string, SystemEntry>>;

/** The system directories a command sees, read-only, besides /usr and /etc. */
export const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] as const;

export interface BwrapCommand {
  policy: SandboxPolicy;
  /** Real path inside the workspace or a grant. */
  cwd: string;
  argv: readonly string[];
  layout: SystemLayout;
  /** Extra read-only paths the network needs (where /etc/resolv.conf really lives), used only with the network on. */
  networkPaths?: readonly string[];
  /** The host's entries of the /etc list (etc.ts). */
  etc: readonly EtcEntry[];
  identity: SandboxIdentity;
  /** Where bubblewrap reads the generated files and the filter from. */
  fds: DataFds;
}

/** What bubblewrap reads from descriptors, in the order they are handed over. */
export const DATA_FILES = ["passwd", "group", "nsswitch", "seccomp"] as const;
export type DataFile = (typeof DATA_FILES)[number];
/** The descriptor number bubblewrap reads each data file from. */
export type DataFds = Readonly<Record<DataFile, number>>;

/** The contents of the data files for a command running as `identity` with `home` as its home. */
export function dataFiles(identity: SandboxIdentity, home: string): Record<DataFile, string | Uint8Array> {
  return { passwd: passwdFile(identity, home), group: groupFile(identity), nsswitch: NSSWITCH_CONF, seccomp: SANDBOX_FILTER_BYTES };
}

/** The identity arguments: a root daemon's commands are mapped to the unprivileged id; anyone else's keep their own. */
export function identityArgs(identity: SandboxIdentity): string[] {
  return identity.remapped ? ["--unshare-user", "--uid", String(identity.uid), "--gid", String(identity.gid)] : [];
}

/** The arguments after `bwrap`. */
export function bwrapArgs(command: BwrapCommand): string[] {
  const { policy, layout, fds } = command;
  const args = ["--die-with-parent", "--new-session", "--unshare-all", ...identityArgs(command.identity), "--cap-drop", "ALL"];
  if (policy.network) args.push("--share-net");
  args.push("--ro-bind", "/usr", "/usr");
  for (const dir of SYSTEM_DIRS) {
    const entry = layout[dir] ?? { kind: "missing" };
    if (entry.kind === "symlink") args.push("--symlink", entry.target, dir);
    else if (entry.kind === "dir") args.push("--ro-bind", dir, dir);
  }
  args.push(...etcArgs(command.etc, policy.network));
  // Readable by everyone, as on any system (bubblewrap's default for data files is 0600).
  for (const [file, path] of [
    ["passwd", "/etc/passwd"],
    ["group", "/etc/group"],
    ["nsswitch", "/etc/nsswitch.conf"],
  ] as const) {
    args.push("--perms", "0644", "--ro-bind-data", String(fds[file]), path);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  if (policy.network) for (const path of command.networkPaths ?? []) args.push("--ro-bind-try", path, path);
  for (const path of policy.presetPaths) args.push("--ro-bind", path, path);
  args.push("--bind", policy.workspace, policy.workspace);
  for (const path of policy.readOnlyInWorkspace) args.push("--ro-bind", path, path);
  for (const grant of policy.grants) args.push(grant.mode === "rw" ? "--bind" : "--ro-bind", grant.path, grant.path);
  args.push("--seccomp", String(fds.seccomp));
  // The root holds only the mount points made above: nothing may be written into it.
  args.push("--remount-ro", "/", "--chdir", command.cwd, "--", ...command.argv);
  return args;
}
