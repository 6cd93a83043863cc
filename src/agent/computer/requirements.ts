/**
 * What a desktop needs installed, for `fermix doctor` and for the refusal a
 * model gets when it is missing: the X server and X tools of a virtual
 * display, the tools every display needs (xdotool, ImageMagick's import),
 * a window manager, and the start programs. Pure: `which` is handed in.
 */
import { type DisplayEnv, hostDisplayProblem } from "./display.ts";
import { splitCommand, WINDOW_MANAGERS } from "./programs.ts";

/** The Debian packages of a virtual desktop. */
export const INSTALL_DESKTOP = "Debian/Ubuntu: sudo apt-get install xvfb xdotool imagemagick xauth x11-utils openbox xterm";

export interface DesktopNeeds {
  /** Commands that must be there, missing: the desktop cannot work. */
  missing: string[];
  /** What is there, for the doctor's line. */
  found: string[];
  /** No window manager: windows are not focused on a click. */
  noWindowManager: boolean;
  /** Start programs not installed: skipped. */
  skipped: string[];
  /** Why the host display cannot be driven. */
  hostProblem: string | null;
}

/** What a desktop of `settings` needs, and what of it `which` finds. */
export function desktopNeeds(
  settings: { display: "virtual" | "host"; start: readonly string[] },
  which: (command: string) => string | null,
  host: { platform: NodeJS.Platform; env: Record<string, string | undefined> | Partial<DisplayEnv> },
): DesktopNeeds {
  const tools = settings.display === "virtual" ? ["Xvfb", "xauth", "xprop", "xdotool", "import"] : ["xdotool", "import"];
  const virtual = settings.display === "virtual";
  return {
    missing: tools.filter((tool) => which(tool) === null),
    found: tools.filter((tool) => which(tool) !== null),
    noWindowManager: virtual && WINDOW_MANAGERS.every((manager) => which(manager) === null),
    skipped: virtual ? settings.start.map((command) => splitCommand(command)[0] ?? command).filter((program) => which(program) === null) : [],
    hostProblem: virtual ? null : hostDisplayProblem(host.platform, host.env as Record<string, string | undefined>),
  };
}
