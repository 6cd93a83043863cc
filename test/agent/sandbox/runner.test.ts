/**
 * The OS sandbox proven from the outside: real commands run through the
 * real bubblewrap (sandbox-exec on macOS), and the test looks at what they
 * could read, write, see in their environment and reach on the network.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { detectBackend } from "../../../src/agent/sandbox/detect.ts";
import { type RunResult, SandboxRunner } from "../../../src/agent/sandbox/runner.ts";
import { until } from "../../helpers/wait.ts";
import { type Machine, makeMachine } from "./fixture.ts";

const backend = detectBackend();
let m: Machine;
let runner: SandboxRunner;

beforeEach(() => {
  // The machine running the tests must have the sandbox (.ci/run installs bubblewrap): no silent skip.
  expect(backend).not.toBeNull();
  runner = new SandboxRunner(backend!);
  m = makeMachine();
});
afterEach(() => m.cleanup());

async function sh(
  line: string,
  options: { env?: Record<string, string>; network?: boolean; timeoutMs?: number; outputLimit?: number; cwd?: string } = {},
): Promise<RunResult> {
  return runner.run({
    policy: m.policy(options.env ?? {}, options.network ?? false),
    argv: ["/bin/sh", "-c", line],
    cwd: options.cwd ?? m.workspace,
    timeoutMs: options.timeoutMs ?? 15_000,
    outputLimit: options.outputLimit ?? 65_536,
    signal: new AbortController().signal,
  });
}

describe("files", () => {
  test("a command works in the workspace, and sees nothing else of the home directory", async () => {
    const inside = await sh("cat notes.txt && echo made > made.txt && pwd");
    expect(inside.exitCode).toBe(0);
    expect(inside.stdout.text).toContain("hello from the workspace");
    expect(inside.stdout.text).toContain(m.workspace);
    expect(readFileSync(join(m.workspace, "made.txt"), "utf8")).toBe("made\n");

    const diary = await sh(`cat ${m.secretFile}`);
    expect(diary.exitCode).not.toBe(0);
    expect(diary.stdout.text + diary.stderr.text).not.toContain(m.secretText);
    // Not even by listing: the home holds only the path down to the workspace; the Fermix home only the workspace.
    const listing = await sh(`ls -A ${m.home}; echo ---; ls -A ${m.fermixHome}; echo ---; cat ${join(m.fermixHome, "config.toml")}`);
    expect(listing.stdout.text.split("---")[0]!.trim()).toBe(".fermix");
    expect(listing.stdout.text.split("---")[1]!.trim()).toBe("workspace");
    expect(listing.stdout.text + listing.stderr.text).not.toContain("not-for-commands");
  });

  test("it cannot write outside the workspace and its read-write grants; SOUL.md and skills/ are read-only", async () => {
    m.store.grant(m.outsideRo, "ro", "test");
    m.store.grant(m.outsideRw, "rw", "test");
    const run = await sh(
      [
        `echo x > ${join(m.home, "planted.txt")} 2>/dev/null && echo wrote-home`,
        `echo x > ${join(m.fermixHome, "config.toml")} 2>/dev/null && echo wrote-config`,
        `echo x > ${join(m.outsideRo, "planted.txt")} 2>/dev/null && echo wrote-ro`,
        `cat ${join(m.outsideRo, "report.txt")}`,
        `echo ok > ${join(m.outsideRw, "result.txt")} && echo wrote-rw`,
        `echo x >> SOUL.md 2>/dev/null && echo wrote-soul`,
        `touch skills/new.md 2>/dev/null && echo wrote-skills`,
        `echo x > /tmp/private && echo wrote-tmp`,
        "true",
      ].join("; "),
    );
    const out = run.stdout.text;
    expect(out).not.toContain("wrote-home");
    expect(out).not.toContain("wrote-config");
    expect(out).not.toContain("wrote-ro");
    expect(out).not.toContain("wrote-soul");
    expect(out).not.toContain("wrote-skills");
    expect(out).toContain("quarterly numbers");
    expect(out).toContain("wrote-rw");
    expect(out).toContain("wrote-tmp");
    expect(existsSync(join(m.home, "planted.txt"))).toBe(false);
    expect(existsSync(join(m.outsideRo, "planted.txt"))).toBe(false);
    expect(readFileSync(join(m.fermixHome, "config.toml"), "utf8")).toContain("not-for-commands");
    expect(readFileSync(join(m.workspace, "SOUL.md"), "utf8")).toBe("# Soul\n");
    expect(existsSync(join(m.workspace, "skills", "new.md"))).toBe(false);
    expect(readFileSync(join(m.outsideRw, "result.txt"), "utf8")).toBe("ok\n");
    // The private /tmp is the command's own: nothing of it lands in the machine's.
    expect(existsSync("/tmp/private")).toBe(false);
  });

  test("without a grant, a folder outside the home is not there at all", async () => {
    const run = await sh(`ls ${m.outsideRo}`);
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout.text).not.toContain("report.txt");
  });
});

describe("environment", () => {
  const daemonEnv = {
    OPENAI_API_KEY: "sk-daemon-secret-0000111122223333",
    TELEGRAM_BOT_TOKEN: "7000000001:AAdaemonTokenXXXXXXXXXXXXXXXXXX",
    LANG: "en_GB.UTF-8",
    EDITOR: "vim",
    HOME: "/root",
  };

  test("a command sees none of the daemon's environment but the allowed names", async () => {
    const run = await sh("env", { env: daemonEnv });
    const seen = run.stdout.text;
    expect(seen).not.toContain("sk-daemon-secret");
    expect(seen).not.toContain("AAdaemonToken");
    expect(seen).not.toContain("EDITOR=");
    expect(seen).toContain("LANG=en_GB.UTF-8");
    expect(seen).toContain(`HOME=${m.workspace}`);
  });

  test("allow, deny and set rules shape it", async () => {
    m.store.setEnv("EDITOR", "allow", "test");
    m.store.setEnv("LANG", "deny", "test");
    m.store.setEnv("GREETING", "set", "test", "hello there");
    const run = await sh("env", { env: daemonEnv });
    expect(run.stdout.text).toContain("EDITOR=vim");
    expect(run.stdout.text).toContain("GREETING=hello there");
    expect(run.stdout.text).not.toContain("LANG=");
    expect(run.stdout.text).not.toContain("sk-daemon-secret");
  });
});

describe("network", () => {
  /** A loopback server that counts who connected. */
  function listen() {
    let connections = 0;
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(socket) {
          connections++;
          socket.end("hello\n");
        },
        data() {},
      },
    });
    return { port: server.port, connections: () => connections, stop: () => server.stop(true) };
  }

  const connect = (port: number) => `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected || echo refused`;

  test("with the network off a command cannot open a socket, not even to loopback; on, it can", async () => {
    const server = listen();
    try {
      const off = await runner.run({
        policy: m.policy({}, false),
        argv: ["/bin/bash", "-c", connect(server.port)],
        cwd: m.workspace,
        timeoutMs: 15_000,
        outputLimit: 4096,
        signal: new AbortController().signal,
      });
      expect(off.stdout.text).toContain("refused");
      expect(off.stdout.text).not.toContain("connected");
      expect(server.connections()).toBe(0);

      // The same command with the network on reaches the server: the test above could have failed.
      m.store.setNetwork(true, "test");
      const on = await runner.run({
        policy: m.policy(),
        argv: ["/bin/bash", "-c", connect(server.port)],
        cwd: m.workspace,
        timeoutMs: 15_000,
        outputLimit: 4096,
        signal: new AbortController().signal,
      });
      expect(on.stdout.text).toContain("connected");
      expect(server.connections()).toBe(1);
    } finally {
      server.stop();
    }
  });
});

