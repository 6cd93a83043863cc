/**
 * Whose process is at the other end of a TCP connection from this machine:
 * on Linux, the kernel lists every TCP socket with its owner's uid in
 * /proc/net/tcp and /proc/net/tcp6, so the client's side of a loopback
 * connection (its address and port, as the server sees them) names the
 * account that opened it. A Unix socket's file mode gives the same answer
 * for the local sockets; this gives it for a page on 127.0.0.1.
 *
 * Addresses there are hex in the kernel's byte order, 32 bits at a time
 * (0100007F is 127.0.0.1 on a little-endian machine), ports big-endian hex.
 */
import { readFileSync } from "node:fs";
import { endianness } from "node:os";

export interface PeerAddress {
  address: string;
  port: number;
}

/** One 32-bit word of a /proc/net address as its four bytes in network order. */
function wordBytes(hex: string, littleEndian: boolean): number[] {
  const bytes = [0, 2, 4, 6].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  return littleEndian ? bytes.reverse() : bytes;
}

/** A /proc/net/tcp{,6} address (`0100007F:B838`) as an IP string and a port; IPv4-mapped IPv6 as IPv4. */
export function procAddress(field: string, littleEndian = endianness() === "LE"): PeerAddress | undefined {
  const [hex, portHex] = field.split(":");
  if (!hex || !portHex || !/^[0-9A-Fa-f]+$/.test(hex + portHex)) return undefined;
  const port = Number.parseInt(portHex, 16);
  if (hex.length === 8) return { address: wordBytes(hex, littleEndian).join("."), port };
  if (hex.length !== 32) return undefined;
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(hex.slice(i, i + 8), littleEndian));
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return { address: bytes.slice(12).join("."), port };
  const groups = [0, 2, 4, 6, 8, 10, 12, 14].map((i) => ((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return { address: compressV6(groups), port };
}

/** Eight IPv6 groups as the shortest text (the longest run of zero groups as `::`). */
function compressV6(groups: string[]): string {
  let best = { at: -1, length: 0 };
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === "0") j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j;
  }
  if (best.length < 2) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.length).join(":")}`;
}

/** An address as /proc/net shows it: IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as plain IPv4. */
const plain = (address: string) => address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1").toLowerCase();

/**
 * The uid owning the client's side of a connection from `client` to this
 * machine's `serverPort`, from the text of /proc/net/tcp and tcp6; undefined
 * when no listed socket matches.
 */
export function uidInTable(tables: readonly string[], client: PeerAddress, serverPort: number, littleEndian = endianness() === "LE"): number | undefined {
  const want = plain(client.address);
  for (const table of tables) {
    for (const line of table.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 8) continue;
      const local = procAddress(cols[1]!, littleEndian);
      const remote = procAddress(cols[2]!, littleEndian);
      if (!local || !remote || local.port !== client.port || remote.port !== serverPort || plain(local.address) !== want) continue;
      const uid = Number(cols[7]);
      if (Number.isInteger(uid)) return uid;
    }
  }
  return undefined;
}

/** The uid of the process that opened a loopback connection to `serverPort` from `client`, on Linux; undefined elsewhere or when not found. */
export function loopbackPeerUid(client: PeerAddress, serverPort: number): number | undefined {
  if (process.platform !== "linux") return undefined;
  const tables: string[] = [];
  for (const path of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    try {
      tables.push(readFileSync(path, "utf8"));
    } catch {
      // A kernel without IPv6 has no tcp6.
    }
  }
  return uidInTable(tables, client, serverPort);
}
