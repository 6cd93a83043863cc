/**
 * Desktop actions, checked and turned into `xdotool` command lines — pure,
 * so what an action does to the display is read off its argv in tests. An
 * action arrives in the coordinates of the screenshots the model is shown
 * (./geometry.ts maps them to the display) and is checked for the fields
 * its kind needs before anything touches the display: a refusal names what
 * is missing, in words the model can act on.
 */
import type { DesktopAction } from "../../message/desktop.ts";
import type { Geometry } from "./geometry.ts";

/** The longest wait one action may ask for (ms). */
export const MAX_WAIT_MS = 10_000;
/** A wait without `ms`. */
export const DEFAULT_WAIT_MS = 1000;
/** Pixels of scrolling per wheel notch: scroll_x and scroll_y are pixels, the wheel moves in notches. */
export const PIXELS_PER_NOTCH = 100;
/** The most notches one scroll sends. */
const MAX_NOTCHES = 30;
/** The longest text one `type` action may carry. */
export const MAX_TYPE_CHARS = 4000;

const POINTER = new Set(["click", "double_click", "right_click", "move", "drag", "scroll"]);

/** Why an action cannot run as asked, or null when it can. Coordinates are checked against the screenshot's size. */
export function actionProblem(action: DesktopAction, shot: { width: number; height: number }): string | null {
  const inside = (x: number | undefined, y: number | undefined, what: string): string | null => {
    if (x === undefined || y === undefined) return `${action.action} needs ${what === "start" ? "x and y" : "to_x and to_y"}`;
    if (!Number.isFinite(x) || !Number.isFinite(y)) return `${what} coordinates must be numbers`;
    if (x < 0 || y < 0 || x >= shot.width || y >= shot.height)
      return `(${x}, ${y}) is outside the screen: x must be 0 to ${shot.width - 1}, y 0 to ${shot.height - 1}`;
    return null;
  };
  if (POINTER.has(action.action)) {
    const start = inside(action.x, action.y, "start");
    if (start) return start;
  }
  switch (action.action) {
    case "drag":
      return inside(action.to_x, action.to_y, "end");
    case "scroll":
      if ((action.scroll_x ?? 0) === 0 && (action.scroll_y ?? 0) === 0) return "scroll needs scroll_x or scroll_y (pixels; positive: right, down)";
      return null;
    case "type":
      if (action.text === undefined || action.text === "") return "type needs text";
      if (action.text.length > MAX_TYPE_CHARS) return `type takes at most ${MAX_TYPE_CHARS} characters at once`;
      return null;
    case "key":
      if (action.keys === undefined || action.keys.trim() === "") return 'key needs keys, e.g. "Return" or "ctrl+l"';
      return keysProblem(action.keys);
    case "wait":
      if (action.ms !== undefined && (!Number.isFinite(action.ms) || action.ms < 0 || action.ms > MAX_WAIT_MS)) return `wait takes ms from 0 to ${MAX_WAIT_MS}`;
      return null;
    default:
      return null;
  }
}

/** How long a wait action waits (ms). */
export const waitMs = (action: DesktopAction): number => action.ms ?? DEFAULT_WAIT_MS;

