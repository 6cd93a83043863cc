/**
 * A program driven in a real terminal: tmux on a private server socket,
 * keys sent with send-keys, the screen read with capture-pane. For the
 * interactive wizard, which refuses to run without a TTY.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let sessions = 0;

export interface TerminalSession {
  /** Send keys as tmux names them ("Enter", "Down", "Space") or literal text (`literal: true`). */
  keys(...keys: string[]): void;
  type(text: string): void;
  /** The screen and its scrollback, as text. */
  screen(): string;
  /** Wait until the screen shows `text`; returns the screen then. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the program's exit code once it has ended. */
  exited(timeoutMs?: number): Promise<number>;
  close(): void;
}

export function startTerminal(command: string[], env: Record<string, string | undefined>, size = { columns: 100, rows: 50 }): TerminalSession {
  const socket = `fermix-test-${process.pid}-${++sessions}`;
  const dir = mkdtempSync(join(tmpdir(), "fermix-tmux-"));
  const exitFile = join(dir, "exit");
  const quote = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;
  // env -i: exactly this environment (the shell tmux starts may set PATH from the machine's profile).
  const assignments = Object.entries({ TERM: "xterm-256color", ...env }).flatMap(([k, v]) => (v === undefined ? [] : [quote(`${k}=${v}`)]));
  const quoted = ["env", "-i", ...assignments, ...command.map(quote)].join(" ");
  const tmux = (...args: string[]) => {
    const r = Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    if (r.exitCode !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr.toString()}`);
    return r.stdout.toString();
  };
  tmux("new-session", "-d", "-s", "t", "-x", String(size.columns), "-y", String(size.rows), `${quoted}; echo $? > '${exitFile}'; sleep 300`);
  tmux("set-option", "-g", "history-limit", "5000");
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-5000", "-t", "t");
  return {
    keys: (...keys) => void tmux("send-keys", "-t", "t", ...keys),
    type: (text) => void tmux("send-keys", "-t", "t", "-l", text),
    screen,
    async waitFor(text, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const shown = screen();
        if (typeof text === "string" ? shown.includes(text) : text.test(shown)) return shown;
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${String(text)}; it shows:\n${shown}`);
        await Bun.sleep(50);
      }
    },
    async exited(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          const code = readFileSync(exitFile, "utf8").trim();
          if (code !== "") return Number(code);
        } catch {
          // Not yet.
        }
        if (Date.now() > deadline) throw new Error(`the program did not exit; the screen:\n${screen()}`);
        await Bun.sleep(50);
      }
    },
    close() {
      Bun.spawnSync(["tmux", "-L", socket, "kill-server"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
