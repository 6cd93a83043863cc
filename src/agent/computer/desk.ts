/**
 * The owner's desktop: at most one session at a time (Fermix has one owner,
 * whichever channel they write from), started by the first action that
 * needs it and torn down when nobody used it for `idle_minutes`, at `/stop`,
 * and when the daemon stops. `/pause` keeps it and refuses every action
 * until `/resume`. A display that dies on its own is cleaned up and
 * reported once, in the conversation that used it last. Sessions a crashed
 * daemon left behind (their folders under `<home>/desktop/`) are ended when
 * the next one starts.
 *
 * The settings are read when used, so a reload applies to the next session.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { otherProcessRuns } from "../../kernel/pid.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { DesktopSession, type SessionOptions } from "./session.ts";

export interface DeskSettings {
  display: "virtual" | "host";
  width: number;
  height: number;
  start: readonly string[];
  idleMs: number;
}

/** Where a session tells its owner something of its own accord (a display that died, an idle end). */
export interface DeskReporter {
  say(markdown: string): Promise<void>;
}

export interface DeskDeps {
  settings(): DeskSettings;
  /** `<home>/desktop`: one private folder per session. */
  dir: string;
  /** The daemon's environment. */
  env: Record<string, string | undefined>;
  /** How the start programs run, read when a session starts (the sandbox's environment and network, bubblewrap). */
  launch(): SessionOptions["launch"];
  telemetry: Telemetry;
  log: Logger;
}

/** What the status page, /tasks and the commands show of the desktop. */
export interface DeskStatus {
  state: "running" | "paused";
  display: string;
  kind: "virtual" | "host";
  startedAt: number;
  actions: number;
  lastUsedAt: number;
}

export class ComputerDesk {
  private current: DesktopSession | null = null;
  private starting: Promise<DesktopSession> | null = null;
  private reporter: DeskReporter | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private swept = false;

  constructor(private readonly deps: DeskDeps) {}

  /** The running session, or null. */
  get session(): DesktopSession | null {
    return this.current;
  }

  status(): DeskStatus | null {
    const session = this.current;
    if (!session) return null;
    return {
      state: session.paused ? "paused" : "running",
      display: session.display.name,
      kind: session.display.kind,
      startedAt: session.startedAt,
      actions: session.actions,
      lastUsedAt: session.lastUsedAt,
    };
  }

  /**
   * The session, started when none runs; `started` says it was started now. `reporter` is where it
   * reports on its own from now on. Throws DisplayUnavailable when no display can be had.
   */
  async acquire(reporter: DeskReporter): Promise<{ session: DesktopSession; started: boolean }> {
    if (this.closed) throw new Error("the assistant is shutting down");
    this.reporter = reporter;
    if (this.current?.alive()) return { session: this.current, started: false };
    if (this.current) await this.end("died");
    this.starting ??= this.begin().finally(() => {
      this.starting = null;
    });
    return { session: await this.starting, started: true };
  }

  /** Mark a use of the session: the idle clock starts again. */
  touch(): void {
    if (!this.current) return;
    this.current.lastUsedAt = Date.now();
    this.armIdle();
  }

  /** /pause: "none" when no session runs. */
  pause(): "paused" | "already" | "none" {
    if (!this.current) return "none";
    if (this.current.paused) return "already";
    this.current.paused = true;
    this.deps.log.info("desktop paused by the owner", { display: this.current.display.name });
    return "paused";
  }

  /** /resume: actions are allowed again; nothing restarts by itself. */
  resume(): "resumed" | "not_paused" | "none" {
    if (!this.current) return "none";
    if (!this.current.paused) return "not_paused";
    this.current.paused = false;
    this.touch();
    this.deps.log.info("desktop resumed by the owner", { display: this.current.display.name });
    return "resumed";
  }

  /** Tear the session down (/stop); false when none ran. */
  async stop(): Promise<boolean> {
    const pending = this.starting;
    if (pending) await pending.catch(() => undefined);
    if (!this.current) return false;
    await this.end("stopped");
    return true;
  }

