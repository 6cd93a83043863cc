/**
 * The seccomp filter, read two ways: on data, decoded from its bytes and run
 * by a small classic-BPF interpreter over the calls a command could make;
 * and for real, under bubblewrap, where `socket(AF_UNIX)` must fail while
 * `socketpair` and (with the network on) TCP sockets keep working.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { detectBackend } from "../../../src/agent/sandbox/detect.ts";
import { SandboxRunner } from "../../../src/agent/sandbox/runner.ts";
import {
  AF_UNIX,
  AUDIT_ARCH,
  BPF,
  decodeFilter,
  ERRNO,
  encodeFilter,
  type Instruction,
  SANDBOX_FILTER_BYTES,
  SECCOMP_DATA,
  SECCOMP_RET,
  SYSCALLS,
  sandboxFilter,
  X32_SYSCALL_BIT,
} from "../../../src/agent/sandbox/seccomp.ts";
import { type Machine, makeMachine } from "./fixture.ts";

/** One system call as the kernel hands it to the filter. */
interface Call {
  arch: number;
  nr: number;
  /** The first argument's low and high 32 bits. */
  arg0?: number;
  arg0High?: number;
}

/** Run a classic-BPF seccomp program over one call, as the kernel would: only the opcodes a filter of this kind uses. */
function evaluate(program: readonly Instruction[], call: Call): number {
  const word = (offset: number): number => {
    if (offset === SECCOMP_DATA.nr) return call.nr >>> 0;
    if (offset === SECCOMP_DATA.arch) return call.arch >>> 0;
    if (offset === SECCOMP_DATA.arg0Low) return (call.arg0 ?? 0) >>> 0;
    if (offset === SECCOMP_DATA.arg0Low + 4) return (call.arg0High ?? 0) >>> 0;
    throw new Error(`load from an offset the test does not model: ${offset}`);
  };
  let acc = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const ins = program[pc]!;
    switch (ins.code) {
      case BPF.LD_W_ABS:
        acc = word(ins.k);
        break;
      case BPF.JEQ_K:
        pc += acc === ins.k ? ins.jt : ins.jf;
        break;
      case BPF.JGE_K:
        pc += acc >= ins.k ? ins.jt : ins.jf;
        break;
      case BPF.RET_K:
        return ins.k;
      default:
        throw new Error(`unexpected opcode ${ins.code.toString(16)} at ${pc}`);
    }
  }
  throw new Error("the program ran off its end without returning");
}

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const refused = (errno: number) => SECCOMP_RET.ERRNO | errno;

