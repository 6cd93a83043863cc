/**
 * The one streaming interface every model provider implements. The agent
 * speaks only this; `responses.ts` (OpenAI Responses API), `chat.ts`
 * (OpenAI-compatible chat completions) and `anthropic.ts` (Anthropic's
 * Messages API) translate it to the wire, and `chain.ts` fails over from one
 * provider to the next.
 */
import type { ProviderConfig } from "../../config/schema.ts";
import { type FaultClass, statusFault } from "../../kernel/fault-line.ts";
import type { SafetyCheck } from "../../message/desktop.ts";
import type { NativeComputerCall, ProviderEvent } from "../../message/stream.ts";

export type { NativeComputerCall, ProviderEvent, Usage } from "../../message/stream.ts";

export type ContentPart =
  | { type: "text"; text: string }
  /** An image, inline: base64 data with its MIME type. */
  | { type: "image"; mime: string; data: string };

/** One item of model input: conversation messages and the tool-call round trip. */
export type ModelInput =
  | { type: "message"; role: "user" | "assistant"; content: ContentPart[] }
  /** `computer`: the call was the provider's own computer call, given back as the provider sent it. */
  | { type: "function_call"; callId: string; name: string; arguments: string; computer?: NativeComputerCall }
  /**
   * A tool's answer; `images` are what it showed (a screenshot), seen by the model beside the text.
   * `computer`: the answer to a native computer call — its screenshot is `images[0]`; without one
   * nothing was done, and `output` says why; `acknowledged` are the safety checks the owner approved.
   */
  /** Reasoning the model gave before its tool calls, handed back within the tool loop (see reasoning_done); formats without it skip it. */
  | { type: "reasoning"; text: string; signature?: string; data?: string }
  | {
      type: "function_call_output";
      callId: string;
      output: string;
      images?: ReadonlyArray<{ mime: string; data: string }>;
      computer?: { acknowledged: SafetyCheck[] };
    };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /**
   * The tool is also a provider's own tool where the model has it (the Responses `computer` tool):
   * a provider that offers it sends that instead of the function, with the size of the screenshots
   * when it is known before the display opens (a virtual one's).
   */
  native?: { kind: "computer"; width?: number; height?: number };
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
  /**
   * How many leading characters of `instructions` stay the same from turn to
   * turn (the persona): a provider that caches prompts marks that part.
   */
  stableInstructions?: number;
}

export interface Provider {
  readonly name: string;
  /** Stream one model response. Throws ProviderError on HTTP or stream errors; AbortError when aborted. */
  stream(request: ModelRequest): AsyncIterable<ProviderEvent>;
  /**
   * One turn's view of a provider that is a failover chain (chain.ts): once
   * one of its providers answered, the turn's later requests go to that one
   * first, and `answeredBy` names it. A single provider has none.
   */
  forTurn?(): TurnProvider;
}

/** A chain's view for one turn: which of its providers answered the latest request. */
export interface TurnProvider extends Provider {
  readonly answeredBy: string | undefined;
}

/** What kind of fault a failed model request was (the classes pages and the user's message speak of: src/kernel/fault-line.ts). */
export type ProviderFault = FaultClass;

const CUT_CODES = new Set(["truncated", "dropped", "idle_timeout", "max_output_tokens", "content_filter", "incomplete"]);
const NETWORK_CODES = /^(E[A-Z]+|Connection\w*|FailedToOpenSocket|connect_timeout)$/;
/**
 * A refused key reported inside a stream that began with HTTP 200 (OpenAI's
 * `invalid_api_key`, Anthropic's `authentication_error`), or an error chunk
 * that carries the status as its code (OpenRouter): the key, not an outage.
 */
const AUTH_CODES = new Set(["invalid_api_key", "authentication_error", "invalid_authentication", "unauthorized", "permission_denied"]);

/** The fault a status and code mean. */
export function faultOf(status: number | undefined, code: string | undefined): ProviderFault {
  if (code === "insufficient_quota") return "quota";
  if (status !== undefined && status >= 400) return statusFault(status);
  if (code !== undefined && AUTH_CODES.has(code)) return "auth";
  if (code !== undefined && /^[45]\d\d$/.test(code)) return statusFault(Number(code));
  if (code === "first_byte_timeout") return "timeout";
  if (code !== undefined && CUT_CODES.has(code)) return "cut_off";
  if (code !== undefined && NETWORK_CODES.test(code)) return "unreachable";
  return "server";
}

/** The provider answered with an error, or its stream broke. Its message never contains the API key. */
export class ProviderError extends Error {
  override name = "ProviderError";
  readonly fault: ProviderFault;
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
    /** HTTP attempts made before giving up (1 when it was not retried). */
    readonly attempts = 1,
  ) {
    super(message);
    this.fault = faultOf(status, code);
  }
}

/** A provider's config as loaded, or built by hand (tests, setup's live check): the timeouts may be left to their defaults. */
export type ProviderSettings = Omit<ProviderConfig, "connect_timeout_ms" | "first_byte_timeout_ms" | "idle_timeout_ms"> &
  Partial<Pick<ProviderConfig, "connect_timeout_ms" | "first_byte_timeout_ms" | "idle_timeout_ms">>;
