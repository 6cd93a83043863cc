/**
 * `fermix chat` in a real terminal: the compiled binary runs inside a tmux
 * session on a private tmux server; the test types with send-keys and reads
 * the screen with capture-pane, as a user would.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeModel, lastInputParts, reply } from "../fakes/model-server.ts";
import { ensureBinary } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import type { TestHome } from "../helpers/home.ts";
import { until, within } from "../helpers/wait.ts";

const start = e2eResources();
/** After a stop: what was dropped would show (a model request, a printed word) within a few hundred ms; 1 s holds that on a loaded machine. */
const STRAY_MS = 1000;

/** A terminal with `fermix chat` running in it. */
class Terminal {
  /** A private tmux server: its socket lives in a directory of ours, removed at the end. */
  private readonly dir = mkdtempSync(join(tmpdir(), "fermix-tmux-"));
  private readonly socket = join(this.dir, "tmux.sock");
  private readonly session = "chat";

  private tmux(...args: string[]) {
    const r = Bun.spawnSync(["tmux", "-S", this.socket, ...args], { stdout: "pipe", stderr: "pipe" });
    return { ok: r.exitCode === 0, out: r.stdout.toString(), err: r.stderr.toString() };
  }

  start(env: Record<string, string | undefined>): void {
    const vars = Object.entries({ ...env, TERM: "xterm-256color" })
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${v}`);
    // `env -i`: the chat sees exactly the test home's environment, not the tmux server's.
    const started = this.tmux(
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      this.session,
      "-x",
      "120",
      "-y",
      "40",
      "env",
      "-i",
      ...vars,
      ensureBinary(),
      "chat",
    );
    if (!started.ok) throw new Error(`tmux new-session failed: ${started.err}`);
    this.tmux("set-option", "-t", this.session, "remain-on-exit", "on");
  }

  /** Type keys (tmux key names such as Enter, C-c, C-d are keys; anything else is typed literally). */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.session, "-l", text);
  }
  key(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.session, ...keys);
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", this.session).out;
  }

  /** The screen with its colour and style escape sequences. */
  styledScreen(): string {
    return this.tmux("capture-pane", "-p", "-e", "-J", "-S", "-200", "-t", this.session).out;
  }

  /** Whether the program in the pane has exited. */
  exited(): boolean {
    return this.tmux("display-message", "-p", "-t", this.session, "#{pane_dead}").out.trim() === "1";
  }

  /** Poll the screen until `check` holds; fails with the screen when it does not in time. */
  async waitFor(check: (screen: string) => boolean, what: string, timeoutMs = 8000): Promise<string> {
    let screen = "";
    const holds = () => {
      screen = this.screen();
      return check(screen);
    };
    await until(what, holds, timeoutMs).catch(() => {
      throw new Error(`terminal: no ${what} within ${timeoutMs} ms; screen:\n${this.screen()}`);
    });
    return screen;
  }

  stop(): void {
    this.tmux("kill-server");
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

async function setup(): Promise<{ fake: FakeModel; home: TestHome; term: Terminal }> {
  const fake = await start.model();
  const home = start.home();
  home.writeConfig(providerToml(fake.url, { apiKey: "sk-fake-0000" }) + CHANNELS_OFF);
  const term = new Terminal();
  start.defer(() => term.stop());
  return { fake, home, term };
}

describe("fermix chat in a terminal", () => {
  const modes = [
    { mode: "in-process", noColor: true },
    { mode: "via the running daemon", noColor: false },
  ] as const;
  for (const { mode, noColor } of modes) {
    test(`${mode}${noColor ? ", NO_COLOR" : ""}: a prompt and its reply, /help, Ctrl-C stopping a slow turn, Ctrl-D to leave`, async () => {
      const { fake, home, term } = await setup();
      if (mode === "via the running daemon") {
        await start.daemon(home);
      }
      term.start({ ...home.env, NO_COLOR: noColor ? "1" : undefined });
      await term.waitFor((s) => s.includes(mode) && s.includes("›"), "banner and prompt");

      // A prompt and its reply.
      fake.reply(reply.text("Hello from the **fake** model."));
      term.type("hi there");
      term.key("Enter");
      await term.waitFor((s) => s.includes("Hello from the") && s.includes("fake model."), "the reply");
      expect(fake.requests).toHaveLength(1);
      expect(lastInputParts(fake.requests[0]!)[0]?.text).toBe("hi there");
      // Markdown is rendered, not shown raw; in colour only without NO_COLOR.
      expect(term.screen()).not.toContain("**fake**");
      const styled = term.styledScreen();
      if (noColor) expect(styled).not.toContain("\u001b[1m");
      else expect(styled).toContain("\u001b[1mfake");

      // /help lists the commands without asking the model.
      term.type("/help");
      term.key("Enter");
      await term.waitFor((s) => s.includes("/whoami") && s.includes("/stop"), "the command list");
      expect(fake.requests).toHaveLength(1);

      // Ctrl-C during a slow turn stops it: the provider request is aborted and the prompt comes back.
      fake.reply(reply.hang("I am still thinking"));
      term.type("write a very long essay");
      term.key("Enter");
      const [, hanging] = await fake.waitForRequests(2);
      // A progress indicator while waiting, NO_COLOR or not.
      await term.waitFor((s) => s.includes("thinking…"), "the progress spinner");
      const before = count(term.screen(), "›");
      term.key("C-c");
      await within(hanging!.untilAborted, "the provider request to be aborted");
      await term.waitFor((s) => count(s, "›") > before, "a fresh prompt after Ctrl-C");
      expect(term.exited()).toBe(false);
      expect(term.screen()).not.toContain("thinking…");

      // The chat still works afterwards.
      fake.reply(reply.text("Short answer instead."));
      term.type("just a short one");
      term.key("Enter");
      await term.waitFor((s) => s.includes("Short answer instead."), "the next reply");
      expect(fake.requests).toHaveLength(3);

      // Ctrl-D leaves.
      term.key("C-d");
      await term.waitFor(() => term.exited(), "the chat to exit");
    });
  }
});

describe("fermix chat: conversation control", () => {
  for (const mode of ["in-process", "via the running daemon"] as const) {
    for (const how of ["/stop", "Ctrl-C"] as const) {
      test(`${mode}, ${how}: a second message typed during a slow reply is dropped with it; nothing of it arrives after; the next one is answered`, async () => {
        const { fake, home, term } = await setup();
        if (mode === "via the running daemon") await start.daemon(home);
        term.start(home.env);
        await term.waitFor((s) => s.includes(mode) && s.includes("›"), "banner and prompt");

        fake.reply(reply.slow(400, "Slowly, ", "word ", "by ", "word, ", "an ", "essay ", "that ", "never ", "ends."), reply.text("A short answer."));
        term.type("write a slow essay");
        term.key("Enter");
        const [essay] = await fake.waitForRequests(1);
        const aborted = essay!.untilAborted.then(() => Date.now());
        // The keyboard is not held by the running reply: a second message goes in, and waits its turn.
        // The keys reach the chat in the order typed, and its lines go to the gateway in that order:
        // the second message is queued before the /stop (or Ctrl-C) after it is read.
        term.type("and then a second thing");
        term.key("Enter");
        let stoppedAt: number;
        if (how === "/stop") {
          term.type("/stop");
          term.key("Enter");
          stoppedAt = Date.now();
          await term.waitFor((s) => s.includes("Stopped 1 running reply, 1 queued message."), "the Stopped reply");
        } else {
          term.key("C-c");
          stoppedAt = Date.now();
          await term.waitFor((s) => s.includes("(stopping…)"), "the stop note");
        }
        expect((await within(aborted, "the essay request to be aborted")) - stoppedAt).toBeLessThan(1000);
        // A second message that was not dropped would reach the model as soon as the essay's turn ended, and
        // a word of the essay would be printed within its 400 ms pace: neither may happen within this window.
        await Bun.sleep(STRAY_MS);
        // The second message never reached the model, and nothing of the essay was printed.
        expect(fake.requests).toHaveLength(1);
        expect(term.screen()).not.toContain("Slowly, word");

        term.type("a short one now");
        term.key("Enter");
        await term.waitFor((s) => s.includes("A short answer."), "the next reply");
        expect(fake.requests).toHaveLength(2);
        expect(JSON.stringify(fake.requests[1]!.body)).not.toContain("a second thing");
        term.key("C-d");
        await term.waitFor(() => term.exited(), "the chat to exit");
      });
    }
  }
});
