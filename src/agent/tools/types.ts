/** The tools the model is offered: a JSON-schema spec and a runner with the turn's context. */
import type { IdempotencyStore } from "../../store/idempotency.ts";
import type { GatewayChannel, ReplyButton, ReplyPort, ReplyTarget } from "../../message/index.ts";
import type { ToolSpec } from "../providers/types.ts";

/** What tools did during a turn; a turn that only reacted sends no text. */
export interface TurnEffects {
  reacted: boolean;
  attachments: number;
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

export interface Tool {
  spec: ToolSpec;
  /** Run with the parsed arguments; the string is what the model sees as the result. Throwing ToolError tells the model why. */
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<string>;
}

/** A tool refused its arguments or failed: the message goes back to the model, which can correct itself. */
export class ToolError extends Error {
  override name = "ToolError";
}
