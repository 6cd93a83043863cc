/**
 * One desktop session: its display (a private virtual one with a window
 * manager and the start programs, or the host's), the actions done on it
 * through `xdotool`, and its screenshots as PNG (ImageMagick's `import`,
 * scaled to the size the model is shown: ./geometry.ts). Each command it
 * runs has a timeout, so an action never hangs a turn. Stopping it ends
 * every process it started, by process group.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { sleep } from "../../kernel/wait.ts";
import type { DesktopAction } from "../../message/desktop.ts";
import { waitMs, xdotoolSteps } from "./actions.ts";
import { type Display, DisplayUnavailable, openHostDisplay, startVirtualDisplay, withParent } from "./display.ts";
import { type Geometry, geometryFor, pngSize } from "./geometry.ts";
import { type GroupProcess, runShort, startGroup } from "./processes.ts";
import { type LaunchContext, programArgv, programEnv, splitCommand, WINDOW_MANAGERS } from "./programs.ts";

/** The longest one xdotool or import call may take (ms): past it the action fails and the turn goes on. */
export const ACTION_TIMEOUT_MS = 10_000;
/** After an action, a moment for the screen to redraw before it is shot (ms). */
const SETTLE_MS = 150;

export interface SessionOptions {
  display: "virtual" | "host";
  width: number;
  height: number;
  /** `[fermix_core.computer] start`: the programs of a virtual display. */
  start: readonly string[];
  /** The session's private folder (made 0700; removed when it stops). */
  dir: string;
  /** The daemon's environment: PATH, and DISPLAY/XAUTHORITY for a host display. */
  env: Record<string, string | undefined>;
  /** How the start programs run: the sandbox's environment and network, bubblewrap where it runs. */
  launch: Omit<LaunchContext, "home"> & { env: Readonly<Record<string, string>> };
  log: Logger;
}

export class DesktopSession {
  readonly startedAt = Date.now();
  paused = false;
  /** Actions done since it started. */
  actions = 0;
  lastUsedAt = Date.now();
  private stopping = false;
  /** Resolves when the display dies while nobody stopped it. */
  readonly died: Promise<void>;

  private constructor(
    readonly display: Display,
    readonly geometry: Geometry,
    private readonly programs: GroupProcess[],
    private readonly dir: string,
    private readonly path: string,
    private readonly log: Logger,
  ) {
    this.died = display.server ? display.server.exited.then(() => (this.stopping ? new Promise<void>(() => {}) : undefined)) : new Promise(() => {});
  }

  /** Start a session: its display, and on a virtual one the window manager and the start programs. */
  static async start(options: SessionOptions): Promise<DesktopSession> {
    const path = options.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    let display: Display;
    try {
      display =
        options.display === "host"
          ? await openHostDisplay(options.env)
          : await startVirtualDisplay({ width: options.width, height: options.height, dir: options.dir, path });
    } catch (error) {
      rmSync(options.dir, { recursive: true, force: true });
      throw error instanceof DisplayUnavailable ? error : new DisplayUnavailable(describeError(error));
    }
    const programs: GroupProcess[] = [];
    if (display.kind === "virtual") {
      const home = join(options.dir, "home");
      mkdirSync(home, { recursive: true, mode: 0o700 });
      const manager: string | undefined = WINDOW_MANAGERS.map((name) => Bun.which(name, { PATH: path })).find((found) => found !== null);
      if (manager) {
        programs.push(
          startGroup(withParent([manager], path), { env: programEnv({ PATH: path, LANG: "C.UTF-8" }, display.env, home), cwd: home, name: "window manager" }),
        );
        // A window mapped while the manager starts up may be missed by it (never focused): programs wait for it.
        if (!(await windowManagerReady(display.env, path)))
          options.log.warn("the window manager did not say it is ready; starting the programs anyway", {
            manager,
            running: programs[0]!.running(),
            output: programs[0]!.output().split("\n").at(-1) ?? "",
          });
      } else options.log.warn("no window manager found: the desktop runs without one", { tried: WINDOW_MANAGERS.join(", ") });
      const context: LaunchContext = { ...options.launch, home };
      const env = programEnv(options.launch.env, display.env, home);
      for (const command of options.start) {
        const argv = splitCommand(command);
        const found = argv[0] ? Bun.which(argv[0], { PATH: env.PATH ?? path }) : null;
        if (!found) {
          options.log.info("a start program is not installed; skipped", { program: argv[0] ?? command });
          continue;
        }
        programs.push(startGroup(programArgv([found, ...argv.slice(1)], context), { env, cwd: options.launch.cwd, name: argv[0]! }));
      }
      // The first screenshot shows the programs: wait (a little) for their windows.
      const expected = programs.length - (manager ? 1 : 0);
      if (manager && expected > 0 && !(await windowsShown(display.env, path, expected)))
        options.log.warn("not every start program showed a window in time", { expected, programs: options.start.join(", ") });
    }
    options.log.info("desktop session started", {
      display: display.name,
      kind: display.kind,
      width: display.width,
      height: display.height,
      programs: programs.length,
    });
    return new DesktopSession(display, geometryFor(display.width, display.height), programs, options.dir, path, options.log);
  }

