/**
 * The macOS sandbox for one command: a Seatbelt profile for `sandbox-exec`,
 * generated from the policy. Everything is denied but what is listed, and
 * every list is named here:
 *
 * - files: the system's binaries and libraries read-only (/usr, /bin,
 *   /sbin, /System, Homebrew, and the parts of /Library that hold
 *   toolchains), a short list of /etc entries (hosts, passwd, group, TLS
 *   certificates, shell start-up files… never master.passwd, sudoers or ssh
 *   host keys), a few devices (/dev/null, /dev/urandom, the terminal, the
 *   command's own descriptors — never a disk), the workspace read-write
 *   (SOUL.md and skills/ read-only), grants as granted, preset paths
 *   read-only, and a private temporary directory for this command;
 * - metadata (stat, following a link) only of those and of the folders on
 *   the way down to them, and of the system's top-level links (/etc, /tmp,
 *   /var): nothing else can even be listed;
 * - Mach services: only those libSystem needs to look up users and groups,
 *   log and find its temporary folder; with the network on, also those that
 *   resolve names and check TLS certificates;
 * - the network only when the policy has it, and never a Unix socket (as on
 *   Linux): connecting to or binding one is refused either way, but for
 *   mDNSResponder's, through which macOS resolves host names, with the
 *   network on.
 *
 * sandbox-exec cannot change the user: commands run as the daemon's user
 * (identity.ts). Later rules win in SBPL, so the read-only carve-outs come
 * after the read-write paths they sit in, and the Unix-socket refusals after
 * the network allowance. Pure.
 */
import type { SandboxPolicy } from "./policy.ts";

/** System locations a macOS command may read: binaries, libraries, frameworks, toolchains, time zones. */
export const MACOS_SYSTEM_READ = [
  "/usr",
  "/bin",
  "/sbin",
  "/System",
  "/Library/Apple",
  "/Library/Developer/CommandLineTools",
  "/Library/Frameworks",
  "/Library/Java/JavaVirtualMachines",
  "/opt/homebrew",
  "/private/var/db/timezone",
] as const;

/** Entries of /private/etc a command may read (folders as subpaths). */
export const MACOS_ETC_READ = [
  "hosts",
  "passwd",
  "group",
  "protocols",
  "services",
  "shells",
  "localtime",
  "ssl/cert.pem",
  "ssl/certs",
  "ssl/openssl.cnf",
  "zshenv",
  "zprofile",
  "zshrc",
  "zlogin",
  "profile",
  "bashrc",
  "paths",
  "paths.d",
  "manpaths",
  "manpaths.d",
  "gitconfig",
  "ssh/ssh_config",
  "ssh/ssh_config.d",
  "ssh/ssh_known_hosts",
] as const;

/** Devices a command may read (and the ones in `MACOS_DEV_WRITE`, write). */
export const MACOS_DEV_READ = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"] as const;
export const MACOS_DEV_WRITE = ["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"] as const;

/** Links at the top of the system a path may go through (to /private/…), and the folders they lead to: metadata only. */
export const MACOS_TOP_LINKS = ["/", "/etc", "/tmp", "/var", "/private", "/private/etc", "/private/var", "/dev"] as const;

/** Mach services every command may look up: users and groups (libinfo, membership), notifications, logging, its temp folder. */
export const MACH_SERVICES = [
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.opendirectoryd.membership",
  "com.apple.system.DirectoryService.libinfo_v1",
  "com.apple.system.notification_center",
  "com.apple.system.logger",
  "com.apple.logd",
  "com.apple.diagnosticd",
  "com.apple.bsd.dirhelper",
] as const;

/** With the network on, also: name resolution and network configuration, TLS trust. */
export const MACH_SERVICES_NETWORK = [
  "com.apple.dnssd.service",
  "com.apple.SystemConfiguration.configd",
  "com.apple.SystemConfiguration.DNSConfiguration",
  "com.apple.networkd",
  "com.apple.SecurityServer",
  "com.apple.trustd",
  "com.apple.trustd.agent",
  "com.apple.ocspd",
] as const;