  /** The screen now, as PNG at the model's size; null when no session runs or it cannot be shot. */
  async screenshot(): Promise<Uint8Array | null> {
    if (!this.current?.alive()) return null;
    try {
      return await this.current.screenshot();
    } catch (error) {
      this.deps.log.warn("a screenshot for the owner failed", { error: describeError(error) });
      return null;
    }
  }

  /** At shutdown: end the session; no later one starts. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }

  private async begin(): Promise<DesktopSession> {
    const settings = this.deps.settings();
    if (!this.swept) {
      this.swept = true;
      sweepLeftovers(this.deps.dir, this.deps.log);
    }
    mkdirSync(this.deps.dir, { recursive: true, mode: 0o700 });
    const session = await DesktopSession.start({
      display: settings.display,
      width: settings.width,
      height: settings.height,
      start: settings.start,
      dir: join(this.deps.dir, `session-${Date.now().toString(36)}-${process.pid}`),
      env: this.deps.env,
      launch: this.deps.launch(),
      log: this.deps.log,
    });
    if (this.closed) {
      await session.stop();
      throw new Error("the assistant is shutting down");
    }
    this.current = session;
    this.armIdle();
    void session.died.then(() => {
      if (this.current !== session) return;
      this.deps.log.error("the desktop's display stopped on its own; the session is cleaned up", { display: session.display.name });
      void this.end("died").then(() =>
        this.reporter
          ?.say("⚠️ The desktop session ended unexpectedly (its display stopped) and was cleaned up. The next desktop action starts a new one.")
          .catch(() => {}),
      );
    });
    return session;
  }

  private armIdle(delayMs = this.deps.settings().idleMs): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const session = this.current;
      if (!session) return;
      // Used since the timer was armed (an action in flight touches it when done): wait out the rest only,
      // so the desktop goes at idle_minutes after its last use, not up to twice that.
      const ms = this.deps.settings().idleMs;
      const idle = Date.now() - session.lastUsedAt;
      if (idle < ms) {
        this.armIdle(ms - idle);
        return;
      }
      this.deps.log.info("desktop session idle; tearing it down", { display: session.display.name, idle_ms: idle });
      void this.end("idle");
    }, delayMs);
    this.idleTimer.unref?.();
  }

  private async end(why: "stopped" | "idle" | "died"): Promise<void> {
    const session = this.current;
    if (!session) return;
    this.current = null;
    clearTimeout(this.idleTimer);
    try {
      await session.stop();
    } catch (error) {
      this.deps.log.error("the desktop session did not stop cleanly", { why, error: describeError(error) });
    }
  }
}

/**
 * End what a crashed daemon's sessions left running — every process whose
 * command line or environment names a leftover session's cookie file — and
 * remove their folders. Linux only (it reads /proc); elsewhere the folders go.
 */
export function sweepLeftovers(dir: string, log: Logger): void {
  let folders: string[];
  try {
    // A folder names the process that made it: one still running (`fermix ask` beside the daemon) keeps its session.
    folders = readdirSync(dir).filter((name) => name.startsWith("session-") && !otherProcessRuns(Number(name.split("-").at(-1))));
  } catch {
    return;
  }
  if (folders.length === 0) return;
  const cookies = folders.map((name) => join(dir, name, "Xauthority"));
  let ended = 0;
  for (const pid of process.platform === "linux" ? readdirSync("/proc").filter((n) => /^\d+$/.test(n)) : []) {
    if (Number(pid) === process.pid) continue;
    let text = "";
    try {
      text = `${readFileSync(`/proc/${pid}/cmdline`, "latin1")}\0${readFileSync(`/proc/${pid}/environ`, "latin1")}`;
    } catch {
      continue;
    }
    if (!cookies.some((cookie) => text.includes(cookie))) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
      ended++;
    } catch {
      // gone meanwhile
    }
  }
  for (const name of folders) rmSync(join(dir, name), { recursive: true, force: true });
  log.warn("desktop sessions left by an earlier run were ended", { sessions: folders.length, processes: ended });
}
