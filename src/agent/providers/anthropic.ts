/**
 * `api = "anthropic"`: Anthropic's Messages API over SSE (`POST …/messages`,
 * `x-api-key` and `anthropic-version`). Stateless like the others: the whole
 * conversation every time. The stable prefix of each request — the tools and
 * the persona at the head of the system prompt — is marked for prompt
 * caching, so a conversation pays for it once per cache lifetime rather than
 * once per request. Extended thinking is off unless the provider's
 * `thinking_budget_tokens` is set; its signed blocks come back to the agent
 * as `reasoning_done` and are handed back within the tool loop, as the API
 * requires.
 */
import { eventJson, type HttpDeps, type Json, providerError, str, streamSse } from "./http.ts";
import type { SseEvent } from "./sse.ts";
import type { ContentPart, ModelInput, ModelRequest, Provider, ProviderEvent, ProviderSettings, ToolSpec, Usage } from "./types.ts";

/** The API version every request names (the one the Messages API and its streaming events are documented for). */
export const ANTHROPIC_VERSION = "2023-06-01";

/** Said in place of a conversation's first words when its history starts with the assistant (a scheduled job's result): the API wants a user turn first. */
const EARLIER = "(earlier in this conversation)";

/**
 * The answer's token limit when `max_tokens` is not configured: the API
 * requires one, and refuses one above the model's own output limit. Claude 3
 * models answer at most 4096 tokens, Claude 3.5 at most 8192; later models
 * (3.7, 4 and on) take far more, and 16384 leaves a long answer room.
 */
export function defaultMaxTokens(model: string): number {
  if (/^claude-3-5-|^claude-3\.5-/.test(model)) return 8192;
  if (/^claude-3-(opus|sonnet|haiku)/.test(model)) return 4096;
  return 16_384;
}

/** A Provider speaking Anthropic's Messages API at `config.base_url`. */
export function anthropicProvider(name: string, config: ProviderSettings, deps: HttpDeps = {}): Provider {
  const url = `${config.base_url.replace(/\/+$/, "")}/messages`;
  return {
    name,
    async *stream(request: ModelRequest): AsyncGenerator<ProviderEvent> {
      const call = {
        provider: name,
        url,
        apiKey: config.api_key,
        keyHeader: config.auth_header === "bearer" ? ("authorization" as const) : ("x-api-key" as const),
        headers: { "anthropic-version": ANTHROPIC_VERSION },
        body: anthropicBody(request, config),
        signal: request.signal,
      };
      yield* parseAnthropicStream(streamSse(call, deps), call);
    },
  };
}

/** The JSON body of a streaming Messages request. */
export function anthropicBody(request: ModelRequest, config: Pick<ProviderSettings, "model" | "max_tokens" | "thinking_budget_tokens">): Json {
  const model = request.model || config.model;
  const budget = config.thinking_budget_tokens;
  let maxTokens = request.maxOutputTokens ?? config.max_tokens ?? defaultMaxTokens(model);
  // The thinking counts against the same limit as the answer after it: a request's own small limit (a summary) still leaves room.
  if (budget !== undefined && maxTokens <= budget) maxTokens = budget + Math.min(maxTokens, defaultMaxTokens(model));
  const body: Json = { model, max_tokens: maxTokens, messages: anthropicMessages(request.input), stream: true };
  const system = systemBlocks(request.instructions, request.stableInstructions);
  if (system.length > 0) body.system = system;
  if (request.tools?.length) body.tools = request.tools.map((spec, i, all) => tool(spec, i === all.length - 1));
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget };
  return body;
}

/** The system prompt as text blocks: the stable head (the persona) marked for caching, then what changes each turn. */
function systemBlocks(instructions: string | undefined, stable: number | undefined): Json[] {
  if (!instructions) return [];
  const cut = Math.max(0, Math.min(stable ?? instructions.length, instructions.length));
  const head = instructions.slice(0, cut);
  const rest = instructions.slice(cut);
  const blocks: Json[] = [];
  if (head.trim() !== "") blocks.push({ type: "text", text: head, cache_control: { type: "ephemeral" } });
  if (rest.trim() !== "") blocks.push({ type: "text", text: rest });
  return blocks;
}

/** A tool as the API takes it; the last one closes the cached prefix (tools come first in it). */
function tool(spec: ToolSpec, last: boolean): Json {
  const out: Json = { name: spec.name, description: spec.description, input_schema: spec.parameters };
  if (last) out.cache_control = { type: "ephemeral" };
  return out;
}

