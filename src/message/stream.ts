/**
 * What a model provider yields while it streams, in order: the events the
 * agent consumes and the presentation layer's streaming engines render. On the
 * ground floor so that presentation never has to reach into the agent.
 */

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
  /** The model asks for a tool call; arguments are a JSON string. */
  | { type: "tool_call"; callId: string; name: string; arguments: string }
  /** The response is complete. */
  | { type: "completed"; usage?: Usage };
