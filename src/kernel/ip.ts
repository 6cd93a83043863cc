/**
 * Which IP family an address literal is — what node:net's isIP, isIPv4 and
 * isIPv6 answer — without importing node:net: that module brings the
 * runtime's socket machinery with it, ~3–5 MiB of an idle daemon's memory
 * spent on three string checks (docs/performance.md, "Where the time and memory go").
 *
 * IPv4 is dotted decimal with no leading zeros, as node reads it; IPv6 is
 * what the URL standard's host parser accepts between brackets. A zone
 * index (`fe80::1%eth0`) is not accepted: no caller names one.
 */

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)";
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
/** Hex groups, colons and an embedded IPv4 tail: anything else is no IPv6 literal (and cannot smuggle a path into the URL below). */
const IPV6_CHARACTERS = /^[0-9a-f:.]+$/i;

export function isIPv4(value: string): boolean {
  return IPV4.test(value);
}

export function isIPv6(value: string): boolean {
  return value.includes(":") && IPV6_CHARACTERS.test(value) && URL.canParse(`http://[${value}]/`);
}

/** 4, 6, or 0 when `value` is no IP address literal. */
export function ipFamily(value: string): 0 | 4 | 6 {
  return isIPv4(value) ? 4 : isIPv6(value) ? 6 : 0;
}
