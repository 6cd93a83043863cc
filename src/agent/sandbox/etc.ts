/**
 * The /etc a sandboxed command sees on Linux: rebuilt from a short list of
 * what ordinary programs read, never the host's whole /etc. A command — even
 * one whose daemon runs as root, where the kernel checks file access with
 * root's owner bits — finds no /etc/shadow, gshadow, sudoers, ssh host
 * keys, TLS private keys (/etc/ssl/private, /etc/pki/tls/private), machine
 * id or any other configuration beyond these:
 *
 * - generated: passwd and group (identity.ts), nsswitch.conf (files, and
 *   DNS for hosts: no module that would ask a daemon over a socket);
 * - name resolution tables: hosts, host.conf, gai.conf, networks,
 *   protocols, services, rpc, ethertypes; resolv.conf only with the network;
 * - TLS trust: /etc/ssl/certs and openssl.cnf, /etc/ca-certificates,
 *   /etc/pki/ca-trust and /etc/pki/tls/certs, /etc/crypto-policies;
 * - the dynamic loader: ld.so.cache, ld.so.conf, ld.so.conf.d;
 * - /etc/alternatives (Debian's awk, editor, … go through it);
 * - time and locale: localtime, timezone, locale.alias, locale.conf;
 * - which system this is: os-release and the distributions' *-release files;
 * - shells: shells, profile, profile.d, bash.bashrc, bashrc, inputrc;
 * - system-wide settings of common tools: gitconfig, magic, mime.types,
 *   fonts, ImageMagick, terminfo, xdg, perl, python3*, mtab, and the ssh
 *   client's ssh_config and known hosts.
 *
 * A symlink stays a symlink (/etc/localtime names its zone, /etc/alternatives
 * points into /usr); what the host lacks is skipped. Pure: the host's
 * entries are read by detect.ts.
 */

/** Paths under /etc passed through read-only where the host has them. */
export const ETC_PASSTHROUGH = [
  "hosts",
  "host.conf",
  "gai.conf",
  "networks",
  "protocols",
  "services",
  "rpc",
  "ethertypes",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ssl/cert.pem",
  "ca-certificates",
  "ca-certificates.conf",
  "pki/ca-trust",
  "pki/tls/certs",
  "pki/tls/cert.pem",
  "pki/tls/openssl.cnf",
  "crypto-policies",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "alternatives",
  "localtime",
  "timezone",
  "locale.alias",
  "locale.conf",
  "os-release",
  "lsb-release",
  "debian_version",
  "redhat-release",
  "fedora-release",
  "system-release",
  "alpine-release",
  "arch-release",
  "shells",
  "profile",
  "profile.d",
  "bash.bashrc",
  "bashrc",
  "inputrc",
  "gitconfig",
  "magic",
  "magic.mime",
  "mime.types",
  "fonts",
  "ImageMagick-6",
  "ImageMagick-7",
  "terminfo",
  "xdg",
  "perl",
  "python3",
  "mtab",
  "ssh/ssh_config",
  "ssh/ssh_config.d",
  "ssh/ssh_known_hosts",
] as const;

/** Names at the top of /etc passed through by pattern: a version's own folder (Debian's /etc/python3.11). */
export const ETC_PASSTHROUGH_PATTERN = /^python3\.\d+$/;

/** Passed through only when the command has the network. */
export const ETC_NETWORK_ONLY = ["resolv.conf"] as const;

/** Never passed through, whatever a list above says: a test holds the lists to this. */
export const ETC_NEVER = [
  "shadow",
  "gshadow",
  "sudoers",
  "sudoers.d",
  "ssh/ssh_host_",
  "ssl/private",
  "pki/tls/private",
  "machine-id",
  "security",
  "pam.d",
] as const;

/** The sandbox's nsswitch.conf: local files for accounts, and DNS for host names. */
export const NSSWITCH_CONF = [
  "passwd: files",
  "group: files",
  "shadow: files",
  "hosts: files dns",
  "networks: files",
  "protocols: files",
  "services: files",
  "ethers: files",
  "rpc: files",
  "",
].join("\n");

/** One path under /etc as the host has it: `name` relative to /etc. */
export type EtcEntry = { name: string; kind: "file" | "dir" } | { name: string; kind: "symlink"; target: string };

/** The bubblewrap arguments that build /etc from the host's entries (the generated files are added by the caller). */
export function etcArgs(entries: readonly EtcEntry[], network: boolean): string[] {
  const args: string[] = [];
  for (const entry of entries) {
    if (!network && (ETC_NETWORK_ONLY as readonly string[]).includes(entry.name)) continue;
    const path = `/etc/${entry.name}`;
    if (entry.kind === "symlink") args.push("--symlink", entry.target, path);
    else args.push("--ro-bind-try", path, path);
  }
  return args;
}

/** The names the host is asked about: the fixed list, the network-only ones, and the top-level names that match the pattern. */
export function etcCandidates(topLevel: readonly string[]): string[] {
  return [...ETC_PASSTHROUGH, ...ETC_NETWORK_ONLY, ...topLevel.filter((name) => ETC_PASSTHROUGH_PATTERN.test(name)).sort()];
}