describe("the filter on data", () => {
  const program = decodeFilter(SANDBOX_FILTER_BYTES);

  test("its bytes are whole 8-byte instructions that decode back to the program, every jump inside it, ending in returns", () => {
    expect(SANDBOX_FILTER_BYTES.byteLength % 8).toBe(0);
    expect(program).toEqual(sandboxFilter());
    expect(encodeFilter(program)).toEqual(SANDBOX_FILTER_BYTES);
    for (const [pc, ins] of program.entries()) {
      if (ins.code === BPF.JEQ_K || ins.code === BPF.JGE_K) {
        expect(pc + 1 + ins.jt).toBeLessThan(program.length);
        expect(pc + 1 + ins.jf).toBeLessThan(program.length);
      }
    }
    expect(program.at(-1)!.code).toBe(BPF.RET_K);
    // It starts by reading the architecture: nothing is judged by a number before the arch is known.
    expect(program[0]).toEqual({ code: BPF.LD_W_ABS, jt: 0, jf: 0, k: SECCOMP_DATA.arch });
  });

  test("x86_64: socket(AF_UNIX) is refused with EACCES, io_uring_setup with ENOSYS; other sockets and calls pass", () => {
    const x86 = (nr: number, arg0?: number) => evaluate(program, { arch: AUDIT_ARCH.X86_64, nr, arg0 });
    expect(x86(SYSCALLS.x86_64.socket, AF_UNIX)).toBe(refused(ERRNO.EACCES));
    expect(x86(SYSCALLS.x86_64.io_uring_setup)).toBe(refused(ERRNO.ENOSYS));
    for (const family of [AF_INET, AF_INET6, AF_NETLINK]) expect(x86(SYSCALLS.x86_64.socket, family)).toBe(SECCOMP_RET.ALLOW);
    // socketpair (53), connect (42), read (0), execve (59): untouched.
    for (const nr of [53, 42, 0, 59]) expect(x86(nr, AF_UNIX)).toBe(SECCOMP_RET.ALLOW);
    // The kernel reads the domain as an int: high bits set beside AF_UNIX do not smuggle it through.
    expect(evaluate(program, { arch: AUDIT_ARCH.X86_64, nr: SYSCALLS.x86_64.socket, arg0: AF_UNIX, arg0High: 0xffffffff })).toBe(refused(ERRNO.EACCES));
  });

  test("x32 calls (the x32 bit set) kill the process: socket's number with that bit cannot slip past", () => {
    expect(evaluate(program, { arch: AUDIT_ARCH.X86_64, nr: X32_SYSCALL_BIT + SYSCALLS.x86_64.socket, arg0: AF_UNIX })).toBe(SECCOMP_RET.KILL_PROCESS);
    expect(evaluate(program, { arch: AUDIT_ARCH.X86_64, nr: X32_SYSCALL_BIT })).toBe(SECCOMP_RET.KILL_PROCESS);
  });

  test("aarch64: the same refusals with its own numbers; x86_64's socket number means something else there and passes", () => {
    const arm = (nr: number, arg0?: number) => evaluate(program, { arch: AUDIT_ARCH.AARCH64, nr, arg0 });
    expect(arm(SYSCALLS.aarch64.socket, AF_UNIX)).toBe(refused(ERRNO.EACCES));
    expect(arm(SYSCALLS.aarch64.io_uring_setup)).toBe(refused(ERRNO.ENOSYS));
    expect(arm(SYSCALLS.aarch64.socket, AF_INET)).toBe(SECCOMP_RET.ALLOW);
    expect(arm(SYSCALLS.x86_64.socket, AF_UNIX)).toBe(SECCOMP_RET.ALLOW);
    // socketpair on aarch64 is 199.
    expect(arm(199, AF_UNIX)).toBe(SECCOMP_RET.ALLOW);
  });

  test("any other architecture (i386 compat, 32-bit ARM) is killed, whatever the call", () => {
    for (const arch of [0x40000003, 0x40000028]) {
      expect(evaluate(program, { arch, nr: 0 })).toBe(SECCOMP_RET.KILL_PROCESS);
      expect(evaluate(program, { arch, nr: 102, arg0: AF_UNIX })).toBe(SECCOMP_RET.KILL_PROCESS);
    }
  });
});

describe("the filter under bubblewrap", () => {
  const backend = detectBackend();
  let m: Machine;
  beforeEach(() => {
    expect(backend).not.toBeNull();
    m = makeMachine();
  });
  afterEach(() => m.cleanup());

  /** Each probe prints its name and "ok" or the error it got. */
  const PROBES = `
import socket
def probe(name, make):
    try:
        made = make()
        for s in made if isinstance(made, tuple) else (made,):
            s.close()
        print(name, "ok")
    except OSError as error:
        print(name, "refused", error.errno)
probe("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
probe("unix-dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
probe("pair", lambda: socket.socketpair())
probe("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
`;

  async function probes(network: boolean) {
    const runner = new SandboxRunner(backend!);
    const run = await runner.run({
      policy: m.policy({}, network),
      argv: ["python3", "-c", PROBES],
      cwd: m.workspace,
      timeoutMs: 15_000,
      outputLimit: 8192,
      signal: new AbortController().signal,
    });
    expect(run.stderr.text).toBe("");
    return run.stdout.text;
  }

  test("network off: no Unix socket (EACCES), a socket pair works", async () => {
    const out = await probes(false);
    expect(out).toContain(`unix refused ${ERRNO.EACCES}`);
    expect(out).toContain(`unix-dgram refused ${ERRNO.EACCES}`);
    expect(out).toContain("pair ok");
  });

  test("network on: TCP sockets are made, Unix sockets still are not", async () => {
    const out = await probes(true);
    expect(out).toContain("tcp ok");
    expect(out).toContain("pair ok");
    expect(out).toContain(`unix refused ${ERRNO.EACCES}`);
  });
});
