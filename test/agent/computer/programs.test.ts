/**
 * How the desktop's programs are started (pure argv): under bubblewrap in a
 * process namespace of their own, without the network while the sandbox's
 * network is off; a browser with its own profile, and where bubblewrap is
 * missing a proxy that goes nowhere. What a desktop needs installed, and
 * which host displays are refused.
 */
import { describe, expect, test } from "bun:test";
import { hostDisplayProblem } from "../../../src/agent/computer/display.ts";
import { programArgv, programEnv, splitCommand } from "../../../src/agent/computer/programs.ts";
import { desktopNeeds } from "../../../src/agent/computer/requirements.ts";

const context = { bwrap: "/usr/bin/bwrap", network: false, home: "/h/session/home", root: false, cwd: "/h/workspace" };

describe("the start programs", () => {
  test("under bubblewrap: dies with the daemon, its own process namespace, no network while the sandbox has none", () => {
    const argv = programArgv(["/usr/bin/xterm", "-geometry", "80x20"], context);
    expect(argv.slice(0, 2)).toEqual(["/usr/bin/bwrap", "--die-with-parent"]);
    expect(argv).toContain("--unshare-pid");
    expect(argv).toContain("--unshare-net");
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual(["/usr/bin/xterm", "-geometry", "80x20"]);
    expect(argv.slice(argv.indexOf("--chdir"), argv.indexOf("--chdir") + 2)).toEqual(["--chdir", "/h/workspace"]);
    expect(programArgv(["/usr/bin/xterm"], { ...context, network: true })).not.toContain("--unshare-net");
  });

  test("a browser gets its own profile; as root it needs --no-sandbox; without bubblewrap and network, a proxy to nowhere", () => {
    const wrapped = programArgv(["/usr/bin/chromium"], { ...context, root: true });
    expect(wrapped).toContain("--user-data-dir=/h/session/home/browser");
    expect(wrapped).toContain("--no-sandbox");
    expect(wrapped.some((a) => a.startsWith("--proxy-server"))).toBe(false);
    const bare = programArgv(["/usr/bin/chromium"], { ...context, bwrap: null });
    expect(bare[0]).toBe("/usr/bin/chromium");
    expect(bare).toContain("--proxy-server=http://127.0.0.1:9");
    expect(programArgv(["/usr/bin/chromium"], { ...context, bwrap: null, network: true }).some((a) => a.startsWith("--proxy-server"))).toBe(false);
  });

  test("a start entry is split on spaces, no shell; the environment is the sandbox's, the session's home and the display's", () => {
    expect(splitCommand("  xterm  -e 'top'  ")).toEqual(["xterm", "-e", "'top'"]);
    const env = programEnv({ PATH: "/usr/bin", HOME: "/h/workspace", LANG: "C.UTF-8" }, { DISPLAY: ":93", XAUTHORITY: "/h/a" }, "/h/home");
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/h/home", LANG: "C.UTF-8", DISPLAY: ":93", XAUTHORITY: "/h/a" });
  });
});

describe("what a desktop needs", () => {
  const which = (installed: string[]) => (command: string) => (installed.includes(command) ? `/usr/bin/${command}` : null);
  const host = { platform: "linux" as const, env: {} };

  test("a virtual display: the X server and tools; a window manager; the start programs", () => {
    const all = ["Xvfb", "xauth", "xprop", "xdotool", "import", "openbox", "xterm"];
    expect(desktopNeeds({ display: "virtual", start: ["xterm", "chromium --incognito"] }, which(all), host)).toEqual({
      missing: [],
      found: ["Xvfb", "xauth", "xprop", "xdotool", "import"],
      noWindowManager: false,
      skipped: ["chromium"],
      hostProblem: null,
    });
    const bare = desktopNeeds({ display: "virtual", start: [] }, which(["xdotool"]), host);
    expect(bare.missing).toEqual(["Xvfb", "xauth", "xprop", "import"]);
    expect(bare.noWindowManager).toBe(true);
  });

  test("the host display: X11 through DISPLAY; Wayland and macOS refused, saying so", () => {
    expect(hostDisplayProblem("linux", { DISPLAY: ":0" })).toBeNull();
    expect(hostDisplayProblem("linux", {})).toContain("DISPLAY is not set");
    expect(hostDisplayProblem("linux", { WAYLAND_DISPLAY: "wayland-0" })).toContain("Wayland");
    expect(hostDisplayProblem("linux", { DISPLAY: ":0", XDG_SESSION_TYPE: "wayland" })).toContain("not supported yet");
    expect(hostDisplayProblem("darwin", { DISPLAY: ":0" })).toContain("macOS");
    expect(desktopNeeds({ display: "host", start: ["xterm"] }, which(["xdotool", "import"]), { platform: "darwin", env: {} }).hostProblem).toContain("macOS");
  });
});
