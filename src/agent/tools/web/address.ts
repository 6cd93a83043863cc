/**
 * Which IP addresses web_fetch may connect to: public unicast ones only.
 * Loopback, private, shared (carrier-grade NAT), link-local (cloud metadata
 * at 169.254.169.254 among them), multicast, reserved and documentation
 * ranges are refused, in IPv4 and IPv6 alike. An IPv6 address that carries
 * an IPv4 one (mapped `::ffff:a.b.c.d`, the old compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4, Teredo) is judged as what it can reach: the
 * mapped and compatible forms by the IPv4 address inside (node's BlockList
 * does that), the tunnelled forms refused outright.
 *
 * The ranges are data; node:net's BlockList does the matching, loaded at the
 * first address judged (node:net costs an idle daemon memory; docs/performance.md).
 */
import type { BlockList } from "node:net";
import { ipFamily } from "../../../kernel/ip.ts";

/** Why an address is not public, in a few words the model and the owner read. */
export type AddressKind = "loopback" | "private" | "link-local" | "multicast" | "unspecified" | "reserved" | "tunnelled" | "metadata";

type Range = readonly [network: string, prefix: number, kind: AddressKind];

const V4: readonly Range[] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  // Shared address space (carrier-grade NAT); Alibaba Cloud's metadata service is at 100.100.100.200.
  ["100.64.0.0", 10, "private"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.169.254", 32, "metadata"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  // IETF protocol assignments; Oracle Cloud's metadata service is at 192.0.0.192.
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  // 240/4 and the broadcast address.
  ["240.0.0.0", 4, "reserved"],
];

const V6: readonly Range[] = [
  ["::1", 128, "loopback"],
  ["::", 128, "unspecified"],
  // IPv4-compatible (deprecated) addresses, judged as IPv4 where BlockList maps them, refused otherwise.
  ["::", 96, "reserved"],
  ["64:ff9b::", 96, "tunnelled"],
  ["64:ff9b:1::", 48, "tunnelled"],
  ["100::", 64, "reserved"],
  ["2001::", 32, "tunnelled"],
  ["2001:db8::", 32, "reserved"],
  ["2002::", 16, "tunnelled"],
  // Unique local addresses; AWS's IPv6 metadata service is fd00:ec2::254.
  ["fd00:ec2::254", 128, "metadata"],
  ["fc00::", 7, "private"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
];

/** One BlockList per kind, most specific kinds first, so an address is named by the narrowest range that holds it. */
const ORDER: readonly AddressKind[] = ["metadata", "loopback", "unspecified", "link-local", "private", "multicast", "tunnelled", "reserved"];
let lists: ReadonlyArray<readonly [AddressKind, BlockList]> | undefined;
function blockLists(): ReadonlyArray<readonly [AddressKind, BlockList]> {
  if (lists) return lists;
  const net: typeof import("node:net") = require("node:net");
  lists = ORDER.map((kind) => {
    const list = new net.BlockList();
    for (const [network, prefix, of] of V4) if (of === kind) list.addSubnet(network, prefix, "ipv4");
    for (const [network, prefix, of] of V6) if (of === kind) list.addSubnet(network, prefix, "ipv6");
    return [kind, list] as const;
  });
  return lists;
}

/** What kind of non-public address `address` is, or null when it is a public unicast address (or not an IP address at all). */
export function nonPublicKind(address: string): AddressKind | null {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  const family = ipFamily(bare);
  if (family === 0) return null;
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const [kind, list] of blockLists()) if (list.check(bare, type)) return kind;
  return null;
}

/** Whether `value` is an IP address literal (IPv6 with or without brackets). */
export function isAddress(value: string): boolean {
  return ipFamily(value.replace(/^\[(.*)\]$/, "$1")) !== 0;
}

/** A kind in words, for a refusal: "a loopback address", "the cloud metadata address"… */
export function kindWords(kind: AddressKind): string {
  switch (kind) {
    case "metadata":
      return "a cloud metadata address";
    case "tunnelled":
      return "an IPv6 address that tunnels to IPv4";
    case "unspecified":
      return "the unspecified address";
    default:
      return `a ${kind} address`;
  }
}
