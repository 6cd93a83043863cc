/**
 * The tools the model is offered: a JSON-schema spec and a runner with the
 * turn's context. A tool is written with `defineTool`: its parameters once,
 * as a TypeBox schema that is both what the model is shown and what its
 * arguments are checked against before `run` sees them (./arguments.ts).
 */
import type { Static, TObject } from "@sinclair/typebox";
import type { SafetyCheck } from "../../message/desktop.ts";
import type { GatewayChannel, ReplyButton, ReplyPort, ReplyTarget } from "../../message/index.ts";
import type { NativeComputerCall } from "../../message/stream.ts";
import type { IdempotencyStore } from "../../store/idempotency.ts";
import type { ToolSpec } from "../providers/types.ts";
import { checkArguments } from "./arguments.ts";

export { ToolError } from "./errors.ts";

/** What tools did during a turn; a turn that only reacted sends no text. */
export interface TurnEffects {
  reacted: boolean;
  attachments: number;
  /**
   * A tool ended the turn (the desktop paused by the owner, its action limit reached): the model is
   * asked once more, to say a last word with what it was told, and this note closes the answer.
   */
  halt?: string;
  /** What the engine does once the answer is delivered, however the turn ended (a desktop's last screenshot to the owner). */
  after?: Array<() => Promise<void>>;
}

export interface ToolContext {
  /** The durable reply port of this turn. */
  port: ReplyPort;
  channel: GatewayChannel;
  /** The conversation key (channel:chat:thread) the turn belongs to. */
  conversation: string;
  /** Who asked, and whether they are the operator (the owner): tools scope what they keep and show by it. */
  senderId: string;
  role: "operator" | "user";
  target: ReplyTarget;
  workspace: string;
  idempotency: IdempotencyStore;
  signal: AbortSignal;
  effects: TurnEffects;
  /**
   * Send a short Markdown message through the normal split → render → outbox
   * path; `buttons` go under its last part where the channel has buttons.
   */
  say(markdown: string, buttons?: ReplyButton[]): Promise<void>;
}

/** An image a tool answers with, inline: base64 data with its MIME type. */
export interface ToolImage {
  mime: string;
  data: string;
}

/** What a tool answers: text, or text with images the model sees (a screenshot, a picture a tool server returned). */
export type ToolResult = string | { text: string; images: readonly ToolImage[] };

/** The text of a result, whichever form it took. */
export const resultText = (result: ToolResult): string => (typeof result === "string" ? result : result.text);

/** How a native computer call was answered: the screenshot after its actions (none: nothing was done), a note for the model, the checks the owner approved. */
export interface ComputerCallResult {
  screenshot?: ToolImage;
  note?: string;
  acknowledged: SafetyCheck[];
}

export interface Tool {
  spec: ToolSpec;
  /** Run with the parsed arguments; the result is what the model sees. Throwing ToolError tells the model why. */
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
  /** A provider's own computer call made of this tool (ToolSpec.native): its actions in order, then a screenshot. */
  computer?(call: NativeComputerCall, ctx: ToolContext): Promise<ComputerCallResult>;
}

/** A tool as it is written: the schema of its arguments once, and a runner that gets them checked and typed. */
export interface ToolDefinition<P extends TObject> {
  name: string;
  description: string;
  /** `Type.Object({...}, { additionalProperties: false })`: sent to the model as is, and the check of what it sends. */
  parameters: P;
  run(args: Static<P>, ctx: ToolContext): Promise<ToolResult>;
}

/** The tool for a definition: arguments that do not fit its schema are refused with a ToolError before `run`. */
export function defineTool<P extends TObject>(definition: ToolDefinition<P>): Tool {
  const { name, description, parameters } = definition;
  return {
    spec: { name, description, parameters },
    run: async (args, ctx) => definition.run(checkArguments(name, parameters, args), ctx),
  };
}