describe("identity and /etc", () => {
  test("a command never runs as uid 0, and finds no shadow, gshadow, sudoers, ssh host key or TLS private key in /etc", async () => {
    const ids = await sh("id -u; id -g");
    const [uid, gid] = ids.stdout.text.split("\n");
    expect(uid).toBe(process.getuid!() === 0 ? "1000" : String(process.getuid!()));
    expect(uid).not.toBe("0");
    expect(gid).not.toBe("0");

    const listing = await sh("find /etc");
    const seen = listing.stdout.text.trim().split("\n");
    for (const needed of ["/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/ld.so.cache"]) expect(seen).toContain(needed);
    for (const path of seen) expect(path).not.toMatch(/^\/etc\/(shadow|gshadow|sudoers|machine-id|ssh\/ssh_host_|ssl\/private|pki\/tls\/private)/);
    const shadow = await sh("cat /etc/shadow");
    expect(shadow.exitCode).not.toBe(0);
    expect(shadow.stderr.text).toContain("No such file or directory");
  });

  test("ordinary programs work as that user: sh, ls, cat, awk, sed, grep, python3, git (where installed), whoami", async () => {
    // git is on every machine that cloned this repository, but the sandbox sees only the system's copy.
    const git = Bun.which("git", { PATH: "/usr/local/bin:/usr/bin:/bin" }) !== null;
    const run = await sh(
      [
        "ls -l notes.txt >/dev/null && echo ls-ok",
        "cat notes.txt",
        "awk 'BEGIN { print \"awk\", 6 * 7 }'",
        "echo sandboxed | sed s/sand/SAND/",
        "grep workspace notes.txt | grep -c hello",
        "python3 -c 'import pwd, os; print(\"py\", pwd.getpwuid(os.getuid()).pw_name)'",
        ...(git
          ? [
              "git init -q repo && cd repo && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m one && echo git-commits=$(git rev-list --count HEAD) && cd ..",
            ]
          : []),
        "echo who=$(whoami)",
      ].join(" && "),
    );
    expect(run.stderr.text).toBe("");
    expect(run.exitCode).toBe(0);
    const out = run.stdout.text.split("\n");
    for (const line of ["ls-ok", "hello from the workspace", "awk 42", "SANDboxed", "1", ...(git ? ["git-commits=1"] : [])]) expect(out).toContain(line);
    const who = /^who=(\S+)$/m.exec(run.stdout.text)?.[1];
    expect(who).toBeDefined();
    expect(out).toContain(`py ${who}`);
  });

  test("a Unix socket server in a granted folder cannot be reached, read-only or read-write grant alike, network off or on", async () => {
    m.store.grant(m.outsideRo, "ro", "test");
    m.store.grant(m.outsideRw, "rw", "test");
    let connections = 0;
    const servers = [m.outsideRo, m.outsideRw].map((dir) =>
      Bun.listen({ unix: join(dir, "daemon.sock"), socket: { open: () => void connections++, data() {} } }),
    );
    const client = (path: string) => `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(path)})\nprint("connected")`;
    try {
      for (const dir of [m.outsideRo, m.outsideRw]) {
        for (const network of [false, true]) {
          const run = await runner.run({
            policy: m.policy({}, network),
            argv: ["python3", "-c", client(join(dir, "daemon.sock"))],
            cwd: m.workspace,
            timeoutMs: 15_000,
            outputLimit: 4096,
            signal: new AbortController().signal,
          });
          expect(run.stdout.text).not.toContain("connected");
          expect(run.stderr.text).toContain("PermissionError");
        }
      }
      // The sockets are there and listening: the same client outside the sandbox gets in, and the server sees it.
      const outside = Bun.spawn(["python3", "-c", client(join(m.outsideRw, "daemon.sock"))], { stdout: "pipe" });
      expect(await new Response(outside.stdout).text()).toContain("connected");
      await until("the server to see the outside client", () => connections === 1);
      expect(connections).toBe(1);
    } finally {
      for (const server of servers) server.stop(true);
    }
  });
});

