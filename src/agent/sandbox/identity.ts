/**
 * Who a sandboxed command runs as, and the passwd and group files it sees.
 *
 * The daemon normally runs as its owner's user: a command keeps that uid
 * and gid (bubblewrap maps them to themselves in its user namespace), so
 * the owner's files in a grant look like their own. Run as root, the daemon
 * makes bubblewrap map root to an unprivileged id, `SANDBOX_ID` (1000,
 * named "sandbox"), with every capability dropped: the command is no longer
 * uid 0 to itself or to any program it starts, and it cannot override a
 * file's permissions. The kernel still checks its file access as root's
 * owner bits, which is why /etc is rebuilt with only what programs need
 * (etc.ts) rather than bound whole. sandbox-exec on macOS cannot change the
 * uid: there a root daemon runs its commands as root, inside the profile.
 *
 * The passwd and group files hold that one user and group, root, and
 * nobody/nogroup (what files owned by ids outside the namespace show as), so
 * `whoami`, `id` and `ls -l` print names. Pure.
 */

/** The uid and gid a root daemon's commands get: unprivileged, the same on every machine. */
export const SANDBOX_ID = 1000;
export const SANDBOX_NAME = "sandbox";
/** What files owned by an id outside the user namespace show as (the kernel's overflow id). */
export const OVERFLOW_ID = 65534;

export interface HostUser {
  uid: number;
  gid: number;
  /** The daemon's user name, when the system knows one. */
  name?: string;
  /** Its primary group's name, when the system knows one. */
  group?: string;
}

export interface SandboxIdentity {
  uid: number;
  gid: number;
  user: string;
  group: string;
  /** Whether bubblewrap must map the daemon's uid to another (`--unshare-user --uid --gid`): only when the daemon is root. */
  remapped: boolean;
}

/** Who commands run as, for a daemon running as `host`. */
export function sandboxIdentity(host: HostUser): SandboxIdentity {
  if (host.uid === 0) return { uid: SANDBOX_ID, gid: SANDBOX_ID, user: SANDBOX_NAME, group: SANDBOX_NAME, remapped: true };
  const user = host.name && isAccountName(host.name) ? host.name : SANDBOX_NAME;
  const group = host.group && isAccountName(host.group) ? host.group : user;
  return { uid: host.uid, gid: host.gid, user, group, remapped: false };
}

/** A name safe in a colon-separated passwd line. */
function isAccountName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/.test(name);
}

/** The sandbox's /etc/passwd: root, the command's user (home: the workspace), nobody. */
export function passwdFile(identity: SandboxIdentity, home: string): string {
  const lines = new Map<number, string>();
  lines.set(0, "root:x:0:0:root:/root:/usr/sbin/nologin");
  lines.set(identity.uid, `${identity.user}:x:${identity.uid}:${identity.gid}:${identity.user}:${home.replace(/[:\n]/g, "")}:/bin/sh`);
  if (!lines.has(OVERFLOW_ID)) lines.set(OVERFLOW_ID, `nobody:x:${OVERFLOW_ID}:${OVERFLOW_ID}:nobody:/nonexistent:/usr/sbin/nologin`);
  return `${[...lines.values()].join("\n")}\n`;
}

/** The sandbox's /etc/group: root, the command's group, nogroup. */
export function groupFile(identity: SandboxIdentity): string {
  const lines = new Map<number, string>();
  lines.set(0, "root:x:0:");
  lines.set(identity.gid, `${identity.group}:x:${identity.gid}:`);
  if (!lines.has(OVERFLOW_ID)) lines.set(OVERFLOW_ID, `nogroup:x:${OVERFLOW_ID}:`);
  return `${[...lines.values()].join("\n")}\n`;
}

/**
 * The warning for a daemon run as root (doctor's row and `fermix run`'s
 * first lines), or undefined for any other user.
 */
export function rootWarning(uid: number, platform: NodeJS.Platform): string | undefined {
  if (uid !== 0) return undefined;
  const commands =
    platform === "darwin"
      ? "run_command's commands run as root too (sandbox-exec cannot change the user)"
      : `run_command's commands run as uid ${SANDBOX_ID} (${SANDBOX_NAME}) in the sandbox, but the daemon itself holds every right on this machine`;
  return `fermix runs as root: ${commands}; run it as an ordinary user`;
}
