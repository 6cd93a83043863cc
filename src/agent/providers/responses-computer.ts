/**
 * OpenAI's own computer tool in the Responses API, a detail of that
 * provider. A model made for computer use is offered the `computer` tool
 * instead of Fermix's `computer` function: `{type: "computer"}` (later
 * models), or `{type: "computer_use_preview", display_width, display_height,
 * environment}` with `truncation: "auto"` (the preview model). It answers
 * with `computer_call` items — an ordered `actions` list (the preview: one
 * `action`) and `pending_safety_checks` — which reach the agent as a tool
 * call of the computer tool carrying the actions in Fermix's words. Each is
 * answered with a `computer_call_output` whose output is the screenshot as a
 * data URL, listing the safety checks the owner acknowledged.
 *
 * Which models: by name, since the API has no way to ask — `computer-use-preview…`
 * takes the preview tool, `gpt-5.4` and later (`gpt-5.4-mini`, `gpt-5.5`…) the
 * `computer` tool; any other model gets the function (docs/computer-use.md).
 */
import type { DesktopAction, SafetyCheck } from "../../message/desktop.ts";
import { type Json, str } from "./http.ts";
import type { NativeComputerCall, ProviderEvent, ToolSpec } from "./types.ts";

/** The form of the native tool a model takes, or null: it gets the function. */
export type NativeForm = "computer" | "preview";

export function nativeComputer(model: string): NativeForm | null {
  if (/^computer-use-preview/.test(model)) return "preview";
  if (/^gpt-5\.([4-9]|\d{2,})(\D|$)/.test(model)) return "computer";
  return null;
}

/** The native tool, as the request offers it; null where it cannot be (the preview needs the screen's size up front). */
export function computerToolFor(form: NativeForm, native: NonNullable<ToolSpec["native"]>): Json | null {
  if (form === "computer") return { type: "computer" };
  if (native.width === undefined || native.height === undefined) return null;
  return { type: "computer_use_preview", display_width: native.width, display_height: native.height, environment: "linux" };
}

const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** One of OpenAI's actions in Fermix's words, or the sentence saying why it cannot be done. */
export function actionOf(raw: Json): DesktopAction | string {
  const at = { ...(num(raw.x) !== undefined ? { x: num(raw.x) } : {}), ...(num(raw.y) !== undefined ? { y: num(raw.y) } : {}) };
  switch (raw.type) {
    case "screenshot":
      return { action: "screenshot" };
    case "click": {
      const button = str(raw.button) || "left";
      if (button === "left") return { action: "click", ...at };
      if (button === "right") return { action: "right_click", ...at };
      return `a ${button} click cannot be done here (left and right clicks can)`;
    }
    case "double_click":
      return { action: "double_click", ...at };
    case "move":
      return { action: "move", ...at };
    case "drag": {
      const path = Array.isArray(raw.path) ? (raw.path as Json[]) : [];
      const [from, to] = [path[0], path.at(-1)];
      if (!from || !to || path.length < 2) return "a drag needs a path of at least two points";
      return { action: "drag", x: num(from.x) ?? -1, y: num(from.y) ?? -1, to_x: num(to.x) ?? -1, to_y: num(to.y) ?? -1 };
    }
    case "scroll":
      return { action: "scroll", ...at, scroll_x: num(raw.scroll_x) ?? 0, scroll_y: num(raw.scroll_y) ?? 0 };
    case "type":
      return { action: "type", text: str(raw.text) };
    case "keypress": {
      const keys = Array.isArray(raw.keys) ? raw.keys.map(str).filter(Boolean) : [];
      return { action: "key", keys: keys.join("+") };
    }
    case "wait":
      return { action: "wait", ...(num(raw.ms) !== undefined ? { ms: num(raw.ms) } : {}) };
    default:
      return `the action "${str(raw.type)}" cannot be done here`;
  }
}

function checksOf(value: unknown): SafetyCheck[] {
  if (!Array.isArray(value)) return [];
  return (value as Json[]).filter((c) => typeof c?.id === "string").map((c) => ({ id: str(c.id), code: str(c.code), message: str(c.message) }));
}

/** A finished `computer_call` item as the computer tool's call. */
export function computerCallEvent(item: Json): ProviderEvent {
  const raws = Array.isArray(item.actions) ? (item.actions as Json[]) : item.action && typeof item.action === "object" ? [item.action as Json] : [];
  const actions: DesktopAction[] = [];
  let unsupported: string | undefined;
  for (const raw of raws) {
    const action = actionOf(raw);
    if (typeof action === "string") unsupported ??= action;
    else actions.push(action);
  }
  const computer: NativeComputerCall = { actions, safetyChecks: checksOf(item.pending_safety_checks), item, ...(unsupported ? { unsupported } : {}) };
  return { type: "tool_call", callId: str(item.call_id), name: "computer", arguments: JSON.stringify({ actions }), computer };
}

/** The call as the next request gives it back: the item the model sent. */
export function computerCallOf(callId: string, call: NativeComputerCall): Json {
  return call.item ?? { type: "computer_call", call_id: callId, actions: [], pending_safety_checks: [], status: "completed" };
}

/** The answer to a call: the screenshot after its actions, and the checks the owner acknowledged. */
export function computerOutputItem(callId: string, shot: { mime: string; data: string }, acknowledged: readonly SafetyCheck[], form: NativeForm): Json {
  const output: Json = { type: "computer_screenshot", image_url: `data:${shot.mime};base64,${shot.data}` };
  // The later tool takes the screenshot at its own size (its coordinates are then the screenshot's).
  if (form === "computer") output.detail = "original";
  return { type: "computer_call_output", call_id: callId, output, ...(acknowledged.length > 0 ? { acknowledged_safety_checks: acknowledged } : {}) };
}