/** The xdotool invocations (arguments after `xdotool`) that perform an action on the display; none for screenshot and wait. */
export function xdotoolSteps(action: DesktopAction, geometry: Geometry): string[][] {
  const at = (x: number, y: number) => geometry.toDisplay(x, y).map(String);
  const [x, y] = action.x !== undefined && action.y !== undefined ? at(action.x, action.y) : ["0", "0"];
  switch (action.action) {
    case "click":
      return [["mousemove", "--sync", x!, y!, "click", "1"]];
    case "double_click":
      return [["mousemove", "--sync", x!, y!, "click", "--repeat", "2", "--delay", "80", "1"]];
    case "right_click":
      return [["mousemove", "--sync", x!, y!, "click", "3"]];
    case "move":
      return [["mousemove", "--sync", x!, y!]];
    case "drag": {
      const [tx, ty] = at(action.to_x ?? 0, action.to_y ?? 0);
      return [["mousemove", "--sync", x!, y!, "mousedown", "1", "sleep", "0.1", "mousemove", "--sync", tx!, ty!, "sleep", "0.1", "mouseup", "1"]];
    }
    case "scroll": {
      const steps: string[][] = [["mousemove", "--sync", x!, y!]];
      const wheel = (pixels: number, less: string, more: string) => {
        if (pixels === 0) return;
        const notches = Math.min(MAX_NOTCHES, Math.max(1, Math.round(Math.abs(pixels) / PIXELS_PER_NOTCH)));
        steps.push(["click", "--repeat", String(notches), "--delay", "20", pixels > 0 ? more : less]);
      };
      wheel(action.scroll_y ?? 0, "4", "5");
      wheel(action.scroll_x ?? 0, "6", "7");
      return steps;
    }
    case "type":
      return [["type", "--delay", "12", "--", action.text ?? ""]];
    case "key":
      return [["key", "--delay", "30", "--", ...keyCombos(action.keys ?? "")]];
    case "screenshot":
    case "wait":
      return [];
  }
}

/**
 * Key names as people and models write them, to X keysyms xdotool knows:
 * "enter" and "ENTER" are Return, "cmd" and "win" are super, "pgdn" is Next.
 * A name not listed passes as written (a keysym such as "F5" or "a").
 */
const KEY_NAMES: Readonly<Record<string, string>> = {
  enter: "Return",
  return: "Return",
  esc: "Escape",
  escape: "Escape",
  tab: "Tab",
  space: "space",
  backspace: "BackSpace",
  delete: "Delete",
  del: "Delete",
  insert: "Insert",
  home: "Home",
  end: "End",
  pageup: "Prior",
  pgup: "Prior",
  pagedown: "Next",
  pgdn: "Next",
  up: "Up",
  down: "Down",
  left: "Left",
  right: "Right",
  arrowup: "Up",
  arrowdown: "Down",
  arrowleft: "Left",
  arrowright: "Right",
  ctrl: "ctrl",
  control: "ctrl",
  alt: "alt",
  option: "alt",
  shift: "shift",
  cmd: "super",
  command: "super",
  meta: "super",
  super: "super",
  win: "super",
  windows: "super",
  capslock: "Caps_Lock",
  printscreen: "Print",
  "/": "slash",
  "\\": "backslash",
  "-": "minus",
  "+": "plus",
  "=": "equal",
  ".": "period",
  ",": "comma",
  ";": "semicolon",
  "'": "apostrophe",
  "`": "grave",
  "[": "bracketleft",
  "]": "bracketright",
};

/** One key name as an X keysym. */
export function keysym(name: string): string {
  const mapped = KEY_NAMES[name.toLowerCase()];
  if (mapped) return mapped;
  // A single letter is its keysym in lower case (with shift it is still the key's name); F-keys as F1…F24.
  if (/^[a-z]$/i.test(name)) return name.toLowerCase();
  if (/^f\d{1,2}$/i.test(name)) return name.toUpperCase();
  return name;
}

/** "ctrl+l Return" → ["ctrl+l", "Return"]: combinations pressed one after the other, each as keysyms joined by "+". */
export function keyCombos(keys: string): string[] {
  return keys
    .trim()
    .split(/\s+/)
    .map((combo) =>
      // A lone "+" is the key itself, not a separator.
      combo === "+" ? keysym("+") : combo.split("+").filter(Boolean).map(keysym).join("+"),
    );
}

function keysProblem(keys: string): string | null {
  for (const combo of keyCombos(keys)) {
    for (const key of combo.split("+"))
      if (!/^[A-Za-z0-9_]+$/.test(key)) return `"${key}" is not a key name xdotool knows (use names such as Return, ctrl, a, F5)`;
  }
  return null;
}