/** The Unix socket macOS resolves host names through: the one reachable, with the network on only. */
export const MDNS_SOCKET = "/private/var/run/mDNSResponder";
/** Where /etc/resolv.conf leads on macOS: readable with the network on. */
export const MACOS_RESOLV_CONF = "/private/var/run/resolv.conf";

/** A path as an SBPL string literal. */
export function sbplString(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

const subpath = (path: string) => `(subpath ${sbplString(path)})`;
const literal = (path: string) => `(literal ${sbplString(path)})`;
const globalName = (name: string) => `(global-name ${sbplString(name)})`;

/** The folders above `path`, outermost first, without the root: /a/b/c → /a, /a/b. */
export function ancestors(path: string): string[] {
  const parts = path.split("/").filter(Boolean);
  return parts.slice(0, -1).map((_, i) => `/${parts.slice(0, i + 1).join("/")}`);
}

/** The profile text for `sandbox-exec -p`. `tmpDir` is this command's private temporary directory (its TMPDIR). */
export function seatbeltProfile(policy: SandboxPolicy, tmpDir: string): string {
  const reachable = [tmpDir, policy.workspace, ...policy.presetPaths, ...policy.grants.map((g) => g.path)];
  const metadata = [...new Set([...MACOS_TOP_LINKS, ...reachable.flatMap(ancestors)])];
  const etc = MACOS_ETC_READ.map((name) => `/private/etc/${name}`);
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-fork)",
    "(allow process-exec)",
    "(allow signal (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow ipc-posix-shm)",
    `(allow mach-lookup ${MACH_SERVICES.map(globalName).join(" ")})`,
    // Walking down to a path needs each folder's metadata; their contents stay unlisted.
    `(allow file-read-metadata ${metadata.map(literal).join(" ")})`,
    // The root's own entries may be listed (getcwd and shells walk it); nothing below it by that.
    `(allow file-read* ${literal("/")})`,
    `(allow file-read* ${MACOS_SYSTEM_READ.map(subpath).join(" ")})`,
    `(allow file-read* ${etc.map(subpath).join(" ")})`,
    `(allow file-read* ${MACOS_DEV_READ.map(literal).join(" ")} (subpath "/dev/fd"))`,
    `(allow file-write* ${MACOS_DEV_WRITE.map(literal).join(" ")} (regex #"^/dev/fd/"))`,
    `(allow file-read* file-write* ${subpath(tmpDir)})`,
    ...policy.presetPaths.map((path) => `(allow file-read* ${subpath(path)})`),
    `(allow file-read* file-write* ${subpath(policy.workspace)})`,
  ];
  if (policy.readOnlyInWorkspace.length > 0) lines.push(`(deny file-write* ${policy.readOnlyInWorkspace.map(subpath).join(" ")})`);
  for (const grant of policy.grants) {
    lines.push(grant.mode === "rw" ? `(allow file-read* file-write* ${subpath(grant.path)})` : `(allow file-read* ${subpath(grant.path)})`);
    if (grant.mode === "ro") lines.push(`(deny file-write* ${subpath(grant.path)})`);
  }
  if (policy.network) {
    lines.push(
      "(allow network*)",
      `(allow mach-lookup ${MACH_SERVICES_NETWORK.map(globalName).join(" ")})`,
      `(allow file-read* ${literal(MACOS_RESOLV_CONF)})`,
    );
  }
  // Never a Unix socket, in a grant or anywhere (already denied by default with the network off; said for both).
  lines.push("(deny network-outbound (remote unix-socket))", "(deny network-bind (local unix-socket))");
  if (policy.network) lines.push(`(allow network-outbound (remote unix-socket (path-literal ${sbplString(MDNS_SOCKET)})))`);
  return `${lines.join("\n")}\n`;
}

/** The full argv: sandbox-exec with the profile, then the command. */
export function sandboxExecArgv(sandboxExec: string, profile: string, argv: readonly string[]): string[] {
  return [sandboxExec, "-p", profile, ...argv];
}
