/**
 * The bubblewrap command line for one sandboxed command (Linux). The command
 * starts in a fresh root with every namespace unshared: the system's /usr,
 * /bin, /sbin, /lib* and /etc read-only, a private /proc, /dev and /tmp, the
 * workspace read-write (SOUL.md and skills/ read-only on top), grants as
 * granted, preset paths read-only — and nothing else: no other home files,
 * no other /tmp, no network unless the policy has it; the root itself is
 * read-only, so only the workspace, rw grants and the private /tmp take writes. All capabilities are
 * dropped, it dies with the daemon, and it cannot reach the daemon's
 * terminal (`--new-session`). Pure: the layout of the host is passed in.
 */
import type { SandboxPolicy } from "./policy.ts";

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
}

/** The arguments after `bwrap`. */
export function bwrapArgs(command: BwrapCommand): string[] {
  const { policy, layout } = command;
  const args = ["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"];
  if (policy.network) args.push("--share-net");
  args.push("--ro-bind", "/usr", "/usr");
  for (const dir of SYSTEM_DIRS) {
    const entry = layout[dir] ?? { kind: "missing" };
    if (entry.kind === "symlink") args.push("--symlink", entry.target, dir);
    else if (entry.kind === "dir") args.push("--ro-bind", dir, dir);
  }
  args.push("--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  if (policy.network) for (const path of command.networkPaths ?? []) args.push("--ro-bind-try", path, path);
  for (const path of policy.presetPaths) args.push("--ro-bind", path, path);
  args.push("--bind", policy.workspace, policy.workspace);
  for (const path of policy.readOnlyInWorkspace) args.push("--ro-bind", path, path);
  for (const grant of policy.grants) args.push(grant.mode === "rw" ? "--bind" : "--ro-bind", grant.path, grant.path);
  // The root holds only the mount points made above: nothing may be written into it.
  args.push("--remount-ro", "/", "--chdir", command.cwd, "--", ...command.argv);
  return args;
}
