/**
 * Which OS sandbox this machine has for run_command: bubblewrap on Linux,
 * sandbox-exec on macOS, else none (and then run_command is not offered).
 * Also what the bubblewrap command line needs to know about the host (how
 * /bin and /lib* are laid out, where /etc/resolv.conf really lives) and a
 * probe that runs the sandbox once, for `fermix doctor`.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { SYSTEM_DIRS, type SystemLayout } from "./bwrap.ts";

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

/** Where name resolution's configuration lives when /etc/resolv.conf links out of /etc (systemd-resolved): bound with the network on. */
export function hostNetworkPaths(): string[] {
  try {
    const real = realpathSync("/etc/resolv.conf");
    return real.startsWith("/etc/") ? [] : [dirname(real)];
  } catch {
    return [];
  }
}

/** Run the sandbox once with nothing in it: ok, or why it does not work here (user namespaces off, a broken install). */
export function probeBackend(backend: SandboxBackend): { ok: true; version: string } | { ok: false; reason: string } {
  const argv =
    backend.kind === "bwrap"
      ? [backend.path, "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/sh", "-c", "exit 0"]
      : [backend.path, "-p", "(version 1)(allow default)", "/bin/sh", "-c", "exit 0"];
  try {
    const run = Bun.spawnSync(argv, { env: { PATH: "/usr/bin:/bin" }, stdout: "pipe", stderr: "pipe", timeout: 5000 });
    if (run.exitCode !== 0) return { ok: false, reason: run.stderr.toString().trim() || `exit code ${run.exitCode}` };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  if (backend.kind === "sandbox-exec") return { ok: true, version: "sandbox-exec" };
  const version = Bun.spawnSync([backend.path, "--version"], { stdout: "pipe", stderr: "pipe" }).stdout.toString().trim();
  return { ok: true, version: version || "bubblewrap" };
}