interface WireMessage {
  role: "user" | "assistant";
  content: Json[];
}

/**
 * The conversation as alternating user and assistant messages: a step's
 * reasoning, text and tool calls are one assistant message; the tool results
 * that answer it (with any images the tools showed) one user message.
 */
export function anthropicMessages(input: readonly ModelInput[]): WireMessage[] {
  const messages: WireMessage[] = [];
  const add = (role: WireMessage["role"], blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const item of input) {
    switch (item.type) {
      case "message":
        add(item.role, item.role === "user" ? item.content.flatMap(userBlock) : textBlocks(item.content));
        break;
      case "reasoning":
        add("assistant", [
          item.data !== undefined ? { type: "redacted_thinking", data: item.data } : { type: "thinking", thinking: item.text, signature: item.signature ?? "" },
        ]);
        break;
      case "function_call":
        add("assistant", [{ type: "tool_use", id: item.callId, name: item.name, input: argumentsObject(item.arguments) }]);
        break;
      case "function_call_output":
        add("user", [toolResult(item)]);
        break;
    }
  }
  if (messages[0]?.role === "assistant") messages.unshift({ role: "user", content: [{ type: "text", text: EARLIER }] });
  return messages;
}

/** A user's part as a block; empty text is left out (the API refuses an empty text block). */
function userBlock(part: ContentPart): Json[] {
  if (part.type === "text") return part.text === "" ? [] : [{ type: "text", text: part.text }];
  return [imageBlock(part.mime, part.data)];
}

function imageBlock(mime: string, data: string): Json {
  return { type: "image", source: { type: "base64", media_type: mime, data } };
}

function textBlocks(content: ContentPart[]): Json[] {
  const text = content.map((p) => (p.type === "text" ? p.text : "")).join("");
  return text.trim() === "" ? [] : [{ type: "text", text }];
}

/** A tool's answer: its text, and the images it showed (a screenshot) in the same block. */
function toolResult(item: Extract<ModelInput, { type: "function_call_output" }>): Json {
  if (!item.images?.length) return { type: "tool_result", tool_use_id: item.callId, content: item.output };
  const text = item.output === "" ? [] : [{ type: "text", text: item.output }];
  return { type: "tool_result", tool_use_id: item.callId, content: [...text, ...item.images.map((image) => imageBlock(image.mime, image.data))] };
}

/** A tool call's arguments as the object `tool_use.input` must be; what is not a JSON object goes back as {}. */
function argumentsObject(text: string): Json {
  try {
    const value: unknown = JSON.parse(text || "{}");
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Json;
  } catch {
    // the model's arguments were not JSON: the tool already answered so
  }
  return {};
}

/** A content block being streamed, by its index. */
type OpenBlock =
  | { kind: "text"; text: string }
  | { kind: "thinking"; text: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "tool"; id: string; name: string; json: string }
  | { kind: "other" };

/** Why a response stopped short of its end: the API's stop reason as the code the other formats use. */
const CUT_SHORT: Readonly<Record<string, string>> = {
  max_tokens: "max_output_tokens",
  model_context_window_exceeded: "max_output_tokens",
  refusal: "content_filter",
};

/**
 * Translate Messages SSE events into ProviderEvents: text and thinking
 * deltas as they come, then each block as it stops (the message's text,
 * signed thinking, a tool call with its whole JSON input). Throws
 * ProviderError on an `error` event, a response cut short, or a stream that
 * ends before `message_stop`.
 */
