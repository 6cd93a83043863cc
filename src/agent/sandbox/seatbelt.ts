/**
 * The macOS sandbox for one command: a Seatbelt profile for `sandbox-exec`,
 * generated from the policy. Everything is denied but what is listed: the
 * system's binaries, libraries and /etc read-only, the workspace read-write
 * (SOUL.md and skills/ read-only), grants as granted, preset paths
 * read-only, a private temporary directory for this command, and the
 * network only when the policy has it. Later rules win in SBPL, so the
 * read-only carve-outs come after the read-write paths they sit in. Pure.
 */
import type { SandboxPolicy } from "./policy.ts";

/** System locations a macOS command may read: binaries, libraries, frameworks, configuration. */
export const MACOS_SYSTEM_READ = [
  "/usr",
  "/bin",
  "/sbin",
  "/System",
  "/Library",
  "/private/etc",
  "/etc",
  "/private/var/db/timezone",
  "/opt/homebrew",
  "/dev",
] as const;

/** A path as an SBPL string literal. */
export function sbplString(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

const subpath = (path: string) => `(subpath ${sbplString(path)})`;
const literal = (path: string) => `(literal ${sbplString(path)})`;

/** The profile text for `sandbox-exec -p`. `tmpDir` is this command's private temporary directory (its TMPDIR). */
export function seatbeltProfile(policy: SandboxPolicy, tmpDir: string): string {
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-fork)",
    "(allow process-exec)",
    "(allow signal (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm)",
    // Walking up to a directory needs its metadata; its contents stay unreadable.
    "(allow file-read-metadata)",
    `(allow file-read* ${literal("/")} ${MACOS_SYSTEM_READ.map(subpath).join(" ")})`,
    `(allow file-write* ${literal("/dev/null")} ${literal("/dev/tty")} (regex #"^/dev/fd/"))`,
    `(allow file-read* file-write* ${subpath(tmpDir)})`,
    ...policy.presetPaths.map((path) => `(allow file-read* ${subpath(path)})`),
    `(allow file-read* file-write* ${subpath(policy.workspace)})`,
  ];
  if (policy.readOnlyInWorkspace.length > 0) lines.push(`(deny file-write* ${policy.readOnlyInWorkspace.map(subpath).join(" ")})`);
  for (const grant of policy.grants) {
    lines.push(grant.mode === "rw" ? `(allow file-read* file-write* ${subpath(grant.path)})` : `(allow file-read* ${subpath(grant.path)})`);
    if (grant.mode === "ro") lines.push(`(deny file-write* ${subpath(grant.path)})`);
  }
  if (policy.network) lines.push("(allow network*)");
  return `${lines.join("\n")}\n`;
}

/** The full argv: sandbox-exec with the profile, then the command. */
export function sandboxExecArgv(sandboxExec: string, profile: string, argv: readonly string[]): string[] {
  return [sandboxExec, "-p", profile, ...argv];
}
