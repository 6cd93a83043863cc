/**
 * The seccomp filter bubblewrap installs on every command (`--seccomp FD`):
 * a classic-BPF program, built here byte by byte since there is no
 * libseccomp in JS. It refuses the two ways a command could reach a Unix
 * socket outside the sandbox: `socket(AF_UNIX, …)` fails with EACCES (a
 * path socket in a granted folder, or the host's abstract sockets with the
 * network on, are unreachable without one; `socketpair` still works, so
 * programs that talk to their own children keep working), and
 * `io_uring_setup` fails with ENOSYS (io_uring can create sockets of its
 * own; programs fall back as on a kernel without it). Syscalls of any other
 * architecture than x86_64 and aarch64 — 32-bit compat, x32 — kill the
 * process: a filter that knows only these numbers must not judge others.
 *
 * The program is the same whatever the machine: it checks the architecture
 * the kernel reports for each call. Pure; the tests decode and run it.
 */

/** `struct sock_filter` codes (linux/filter.h, linux/bpf_common.h). */
export const BPF = {
  LD_W_ABS: 0x20, // BPF_LD | BPF_W | BPF_ABS
  JEQ_K: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
  JGE_K: 0x35, // BPF_JMP | BPF_JGE | BPF_K
  RET_K: 0x06, // BPF_RET | BPF_K
} as const;

/** Offsets in `struct seccomp_data` (linux/seccomp.h): nr, arch, then args[6] as u64 from 16 (low word first on little-endian). */
export const SECCOMP_DATA = { nr: 0, arch: 4, arg0Low: 16 } as const;

export const SECCOMP_RET = {
  KILL_PROCESS: 0x80000000,
  ERRNO: 0x00050000,
  ALLOW: 0x7fff0000,
} as const;

export const AUDIT_ARCH = { X86_64: 0xc000003e, AARCH64: 0xc00000b7 } as const;

/** Syscall numbers per architecture (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h for aarch64). */
export const SYSCALLS = {
  x86_64: { socket: 41, io_uring_setup: 425 },
  aarch64: { socket: 198, io_uring_setup: 425 },
} as const;

/** x32 syscalls carry this bit on x86_64; the filter kills them rather than know their numbers. */
export const X32_SYSCALL_BIT = 0x40000000;
export const AF_UNIX = 1;
/** errno values, the same on both architectures (asm-generic). */
export const ERRNO = { EACCES: 13, ENOSYS: 38 } as const;

export interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

type Target = "next" | Label;
type Label = "x86_64" | "aarch64" | "socket" | "allow" | "refuseUnix" | "refuseIoUring" | "kill";
type Step = { label?: Label; code: number; k: number; jt?: Target; jf?: Target };

/** The program as labelled steps; jumps are resolved to the forward offsets BPF wants. */
const STEPS: readonly Step[] = [
  { code: BPF.LD_W_ABS, k: SECCOMP_DATA.arch },
  { code: BPF.JEQ_K, k: AUDIT_ARCH.X86_64, jt: "x86_64", jf: "next" },
  { code: BPF.JEQ_K, k: AUDIT_ARCH.AARCH64, jt: "aarch64", jf: "kill" },
  { label: "x86_64", code: BPF.LD_W_ABS, k: SECCOMP_DATA.nr },
  { code: BPF.JGE_K, k: X32_SYSCALL_BIT, jt: "kill", jf: "next" },
  { code: BPF.JEQ_K, k: SYSCALLS.x86_64.socket, jt: "socket", jf: "next" },
  { code: BPF.JEQ_K, k: SYSCALLS.x86_64.io_uring_setup, jt: "refuseIoUring", jf: "allow" },
  { label: "aarch64", code: BPF.LD_W_ABS, k: SECCOMP_DATA.nr },
  { code: BPF.JEQ_K, k: SYSCALLS.aarch64.socket, jt: "socket", jf: "next" },
  { code: BPF.JEQ_K, k: SYSCALLS.aarch64.io_uring_setup, jt: "refuseIoUring", jf: "allow" },
  // The domain is an int: the kernel reads the low 32 bits of the first argument.
  { label: "socket", code: BPF.LD_W_ABS, k: SECCOMP_DATA.arg0Low },
  { code: BPF.JEQ_K, k: AF_UNIX, jt: "refuseUnix", jf: "allow" },
  { label: "allow", code: BPF.RET_K, k: SECCOMP_RET.ALLOW },
  { label: "refuseUnix", code: BPF.RET_K, k: SECCOMP_RET.ERRNO | ERRNO.EACCES },
  { label: "refuseIoUring", code: BPF.RET_K, k: SECCOMP_RET.ERRNO | ERRNO.ENOSYS },
  { label: "kill", code: BPF.RET_K, k: SECCOMP_RET.KILL_PROCESS },
];

/** The filter as instructions, jumps resolved. */
export function sandboxFilter(): Instruction[] {
  const at = new Map<Label, number>();
  for (const [index, step] of STEPS.entries()) if (step.label) at.set(step.label, index);
  const offset = (from: number, target: Target | undefined): number => {
    if (target === undefined || target === "next") return 0;
    const to = at.get(target);
    // BPF jumps only forward, by at most 255 instructions.
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`seccomp filter: bad jump from ${from} to ${target}`);
    return to - from - 1;
  };
  return STEPS.map((step, index) => ({ code: step.code, jt: offset(index, step.jt), jf: offset(index, step.jf), k: step.k >>> 0 }));
}

/** The bytes bubblewrap reads from `--seccomp FD`: `struct sock_filter[]` in the machine's (little-endian) byte order. */
export function encodeFilter(program: readonly Instruction[]): Uint8Array {
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach((ins, i) => {
    view.setUint16(i * 8, ins.code, true);
    view.setUint8(i * 8 + 2, ins.jt);
    view.setUint8(i * 8 + 3, ins.jf);
    view.setUint32(i * 8 + 4, ins.k, true);
  });
  return bytes;
}

/** The instructions back from their bytes (for tests and for reading a filter by eye). */
export function decodeFilter(bytes: Uint8Array): Instruction[] {
  if (bytes.byteLength % 8 !== 0) throw new Error(`seccomp filter: ${bytes.byteLength} bytes is not a whole number of instructions`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const program: Instruction[] = [];
  for (let at = 0; at < bytes.byteLength; at += 8) {
    program.push({ code: view.getUint16(at, true), jt: view.getUint8(at + 2), jf: view.getUint8(at + 3), k: view.getUint32(at + 4, true) });
  }
  return program;
}

/** The filter's bytes, built once. */
export const SANDBOX_FILTER_BYTES: Uint8Array = encodeFilter(sandboxFilter());