export async function* parseAnthropicStream(events: AsyncIterable<SseEvent>, call: { provider: string; apiKey?: string }): AsyncGenerator<ProviderEvent> {
  let messageId = "msg";
  const blocks = new Map<number, OpenBlock>();
  let usage: Usage | undefined;
  let stopReason: string | undefined;
  const itemId = (index: number) => `${messageId}:${index}`;

  for await (const frame of events) {
    const event = eventJson(frame.data, call);
    const type = typeof event.type === "string" ? event.type : frame.event;
    switch (type) {
      case "message_start": {
        const message = (event.message ?? {}) as Json;
        messageId = str(message.id) || messageId;
        usage = addUsage(usage, message.usage, true);
        break;
      }
      case "content_block_start": {
        const index = Number(event.index ?? 0);
        const block = (event.content_block ?? {}) as Json;
        blocks.set(index, openBlock(block));
        const open = blocks.get(index)!;
        // A block may start with content already in it (text, or a whole thinking block).
        if (open.kind === "text" && open.text !== "") yield { type: "text_delta", itemId: itemId(index), delta: open.text };
        if (open.kind === "thinking" && open.text !== "") yield { type: "reasoning_delta", itemId: itemId(index), delta: open.text };
        break;
      }
      case "content_block_delta": {
        const index = Number(event.index ?? 0);
        const open = blocks.get(index);
        const delta = (event.delta ?? {}) as Json;
        if (!open) break;
        if (delta.type === "text_delta" && open.kind === "text") {
          const text = str(delta.text);
          open.text += text;
          if (text !== "") yield { type: "text_delta", itemId: itemId(index), delta: text };
        } else if (delta.type === "thinking_delta" && open.kind === "thinking") {
          const text = str(delta.thinking);
          open.text += text;
          if (text !== "") yield { type: "reasoning_delta", itemId: itemId(index), delta: text };
        } else if (delta.type === "signature_delta" && open.kind === "thinking") {
          open.signature += str(delta.signature);
        } else if (delta.type === "input_json_delta" && open.kind === "tool") {
          open.json += str(delta.partial_json);
        }
        break;
      }
      case "content_block_stop": {
        const index = Number(event.index ?? 0);
        const done = finishedBlock(blocks.get(index), itemId(index));
        blocks.delete(index);
        if (done) yield done;
        break;
      }
      case "message_delta": {
        const delta = (event.delta ?? {}) as Json;
        stopReason = str(delta.stop_reason) || stopReason;
        usage = addUsage(usage, event.usage, false);
        break;
      }
      case "message_stop": {
        const code = stopReason ? CUT_SHORT[stopReason] : undefined;
        if (code) throw providerError(call, `the response is incomplete: ${stopReason}`, undefined, code);
        yield usage ? { type: "completed", usage } : { type: "completed" };
        return;
      }
      case "error": {
        const error = (event.error ?? {}) as Json;
        const code = str(error.type) || undefined;
        throw providerError(call, `the stream reported an error: ${str(error.message) || "no message"}`, undefined, code);
      }
      // ping, and event types added later: nothing to do.
    }
  }
  throw providerError(call, "the stream ended before the response completed", undefined, "truncated");
}

function openBlock(block: Json): OpenBlock {
  switch (block.type) {
    case "text":
      return { kind: "text", text: str(block.text) };
    case "thinking":
      return { kind: "thinking", text: str(block.thinking), signature: str(block.signature) };
    case "redacted_thinking":
      return { kind: "redacted", data: str(block.data) };
    case "tool_use":
      return { kind: "tool", id: str(block.id), name: str(block.name), json: "" };
    default:
      return { kind: "other" };
  }
}

/** A block that stopped, as its event: the whole text, signed reasoning, or a tool call; nothing for an empty text or a kind we do not use. */
function finishedBlock(block: OpenBlock | undefined, itemId: string): ProviderEvent | undefined {
  switch (block?.kind) {
    case "text":
      return block.text === "" ? undefined : { type: "message_done", itemId, text: block.text };
    case "thinking":
      return { type: "reasoning_done", itemId, text: block.text, signature: block.signature };
    case "redacted":
      return { type: "reasoning_done", itemId, text: "", data: block.data };
    case "tool":
      return { type: "tool_call", callId: block.id, name: block.name, arguments: block.json.trim() === "" ? "{}" : block.json };
    default:
      return undefined;
  }
}

/**
 * Usage as the stream reports it: the input at `message_start` (uncached,
 * written to the cache and read from it, which together are the prompt), the
 * output counted up to `message_delta`, which may restate the input.
 */
function addUsage(usage: Usage | undefined, value: unknown, start: boolean): Usage | undefined {
  if (!value || typeof value !== "object") return usage;
  const u = value as Json;
  const inputs = [u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens].filter((n): n is number => typeof n === "number");
  const output = typeof u.output_tokens === "number" ? u.output_tokens : undefined;
  if (inputs.length === 0 && output === undefined) return usage;
  const next: Usage = { inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0 };
  if (inputs.length > 0 && (start || inputs.some((n) => n > 0))) next.inputTokens = inputs.reduce((a, b) => a + b, 0);
  if (output !== undefined) next.outputTokens = output;
  return next;
}
