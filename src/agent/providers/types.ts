/**
 * The one streaming interface every model provider implements. The agent
 * speaks only this; `responses.ts` (OpenAI Responses API) and `chat.ts`
 * (OpenAI-compatible chat completions) translate it to the wire.
 */
import type { ProviderConfig } from "../../config/schema.ts";
import type { ProviderEvent } from "../../message/stream.ts";

export type { ProviderEvent, Usage } from "../../message/stream.ts";

export type ContentPart =
  | { type: "text"; text: string }
  /** An image, inline: base64 data with its MIME type. */
  | { type: "image"; mime: string; data: string };

/** One item of model input: conversation messages and the tool-call round trip. */
export type ModelInput =
  | { type: "message"; role: "user" | "assistant"; content: ContentPart[] }
  | { type: "function_call"; callId: string; name: string; arguments: string }
  | { type: "function_call_output"; callId: string; output: string };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  /** The system prompt. */
  instructions?: string;
  input: ModelInput[];
  tools?: ToolSpec[];
  /** Aborting it cancels the HTTP request. */
  signal?: AbortSignal;
  maxOutputTokens?: number;
}

export interface Provider {
  readonly name: string;
  /** Stream one model response. Throws ProviderError on HTTP or stream errors; AbortError when aborted. */
  stream(request: ModelRequest): AsyncIterable<ProviderEvent>;
}

/** The provider answered with an error, or its stream broke. Its message never contains the API key. */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A provider's config as loaded, or built by hand (tests, setup's live check): the timeouts may be left to their defaults. */
export type ProviderSettings = Omit<ProviderConfig, "connect_timeout_ms" | "first_byte_timeout_ms" | "idle_timeout_ms"> &
  Partial<Pick<ProviderConfig, "connect_timeout_ms" | "first_byte_timeout_ms" | "idle_timeout_ms">>;