describe("limits", () => {
  test("a command past its timeout is killed, promptly", async () => {
    const started = Date.now();
    const run = await sh("echo started; sleep 30; echo never", { timeoutMs: 500 });
    expect(run.timedOut).toBe(true);
    expect(run.exitCode).toBeNull();
    expect(run.stdout.text).toContain("started");
    expect(run.stdout.text).not.toContain("never");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test("a stopped turn kills its command", async () => {
    const controller = new AbortController();
    const running = runner.run({
      policy: m.policy(),
      argv: ["/bin/sh", "-c", "touch started; sleep 30"],
      cwd: m.workspace,
      timeoutMs: 30_000,
      outputLimit: 4096,
      signal: controller.signal,
    });
    await until("the command to start", () => existsSync(join(m.workspace, "started")));
    controller.abort();
    const run = await running;
    expect(run.stopped).toBe(true);
    expect(run.exitCode).toBeNull();
  });

  test("long output keeps its start and end, and says how much was cut", async () => {
    const run = await sh("echo FIRST-LINE; seq 1 20000; echo LAST-LINE", { outputLimit: 2000 });
    expect(run.exitCode).toBe(0);
    expect(run.stdout.text).toStartWith("FIRST-LINE");
    expect(run.stdout.text.trimEnd()).toEndWith("LAST-LINE");
    expect(run.stdout.cut).toBeGreaterThan(100_000);
    expect(run.stdout.text).toContain(`[… ${run.stdout.cut} bytes cut …]`);
    expect(run.stdout.text.length).toBeLessThan(2200);
  });
});
