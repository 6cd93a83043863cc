/**
 * What runs on a virtual display besides the X server: a window manager,
 * then the programs of `[fermix_core.computer] start` (a terminal, Chromium…).
 *
 * The programs get the command sandbox's environment (src/agent/sandbox/
 * policy.ts: nothing of the daemon's own beyond what its rules pass), a home
 * of their own in the session's folder (a browser profile, shell history),
 * the workspace as their working folder, and the display's variables. Where
 * bubblewrap runs, each is started under it with a private process
 * namespace (when it ends, everything it started ends with it) and, when the
 * sandbox's network is off, without the network. The files they may reach
 * are the daemon user's: bubblewrap's path rules need a socket the display
 * cannot do without (docs/computer-use.md says what that means). A browser
 * also gets its own profile folder and, where it cannot be cut off by
 * bubblewrap, a proxy that goes nowhere when the network is off.
 *
 * Pure: the argv each program is started with.
 */
import { basename, join } from "node:path";
import type { DisplayEnv } from "./display.ts";

/** Window managers tried in order; the first installed one runs. */
export const WINDOW_MANAGERS = ["openbox", "matchbox-window-manager", "icewm", "fluxbox"] as const;

export interface LaunchContext {
  /** bubblewrap's path where it runs here; null: programs run without it. */
  bwrap: string | null;
  /** The sandbox's network setting in force. */
  network: boolean;
  /** The session's home for its programs. */
  home: string;
  /** The daemon runs as root (Chromium then needs --no-sandbox). */
  root: boolean;
  /** Where programs start (the workspace). */
  cwd: string;
}

const BROWSERS = /^(chromium|chromium-browser|google-chrome|google-chrome-stable|chrome)$/;

/** A `start` entry as argv: split on spaces, no shell. */
export function splitCommand(command: string): string[] {
  return command.trim().split(/\s+/).filter(Boolean);
}

/** The argv a program is started with: a browser's own flags, and bubblewrap around it where it runs. */
export function programArgv(argv: readonly string[], context: LaunchContext): string[] {
  const program = [...argv];
  if (BROWSERS.test(basename(argv[0] ?? ""))) {
    program.push(`--user-data-dir=${join(context.home, "browser")}`, "--no-first-run", "--no-default-browser-check", "--disable-dev-shm-usage");
    if (context.root) program.push("--no-sandbox");
    // Without bubblewrap there is no network namespace to leave it out of: a proxy that answers nothing stands in.
    if (!context.network && !context.bwrap) program.push("--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>");
  }
  if (!context.bwrap) return program;
  return [
    context.bwrap,
    "--die-with-parent",
    "--dev-bind",
    "/",
    "/",
    "--unshare-pid",
    "--proc",
    "/proc",
    ...(context.network ? [] : ["--unshare-net"]),
    "--chdir",
    context.cwd,
    "--",
    ...program,
  ];
}

/** A program's environment: the sandbox's, its own home, and the display. */
export function programEnv(sandboxEnv: Readonly<Record<string, string>>, display: DisplayEnv, home: string): Record<string, string> {
  const env: Record<string, string> = { ...sandboxEnv, HOME: home, DISPLAY: display.DISPLAY };
  if (display.XAUTHORITY) env.XAUTHORITY = display.XAUTHORITY;
  return env;
}
