import { expect, test } from "bun:test";
import { isIP } from "node:net";
import { ipFamily, isIPv4, isIPv6 } from "../../src/kernel/ip.ts";

// node:net's answers are the reference; ours must agree on every literal a config, a Host header or a resolver gives.
const SAMPLES = [
  "127.0.0.1",
  "0.0.0.0",
  "255.255.255.255",
  "256.1.1.1",
  "1.2.3",
  "01.2.3.4",
  "1.2.3.4.5",
  " 1.2.3.4",
  "1.2.3.4 ",
  "::",
  "::1",
  "fe80::1",
  "2001:db8::8a2e:370:7334",
  "2001:0db8:0000:0000:0000:ff00:0042:8329",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "64:ff9b::192.0.2.33",
  "1::2::3",
  "12345::",
  "1:2:3:4:5:6:7:8:9",
  ":::",
  "[::1]",
  "::1]/evil[",
  "localhost",
  "example.com",
  "",
  "1.2.3.4:80",
  "g::1",
];

test("every sample is the family node:net says it is", () => {
  expect(SAMPLES.map((s): [string, number] => [s, ipFamily(s)])).toEqual(SAMPLES.map((s): [string, number] => [s, isIP(s)]));
});

test("isIPv4 and isIPv6 say the same as the family", () => {
  for (const s of SAMPLES) {
    expect(isIPv4(s)).toBe(isIP(s) === 4);
    expect(isIPv6(s)).toBe(isIP(s) === 6);
  }
});

test("a zone index is not an address here (node accepts it; no caller names one)", () => {
  expect(isIP("fe80::1%eth0")).toBe(6);
  expect(ipFamily("fe80::1%eth0")).toBe(0);
});
