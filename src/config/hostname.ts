/**
 * Host names as config names them (`[fermix_core.http] allowed_hosts`) and
 * as the HTTP server compares them: letters, digits, `-` and `_` in dot-
 * separated labels, case-insensitive, one trailing dot allowed (the
 * absolute form of the same name). No scheme, no port, no wildcard.
 */

import { ipFamily } from "../kernel/ip.ts";

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/i;

/** Whether `name` is a host name (no port, no scheme). */
export function isHostName(name: string): boolean {
  const bare = name.endsWith(".") ? name.slice(0, -1) : name;
  if (bare.length === 0 || bare.length > 253) return false;
  return bare.split(".").every((label) => LABEL.test(label));
}

/** A host name as compared: lower case, without the trailing dot. */
export function hostNameKey(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/** Whether `value` is a host name or an IP address (IPv6 with or without brackets): what `[fermix_core.web] allow_hosts` lists. */
export function isHostOrAddress(value: string): boolean {
  return isHostName(value) || ipFamily(value.replace(/^\[(.*)\]$/, "$1")) !== 0;
}
