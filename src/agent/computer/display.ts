/**
 * The X display a desktop session draws on.
 *
 * `virtual`: a private display of its own. Xvfb listens on its Unix socket
 * only (`-nolisten tcp -nolisten local`: no TCP port, no abstract socket)
 * and admits only clients holding the cookie it was started with, made with
 * `xauth` into a file in the session's 0700 folder. A display number is
 * taken the way X servers take one, by its lock file (`/tmp/.X<n>-lock`):
 * a number in use is skipped, never taken over. Ready when an X client
 * (`xdotool`) holding the cookie gets an answer. The server ends with the
 * daemon, even one killed outright (`withParent`).
 *
 * `host`: the display the daemon's environment names (`DISPLAY`, and
 * `XAUTHORITY` when set): X11 only. A Wayland session and macOS are refused
 * with a sentence saying so, before anything is started.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../kernel/errors.ts";
import { otherProcessRuns } from "../../kernel/pid.ts";
import { type GroupProcess, runShort, startGroup } from "./processes.ts";

/** The X client environment of a display: what every program and tool on it is given. */
export interface DisplayEnv {
  DISPLAY: string;
  XAUTHORITY?: string;
}

export interface Display {
  kind: "virtual" | "host";
  /** ":93". */
  name: string;
  env: DisplayEnv;
  width: number;
  height: number;
  /** The X server (virtual only): a session watches it to notice a display that died. */
  server?: GroupProcess;
  /** Stop the X server (virtual; a host display is left as it is). */
  stop(): Promise<void>;
}

/** The display cannot be had: the sentence says why, for the model and the owner. */
export class DisplayUnavailable extends Error {
  override name = "DisplayUnavailable";
}

/** Where the search for a free display number starts, and how far it goes. */
const FIRST_DISPLAY = 90;
const DISPLAYS_TRIED = 60;
/** How long a new X server may take to answer (ms). */
const READY_TIMEOUT_MS = 10_000;
const CHECK_TIMEOUT_MS = 3000;

/** Why the host display cannot be driven, or null when it can: X11 only, and not on macOS. */
export function hostDisplayProblem(platform: NodeJS.Platform, env: Record<string, string | undefined>): string | null {
  if (platform === "darwin") return 'driving the macOS desktop is not supported yet: use display = "virtual" (which needs Xvfb)';
  if (env.XDG_SESSION_TYPE === "wayland" || (env.WAYLAND_DISPLAY && !env.DISPLAY))
    return 'this is a Wayland session, which is not supported yet: only an X11 display (DISPLAY) can be driven; use display = "virtual"';
  if (!env.DISPLAY) return "no X display to drive: DISPLAY is not set in the daemon's environment";
  return null;
}

/** The host display of `env`. */
export async function openHostDisplay(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): Promise<Display> {
  const problem = hostDisplayProblem(platform, env);
  if (problem) throw new DisplayUnavailable(problem);
  const displayEnv: DisplayEnv = { DISPLAY: env.DISPLAY!, ...(env.XAUTHORITY ? { XAUTHORITY: env.XAUTHORITY } : {}) };
  const size = await displaySize(displayEnv, env.PATH);
  if (!size) throw new DisplayUnavailable(`the display ${env.DISPLAY} does not answer`);
  return { kind: "host", name: env.DISPLAY!, env: displayEnv, ...size, stop: async () => {} };
}

export interface VirtualOptions {
  width: number;
  height: number;
  /** The session's private folder (0700): the cookie file goes there. */
  dir: string;
  /** PATH to find Xvfb, xauth and xdotool on. */
  path: string;
}

