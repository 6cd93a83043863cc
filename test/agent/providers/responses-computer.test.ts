/**
 * OpenAI's own computer tool, a detail of the Responses provider: which
 * models get it, how it is offered, how its calls reach the agent in
 * Fermix's words, and how they are answered — with the screenshot and the
 * checks the owner acknowledged, or, when nothing was done, a note instead
 * of the call (a computer call can only be answered with a screenshot).
 */
import { describe, expect, test } from "bun:test";
import type { ModelRequest, ProviderEvent } from "../../../src/agent/providers/index.ts";
import { parseResponsesStream, responsesBody } from "../../../src/agent/providers/responses.ts";
import { actionOf, nativeComputer } from "../../../src/agent/providers/responses-computer.ts";
import type { SseEvent } from "../../../src/agent/providers/sse.ts";

const computer = {
  name: "computer",
  description: "Use the desktop.",
  parameters: { type: "object" },
  native: { kind: "computer" as const, width: 1280, height: 800 },
};
const SHOT = { mime: "image/png", data: "iVBORw0KGgo=" };
const CHECK = { id: "sc_1", code: "malicious_instructions", message: "Look twice." };

async function events(item: Record<string, unknown>): Promise<ProviderEvent[]> {
  async function* source(): AsyncGenerator<SseEvent> {
    yield { event: "message", data: JSON.stringify({ type: "response.output_item.done", item }) };
    yield { event: "message", data: JSON.stringify({ type: "response.completed", response: {} }) };
  }
  const out: ProviderEvent[] = [];
  for await (const event of parseResponsesStream(source(), { provider: "openai" })) out.push(event);
  return out;
}

describe("which models get the native tool", () => {
  test("by name: the preview model, gpt-5.4 and later; any other gets the function", () => {
    expect(nativeComputer("computer-use-preview")).toBe("preview");
    expect(nativeComputer("computer-use-preview-2025-03-11")).toBe("preview");
    for (const model of ["gpt-5.4", "gpt-5.4-mini", "gpt-5.5", "gpt-5.10"]) expect(nativeComputer(model)).toBe("computer");
    for (const model of ["gpt-5.1", "gpt-5", "gpt-4o", "gpt-5.3-codex", "llama3", "fake-model"]) expect(nativeComputer(model)).toBeNull();
  });

  test("the request offers it in the function's place; the preview with the display's size and truncation", () => {
    const request: ModelRequest = { model: "gpt-5.4", input: [], tools: [computer] };
    expect(responsesBody(request, { model: "x" }).tools).toEqual([{ type: "computer" }]);
    const preview = responsesBody({ ...request, model: "computer-use-preview" }, { model: "x" });
    expect(preview.tools).toEqual([{ type: "computer_use_preview", display_width: 1280, display_height: 800, environment: "linux" }]);
    expect(preview.truncation).toBe("auto");
    // On a host display the size is known only once it opens: the later tool does without it, the preview cannot.
    const sizeless = { ...computer, native: { kind: "computer" as const } };
    expect(responsesBody({ model: "gpt-5.4", input: [], tools: [sizeless] }, { model: "x" }).tools).toEqual([{ type: "computer" }]);
    const previewHost = responsesBody({ model: "computer-use-preview", input: [], tools: [sizeless] }, { model: "x" });
    expect(previewHost.tools).toEqual([expect.objectContaining({ type: "function", name: "computer" })]);
    expect(previewHost.truncation).toBeUndefined();
    const other = responsesBody({ ...request, model: "gpt-5.1" }, { model: "x" });
    expect(other.tools).toEqual([{ type: "function", name: "computer", description: "Use the desktop.", parameters: { type: "object" }, strict: false }]);
    expect(other.truncation).toBeUndefined();
  });
});

