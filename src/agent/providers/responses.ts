/**
 * `api = "responses"`: the OpenAI Responses API over SSE. Requests are
 * stateless (`store: false`, the whole conversation every time), so any
 * Responses-compatible server works and nothing is kept at OpenAI's side.
 */
import type { ProviderConfig } from "../../config/schema.ts";
import { eventJson, type HttpDeps, type Json, providerError, str, streamSse } from "./http.ts";
import { computerCallEvent, computerCallOf, computerOutputItem, computerToolFor, nativeComputer } from "./responses-computer.ts";
import type { SseEvent } from "./sse.ts";
import type { ContentPart, ModelInput, ModelRequest, Provider, ProviderEvent, ProviderSettings, ToolSpec, Usage } from "./types.ts";

export type ReasoningSummary = "auto" | "concise" | "detailed";

export interface ResponsesOptions extends HttpDeps {
  /**
   * Ask for reasoning summaries. Off by default: models without reasoning
   * (gpt-4o, gpt-4.1, most compatible servers) reject the `reasoning` parameter.
   */
  reasoningSummary?: ReasoningSummary;
}

/** A Provider speaking the OpenAI Responses API at `config.base_url`. */
export function responsesProvider(name: string, config: ProviderSettings, options: ResponsesOptions = {}): Provider {
  const url = `${config.base_url.replace(/\/+$/, "")}/responses`;
  return {
    name,
    async *stream(request: ModelRequest): AsyncGenerator<ProviderEvent> {
      const call = { provider: name, url, apiKey: config.api_key, body: responsesBody(request, config, options), signal: request.signal };
      yield* parseResponsesStream(streamSse(call, options), call);
    },
  };
}

/** The JSON body of a streaming Responses request. */
export function responsesBody(request: ModelRequest, config: Pick<ProviderConfig, "model" | "max_tokens">, options: ResponsesOptions = {}): Json {
  const model = request.model || config.model;
  const native = nativeComputer(model);
  const body: Json = {
    model,
    input: inputItems(request.input, native),
    stream: true,
    store: false,
  };
  if (request.instructions) body.instructions = request.instructions;
  const nativeTool = (spec: ToolSpec) => (spec.native && native ? computerToolFor(native, spec.native) : null);
  if (request.tools?.length) body.tools = request.tools.map((spec) => nativeTool(spec) ?? tool(spec));
  // The preview computer model takes requests only with truncation on.
  if (native === "preview" && request.tools?.some((spec) => nativeTool(spec))) body.truncation = "auto";
  const maxTokens = request.maxOutputTokens ?? config.max_tokens;
  if (maxTokens) body.max_output_tokens = maxTokens;
  if (options.reasoningSummary) body.reasoning = { summary: options.reasoningSummary };
  return body;
}

/**
 * The request's input items. A native computer call goes back as the item the model sent, answered by
 * a `computer_call_output` with its screenshot; one that was not done (paused, refused, not approved)
 * goes back as a note instead, call and all, since a computer call can only be answered with a screenshot.
 */
function inputItems(input: readonly ModelInput[], native: ReturnType<typeof nativeComputer>): Json[] {
  const notDone = new Set(
    input.filter((item) => item.type === "function_call_output" && item.computer && !item.images?.length).map((item) => (item as { callId: string }).callId),
  );
  return input.flatMap((item): Json[] => {
    if (item.type === "function_call" && item.computer) return notDone.has(item.callId) ? [] : [computerCallOf(item.callId, item.computer)];
    if (item.type === "function_call_output" && item.computer) {
      const note = item.output ? [{ type: "message", role: "user", content: [{ type: "input_text", text: item.output }] }] : [];
      const [shot] = item.images ?? [];
      if (!shot) return note;
      return [computerOutputItem(item.callId, shot, item.computer.acknowledged, native ?? "computer"), ...note];
    }
    const json = inputItem(item);
    return Array.isArray(json) ? json : [json];
  });
}

