/**
 * What a model provider yields while it streams, in order: the events the
 * agent consumes and the presentation layer's streaming engines render. On the
 * ground floor so that presentation never has to reach into the agent.
 */

import type { DesktopAction, SafetyCheck } from "./desktop.ts";

/**
 * A provider's own computer call (OpenAI's Responses `computer` tool), as it
 * reaches the agent: the actions in Fermix's words, the safety checks the
 * provider raised, and the provider's item as it came, which it is given back
 * in the next request.
 */
export interface NativeComputerCall {
  actions: DesktopAction[];
  safetyChecks: SafetyCheck[];
  item?: Record<string, unknown>;
  /** The call asked for something Fermix cannot do (a wheel click): it is refused whole, with this sentence. */
  unsupported?: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What a provider yields while it streams, in order. */
export type ProviderEvent =
  /** A piece of assistant text for output item `itemId`. */
  | { type: "text_delta"; itemId: string; delta: string }
  /** A piece of the reasoning summary. */
  | { type: "reasoning_delta"; itemId: string; delta: string }
  /** An assistant message item is complete: its full text. */
  | { type: "message_done"; itemId: string; text: string }
  /**
   * A finished block of the model's reasoning that it must be handed back,
   * unchanged, for the rest of a tool loop (Anthropic's signed thinking:
   * `signature`; or `data`, a block redacted by the provider). Not shown:
   * what a reader sees of reasoning comes as reasoning_delta.
   */
  | { type: "reasoning_done"; itemId: string; text: string; signature?: string; data?: string }
  /** The model asks for a tool call; arguments are a JSON string. A provider's native computer call carries `computer` (and `name` is the computer tool's). */
  | { type: "tool_call"; callId: string; name: string; arguments: string; computer?: NativeComputerCall }
  /** The response is complete. */
  | { type: "completed"; usage?: Usage };