describe("a computer call, as the agent gets it", () => {
  test("a batch of actions in Fermix's words, with the safety checks and the item as it came", async () => {
    const item = {
      type: "computer_call",
      id: "cu_1",
      call_id: "call_9",
      actions: [
        { type: "click", button: "left", x: 10, y: 20 },
        { type: "click", button: "right", x: 1, y: 2 },
        { type: "keypress", keys: ["CTRL", "L"] },
        { type: "type", text: "hello" },
        { type: "scroll", x: 5, y: 6, scroll_x: 0, scroll_y: 300 },
        {
          type: "drag",
          path: [
            { x: 1, y: 1 },
            { x: 5, y: 5 },
            { x: 9, y: 9 },
          ],
        },
        { type: "screenshot" },
        { type: "wait" },
      ],
      pending_safety_checks: [CHECK],
      status: "completed",
    };
    const [call] = await events(item);
    expect(call).toEqual({
      type: "tool_call",
      callId: "call_9",
      name: "computer",
      arguments: expect.any(String),
      computer: {
        actions: [
          { action: "click", x: 10, y: 20 },
          { action: "right_click", x: 1, y: 2 },
          { action: "key", keys: "CTRL+L" },
          { action: "type", text: "hello" },
          { action: "scroll", x: 5, y: 6, scroll_x: 0, scroll_y: 300 },
          { action: "drag", x: 1, y: 1, to_x: 9, to_y: 9 },
          { action: "screenshot" },
          { action: "wait" },
        ],
        safetyChecks: [CHECK],
        item,
      },
    });
  });

  test("the preview's single action; an action Fermix cannot do refuses the call whole, saying why", async () => {
    const [preview] = await events({ type: "computer_call", call_id: "c1", action: { type: "double_click", x: 3, y: 4 }, pending_safety_checks: [] });
    expect(preview).toMatchObject({ computer: { actions: [{ action: "double_click", x: 3, y: 4 }], safetyChecks: [] } });
    const [wheel] = await events({ type: "computer_call", call_id: "c2", actions: [{ type: "click", button: "wheel", x: 1, y: 1 }] });
    expect(wheel).toMatchObject({ computer: { unsupported: "a wheel click cannot be done here (left and right clicks can)" } });
    expect(actionOf({ type: "zoom" })).toBe('the action "zoom" cannot be done here');
  });
});

describe("the answer to a call", () => {
  const item = { type: "computer_call", id: "cu_1", call_id: "c1", actions: [{ type: "screenshot" }], pending_safety_checks: [CHECK], status: "completed" };
  const call = { actions: [{ action: "screenshot" as const }], safetyChecks: [CHECK], item };

  test("the call as the model sent it, then its screenshot with the acknowledged checks", () => {
    const body = responsesBody(
      {
        model: "gpt-5.4",
        input: [
          { type: "function_call", callId: "c1", name: "computer", arguments: "{}", computer: call },
          { type: "function_call_output", callId: "c1", output: "", images: [SHOT], computer: { acknowledged: [CHECK] } },
        ],
        tools: [computer],
      },
      { model: "x" },
    );
    expect(body.input).toEqual([
      item,
      {
        type: "computer_call_output",
        call_id: "c1",
        output: { type: "computer_screenshot", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "original" },
        acknowledged_safety_checks: [CHECK],
      },
    ]);
  });

  test("a note beside the screenshot follows it as the user's words; the preview's screenshot has no detail", () => {
    const body = responsesBody(
      {
        model: "computer-use-preview",
        input: [
          { type: "function_call", callId: "c1", name: "computer", arguments: "{}", computer: call },
          { type: "function_call_output", callId: "c1", output: "error: xdotool failed", images: [SHOT], computer: { acknowledged: [] } },
        ],
      },
      { model: "x" },
    );
    expect(body.input).toEqual([
      item,
      { type: "computer_call_output", call_id: "c1", output: { type: "computer_screenshot", image_url: "data:image/png;base64,iVBORw0KGgo=" } },
      { type: "message", role: "user", content: [{ type: "input_text", text: "error: xdotool failed" }] },
    ]);
  });

  test("nothing done (paused, not approved): no call and no output, only the note", () => {
    const body = responsesBody(
      {
        model: "gpt-5.4",
        input: [
          { type: "function_call", callId: "c1", name: "computer", arguments: "{}", computer: call },
          { type: "function_call_output", callId: "c1", output: "refused: the desktop is paused by the owner", computer: { acknowledged: [] } },
        ],
      },
      { model: "x" },
    );
    expect(body.input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "refused: the desktop is paused by the owner" }] }]);
  });
});
