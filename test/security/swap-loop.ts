/**
 * The attacker of test/security/race.test.ts, as a separate process: it
 * exchanges pairs of names (a real folder in the workspace and a symbolic
 * link beside it) with renameat2(RENAME_EXCHANGE) in a tight loop, so a tool
 * that checks a path and then opens it again finds the other one. A command
 * the model runs could do the same inside the sandbox.
 *
 *   bun test/security/swap-loop.ts <stop-file> <a1> <b1> [<a2> <b2> …]
 *
 * Swaps until <stop-file> exists, then prints how many exchanges it made.
 * Linux only (renameat2 is in glibc since 2.28).
 */
import { dlopen, FFIType } from "bun:ffi";
import { existsSync } from "node:fs";

const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;

const [stopFile, ...names] = process.argv.slice(2);
if (!stopFile || names.length === 0 || names.length % 2 !== 0) {
  console.error("usage: swap-loop.ts <stop-file> <a1> <b1> [<a2> <b2> …]");
  process.exit(2);
}
const libc = dlopen("libc.so.6", {
  renameat2: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
});
const pairs: Array<[Buffer, Buffer]> = [];
for (let i = 0; i < names.length; i += 2) pairs.push([Buffer.from(`${names[i]}\0`), Buffer.from(`${names[i + 1]}\0`)]);

let swaps = 0;
let failures = 0;
for (let round = 0; ; round++) {
  // Looking for the stop file costs a syscall: once every 256 rounds keeps the loop tight.
  if ((round & 255) === 0 && existsSync(stopFile)) break;
  for (const [a, b] of pairs) {
    if (libc.symbols.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) === 0) swaps++;
    else failures++;
  }
}
console.log(JSON.stringify({ swaps, failures }));
