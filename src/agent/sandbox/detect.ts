/**
 * Which OS sandbox this machine has for run_command: bubblewrap on Linux,
 * sandbox-exec on macOS, else none (and then run_command is not offered).
 * Also what the bubblewrap command line needs to know about the host (how
 * /bin and /lib* are laid out, which of /etc's usual entries it has, where
 * /etc/resolv.conf really lives, who the daemon runs as) and a probe that
 * runs the sandbox once, for `fermix doctor`.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { describeError } from "../../kernel/errors.ts";
import { dataFiles, identityArgs, SYSTEM_DIRS, type SystemLayout } from "./bwrap.ts";
import { type EtcEntry, etcCandidates } from "./etc.ts";
import { openDataFiles } from "./fds.ts";
import { type HostUser, type SandboxIdentity, sandboxIdentity } from "./identity.ts";

export type SandboxBackend = { kind: "bwrap"; path: string } | { kind: "sandbox-exec"; path: string };

/** How to get bubblewrap, for doctor and for the model's "not available" answers. */
export const INSTALL_BWRAP =
  "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)";

/** The sandbox for this platform, found on `PATH` (sandbox-exec at its fixed place); null when there is none. */
export function detectBackend(platform: NodeJS.Platform = process.platform, path: string | undefined = process.env.PATH): SandboxBackend | null {
  if (platform === "linux") {
    const found = Bun.which("bwrap", { PATH: path ?? "" });
    return found ? { kind: "bwrap", path: found } : null;
  }
  if (platform === "darwin") {
    const found = Bun.which("sandbox-exec", { PATH: `${path ?? ""}:/usr/bin` });
    return found ? { kind: "sandbox-exec", path: found } : null;
  }
  return null;
}

/** How this host's /bin, /sbin and /lib* look (symlinks into /usr on merged-/usr systems). */
export function hostLayout(): SystemLayout {
  const layout: Record<string, SystemLayout[string]> = {};
  for (const dir of SYSTEM_DIRS) {
    try {
      const stat = lstatSync(dir);
      layout[dir] = stat.isSymbolicLink() ? { kind: "symlink", target: readlinkSync(dir) } : stat.isDirectory() ? { kind: "dir" } : { kind: "missing" };
    } catch {
      layout[dir] = { kind: "missing" };
    }
  }
  return layout;
}

/** Which of the /etc entries a command may see this host has, and how (etc.ts). */
export function hostEtc(): EtcEntry[] {
  let topLevel: string[] = [];
  try {
    topLevel = readdirSync("/etc");
  } catch {
    // no /etc to list: only the fixed names are looked at
  }
  const entries: EtcEntry[] = [];
  for (const name of etcCandidates(topLevel)) {
    try {
      const stat = lstatSync(`/etc/${name}`);
      if (stat.isSymbolicLink()) entries.push({ name, kind: "symlink", target: readlinkSync(`/etc/${name}`) });
      else if (stat.isDirectory()) entries.push({ name, kind: "dir" });
      else if (stat.isFile()) entries.push({ name, kind: "file" });
    } catch {
      // not on this host
    }
  }
  return entries;
}

/** Who the daemon runs as: ids from the process, names from /etc/passwd and /etc/group when they have them. */
export function hostUser(): HostUser {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  return { uid, gid, name: accountName("/etc/passwd", uid), group: accountName("/etc/group", gid) };
}

/** The name of the entry with id `id` in a passwd-format file (name:password:id:…), if it is there. */
function accountName(file: string, id: number): string | undefined {
  try {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const [name, , entryId] = line.split(":");
      if (name && entryId === String(id)) return name;
    }
  } catch {
    // not readable: the identity falls back to a fixed name
  }
  return undefined;
}

/** Where name resolution's configuration lives when /etc/resolv.conf links out of /etc (systemd-resolved): bound with the network on. */
export function hostNetworkPaths(): string[] {
  try {
    const real = realpathSync("/etc/resolv.conf");
    return real.startsWith("/etc/") ? [] : [dirname(real)];
  } catch {
    return [];
  }
}

/**
 * Run the sandbox once with nothing in it, as commands will run (the same
 * user mapping, the same seccomp filter): ok, or why it does not work here
 * (user namespaces off, seccomp missing, a broken install).
 */
export function probeBackend(
  backend: SandboxBackend,
  identity: SandboxIdentity = sandboxIdentity(hostUser()),
): { ok: true; version: string } | { ok: false; reason: string } {
  const data = backend.kind === "bwrap" ? openDataFiles(dataFiles(identity, "/")) : undefined;
  const argv = data
    ? [
        backend.path,
        "--die-with-parent",
        "--unshare-all",
        ...identityArgs(identity),
        "--ro-bind",
        "/",
        "/",
        "--seccomp",
        String(data.fds.seccomp),
        "--",
        "/bin/sh",
        "-c",
        "exit 0",
      ]
    : [backend.path, "-p", "(version 1)(allow default)", "/bin/sh", "-c", "exit 0"];
  try {
    const run = Bun.spawnSync(argv, { env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "pipe", "pipe", ...(data?.stdio ?? [])], timeout: 5000 });
    if (run.exitCode !== 0) return { ok: false, reason: run.stderr?.toString().trim() || `exit code ${run.exitCode}` };
  } catch (error) {
    return { ok: false, reason: describeError(error) };
  } finally {
    data?.close();
  }
  if (backend.kind === "sandbox-exec") return { ok: true, version: "sandbox-exec" };
  const version = Bun.spawnSync([backend.path, "--version"], { stdout: "pipe", stderr: "pipe" }).stdout.toString().trim();
  return { ok: true, version: version || "bubblewrap" };
}
