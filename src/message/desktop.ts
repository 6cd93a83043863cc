/**
 * The words of computer use, shared by the model side and the desktop: one
 * action as Fermix speaks it (the fields of the `computer` function tool,
 * and what a provider's native computer call is translated into), and a
 * safety check a provider raises on a native call, which only the owner
 * may acknowledge. Types only.
 */

/** What an action does. */
export type DesktopActionKind = "screenshot" | "click" | "double_click" | "right_click" | "move" | "drag" | "scroll" | "type" | "key" | "wait";

export const DESKTOP_ACTION_KINDS: readonly DesktopActionKind[] = [
  "screenshot",
  "click",
  "double_click",
  "right_click",
  "move",
  "drag",
  "scroll",
  "type",
  "key",
  "wait",
];

/**
 * One action, in the coordinates of the screenshots the model is shown (the
 * desktop maps them back to the display). The fields each kind needs: x and y
 * for the pointer actions; to_x and to_y for a drag's end; scroll_x and
 * scroll_y in pixels (positive: right and down); text to type; keys as one
 * combination ("ctrl+l", "Return"); ms to wait.
 */
export interface DesktopAction {
  action: DesktopActionKind;
  x?: number;
  y?: number;
  to_x?: number;
  to_y?: number;
  scroll_x?: number;
  scroll_y?: number;
  text?: string;
  keys?: string;
  ms?: number;
}

/** A check a provider raised on a native computer call: it goes on only once the owner acknowledged it. */
export interface SafetyCheck {
  id: string;
  code: string;
  message: string;
}