function inputItem(item: ModelInput): Json | [] {
  switch (item.type) {
    case "reasoning":
      // Another format's signed reasoning (a turn that failed over): nothing this API can take back.
      return [];
    case "function_call":
      return { type: "function_call", call_id: item.callId, name: item.name, arguments: item.arguments };
    case "function_call_output":
      // With images (a screenshot), the output is content parts: the text, then each image.
      if (!item.images?.length) return { type: "function_call_output", call_id: item.callId, output: item.output };
      return {
        type: "function_call_output",
        call_id: item.callId,
        output: [{ type: "input_text", text: item.output }, ...item.images.map((image) => userPart({ type: "image", ...image }))],
      };
    case "message":
      // The API takes input_text/input_image only from the user; an assistant turn goes back as plain text.
      if (item.role === "assistant") return { type: "message", role: "assistant", content: textOf(item.content) };
      return { type: "message", role: "user", content: item.content.map(userPart) };
  }
}

function userPart(part: ContentPart): Json {
  if (part.type === "text") return { type: "input_text", text: part.text };
  return { type: "input_image", image_url: `data:${part.mime};base64,${part.data}`, detail: "auto" };
}

function tool(spec: ToolSpec): Json {
  return { type: "function", name: spec.name, description: spec.description, parameters: spec.parameters, strict: false };
}

function textOf(content: ContentPart[]): string {
  return content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** Translate Responses SSE events into ProviderEvents; throws ProviderError on failure events or a truncated stream. */
export async function* parseResponsesStream(events: AsyncIterable<SseEvent>, call: { provider: string; apiKey?: string }): AsyncGenerator<ProviderEvent> {
  for await (const frame of events) {
    if (frame.data === "[DONE]") break;
    const event = eventJson(frame.data, call);
    const type = typeof event.type === "string" ? event.type : frame.event;
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        yield { type: "text_delta", itemId: str(event.item_id), delta: str(event.delta) };
        break;
      case "response.reasoning_summary_text.delta":
        yield { type: "reasoning_delta", itemId: str(event.item_id), delta: str(event.delta) };
        break;
      case "response.output_item.done": {
        const done = finishedItem(event.item as Json | undefined);
        if (done) yield done;
        break;
      }
      case "response.completed": {
        const usage = usageOf((event.response as Json | undefined)?.usage);
        yield usage ? { type: "completed", usage } : { type: "completed" };
        return;
      }
      case "response.failed": {
        const error = ((event.response as Json | undefined)?.error ?? {}) as Json;
        throw providerError(call, `the response failed: ${str(error.message) || "no reason given"}`, undefined, optStr(error.code) ?? "failed");
      }
      case "response.incomplete": {
        const details = ((event.response as Json | undefined)?.incomplete_details ?? {}) as Json;
        const reason = str(details.reason) || "unknown";
        throw providerError(call, `the response is incomplete: ${reason}`, undefined, reason);
      }
      case "error":
        throw providerError(call, `the stream reported an error: ${str(event.message) || "no message"}`, undefined, optStr(event.code));
    }
  }
  throw providerError(call, "the stream ended before the response completed", undefined, "truncated");
}

/** A finished output item as an event: full message text, or a function call; other items (reasoning) give none. */
function finishedItem(item: Json | undefined): ProviderEvent | undefined {
  if (!item) return undefined;
  if (item.type === "computer_call") return computerCallEvent(item);
  if (item.type === "function_call") {
    return { type: "tool_call", callId: str(item.call_id), name: str(item.name), arguments: str(item.arguments) || "{}" };
  }
  if (item.type !== "message") return undefined;
  const parts = Array.isArray(item.content) ? (item.content as Json[]) : [];
  const text = parts.map((p) => (p.type === "output_text" ? str(p.text) : p.type === "refusal" ? str(p.refusal) : "")).join("");
  // An empty message is no message: the agent treats a reply without text as an empty completion.
  return text ? { type: "message_done", itemId: str(item.id), text } : undefined;
}

function usageOf(value: unknown): Usage | undefined {
  if (!value || typeof value !== "object") return undefined;
  const { input_tokens, output_tokens } = value as Json;
  if (typeof input_tokens !== "number" && typeof output_tokens !== "number") return undefined;
  return { inputTokens: Number(input_tokens ?? 0), outputTokens: Number(output_tokens ?? 0) };
}

function optStr(value: unknown): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}