  /** Do one action (screenshot and wait touch nothing). Throws with xdotool's words when it fails. */
  async perform(action: DesktopAction, signal?: AbortSignal): Promise<void> {
    this.lastUsedAt = Date.now();
    if (action.action === "wait") {
      await sleep(waitMs(action), signal);
      return;
    }
    for (const step of xdotoolSteps(action, this.geometry)) {
      const result = await runShort(["xdotool", ...step], this.clientEnv(), ACTION_TIMEOUT_MS);
      if (result.code !== 0)
        throw new Error(
          `xdotool ${step[0]} failed: ${result.stderr.trim().split("\n").at(-1) || (result.code === null ? "timed out" : `exit ${result.code}`)}`,
        );
    }
    if (action.action !== "screenshot") await sleep(SETTLE_MS, signal);
  }

  /** The screen as PNG, at the size the model is shown. */
  async screenshot(): Promise<Uint8Array> {
    const { shot, display } = this.geometry;
    const resize = shot.width === display.width && shot.height === display.height ? [] : ["-resize", `${shot.width}x${shot.height}!`];
    const result = await runShort(["import", "-silent", "-window", "root", ...resize, "png:-"], this.clientEnv(), ACTION_TIMEOUT_MS);
    if (result.code !== 0 || !pngSize(result.stdout))
      throw new Error(`the screenshot failed: ${result.stderr.trim().split("\n").at(-1) || (result.code === null ? "timed out" : `exit ${result.code}`)}`);
    this.lastUsedAt = Date.now();
    return result.stdout;
  }

  /** Whether the display still runs. */
  alive(): boolean {
    return !this.display.server || this.display.server.running();
  }

  /** End the programs, then the display, and remove the session's folder. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await Promise.all(this.programs.map((p) => p.stop()));
    await this.display.stop();
    rmSync(this.dir, { recursive: true, force: true });
    this.log.info("desktop session stopped", { display: this.display.name, actions: this.actions });
  }

  private clientEnv(): Record<string, string> {
    return { ...this.display.env, PATH: this.path };
  }
}

/** How long a window manager may take to announce itself, and the start programs to show their windows (ms). */
const MANAGER_READY_MS = 5000;
const WINDOWS_SHOWN_MS = 8000;

/** Poll a property of the root window (xprop) until `ready` says yes; false at the timeout or when xprop cannot run. */
async function untilRootSays(env: Display["env"], path: string, property: string, ready: (text: string) => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 20; Date.now() < deadline; delay = Math.min(200, delay * 2)) {
    const result = await runShort(["xprop", "-root", property], { ...env, PATH: path }, ACTION_TIMEOUT_MS).catch(() => null);
    if (!result) return false;
    if (ready(new TextDecoder().decode(result.stdout))) return true;
    await sleep(delay);
  }
  return false;
}

/** The window manager announced itself on the root window (_NET_SUPPORTING_WM_CHECK). */
const windowManagerReady = (env: Display["env"], path: string) =>
  untilRootSays(env, path, "_NET_SUPPORTING_WM_CHECK", (text) => /window id #/.test(text), MANAGER_READY_MS);

/** The window manager lists at least `count` windows (_NET_CLIENT_LIST). */
const windowsShown = (env: Display["env"], path: string, count: number) =>
  untilRootSays(env, path, "_NET_CLIENT_LIST", (text) => (text.match(/0x[0-9a-f]+/gi) ?? []).length >= count, WINDOWS_SHOWN_MS);