/** Start a private virtual display. */
export async function startVirtualDisplay(options: VirtualOptions): Promise<Display> {
  const env = { PATH: options.path };
  const cookie = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  const authFile = join(options.dir, "Xauthority");
  const first = FIRST_DISPLAY + Math.floor(Math.random() * DISPLAYS_TRIED);
  for (let i = 0; i < DISPLAYS_TRIED; i++) {
    const number = FIRST_DISPLAY + ((first - FIRST_DISPLAY + i) % DISPLAYS_TRIED);
    if (displayTaken(number)) continue;
    const name = `:${number}`;
    const auth = await runShort(["xauth", "-q", "-f", authFile, "add", name, ".", cookie], env, CHECK_TIMEOUT_MS);
    if (auth.code !== 0) throw new DisplayUnavailable(`xauth could not make the display's cookie: ${auth.stderr.trim() || `exit ${auth.code}`}`);
    const server = startGroup(
      withParent(
        [
          "Xvfb",
          name,
          "-auth",
          authFile,
          "-nolisten",
          "tcp",
          "-nolisten",
          "local",
          // Without it the server resets whenever its last client leaves (the readiness check, a screenshot),
          // and refuses connections while it does.
          "-noreset",
          "-screen",
          "0",
          `${options.width}x${options.height}x24`,
          "-nocursor",
        ],
        options.path,
      ),
      { env, cwd: options.dir, name: "Xvfb" },
    );
    const displayEnv: DisplayEnv = { DISPLAY: name, XAUTHORITY: authFile };
    const ready = await untilAnswers(displayEnv, options.path, server);
    if (ready) return { kind: "virtual", name, env: displayEnv, width: options.width, height: options.height, server, stop: () => server.stop() };
    await server.stop();
    // Another server took the number between the look and the start: try the next one.
    if (/already active/i.test(server.output())) continue;
    throw new DisplayUnavailable(`Xvfb did not start: ${lastLine(server.output()) || "no answer"}`);
  }
  throw new DisplayUnavailable(`no free display number between :${FIRST_DISPLAY} and :${FIRST_DISPLAY + DISPLAYS_TRIED - 1}`);
}

/** A display number is taken while its lock file names a running process (a server killed outright leaves its lock behind). */
function displayTaken(number: number): boolean {
  try {
    const pid = Number(readFileSync(`/tmp/.X${number}-lock`, "latin1").trim());
    return otherProcessRuns(pid) || pid === process.pid;
  } catch {
    return false;
  }
}

/**
 * `argv` made to end with the daemon (SIGTERM when it dies, even by SIGKILL), through util-linux's
 * setpriv where it is installed: the X server and the window manager run in sessions of their own,
 * and nothing else would end them after a crash. Without setpriv, the next session's start sweeps them.
 */
export function withParent(argv: readonly string[], path: string): string[] {
  const setpriv = Bun.which("setpriv", { PATH: path });
  return setpriv ? [setpriv, "--pdeathsig", "TERM", "--", ...argv] : [...argv];
}

/** The display's size as an X client sees it, or null when it does not answer. */
export async function displaySize(env: DisplayEnv, path: string | undefined): Promise<{ width: number; height: number } | null> {
  try {
    const result = await runShort(["xdotool", "getdisplaygeometry"], { ...env, PATH: path ?? "/usr/bin:/bin" } as Record<string, string>, CHECK_TIMEOUT_MS);
    const match = /^(\d+)\s+(\d+)/.exec(new TextDecoder().decode(result.stdout));
    return result.code === 0 && match ? { width: Number(match[1]), height: Number(match[2]) } : null;
  } catch (error) {
    throw new DisplayUnavailable(`xdotool could not be run: ${describeError(error)}`);
  }
}

/** Ask until the new server answers, it exits, or the time is up. */
async function untilAnswers(env: DisplayEnv, path: string, server: GroupProcess): Promise<boolean> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let delay = 20;
  while (Date.now() < deadline && server.running()) {
    if (await displaySize(env, path)) return true;
    await Promise.race([Bun.sleep(delay), server.exited]);
    delay = Math.min(200, delay * 2);
  }
  return false;
}

const lastLine = (text: string) => text.trim().split("\n").filter(Boolean).at(-1) ?? "";
