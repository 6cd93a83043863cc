/**
 * `api = "chat"`: OpenAI-compatible chat completions with `stream: true`, the
 * lingua franca of Ollama, llama.cpp, vLLM and OpenRouter. Their dialects
 * differ a little (where reasoning goes, whether tool calls carry an index or
 * an id, whether `[DONE]` or a usage chunk is sent), so parsing is lenient.
 */
import type { ProviderConfig } from "../../config/schema.ts";
import { eventJson, type HttpDeps, type Json, providerError, str, streamSse } from "./http.ts";
import type { SseEvent } from "./sse.ts";
import type { ContentPart, ModelRequest, Provider, ProviderEvent, ProviderSettings, ToolSpec, Usage } from "./types.ts";

interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | Json[];
  tool_calls?: Json[];
  tool_call_id?: string;
}

/** A Provider speaking OpenAI-compatible chat completions at `config.base_url`. */
export function chatProvider(name: string, config: ProviderSettings, deps: HttpDeps = {}): Provider {
  const url = `${config.base_url.replace(/\/+$/, "")}/chat/completions`;
  return {
    name,
    async *stream(request: ModelRequest): AsyncGenerator<ProviderEvent> {
      const call = { provider: name, url, apiKey: config.api_key, body: chatBody(request, config), signal: request.signal };
      yield* parseChatStream(streamSse(call, deps), call);
    },
  };
}

/** The JSON body of a streaming chat-completions request. */
export function chatBody(request: ModelRequest, config: Pick<ProviderConfig, "model" | "max_tokens">): Json {
  const body: Json = {
    model: request.model || config.model,
    messages: chatMessages(request),
    stream: true,
    // Without it no usage arrives in a stream; servers that do not know it ignore it.
    stream_options: { include_usage: true },
  };
  if (request.tools?.length) body.tools = request.tools.map(tool);
  // max_tokens, not max_completion_tokens: it is the one every compatible server understands.
  const maxTokens = request.maxOutputTokens ?? config.max_tokens;
  if (maxTokens) body.max_tokens = maxTokens;
  return body;
}

/** The conversation as chat messages: tool calls of one step folded into one assistant message. */
export function chatMessages(request: ModelRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: "system", content: request.instructions });
  // A tool message carries text only: images tools answered with follow the step's tool messages as one user message.
  let shown: ContentPart[] = [];
  const showImages = () => {
    if (shown.length === 0) return;
    messages.push({ role: "user", content: userContent([{ type: "text", text: "(images the tools above answered with)" }, ...shown]) });
    shown = [];
  };
  for (const item of request.input) {
    // Another format's signed reasoning (a turn that failed over): chat messages have no place for it.
    if (item.type === "reasoning") continue;
    if (item.type !== "function_call_output") showImages();
    if (item.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.callId, content: item.output });
      for (const image of item.images ?? []) shown.push({ type: "image", ...image });
    } else if (item.type === "function_call") {
      const call = { id: item.callId, type: "function", function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      // Text and tool calls of the same step belong to the same assistant message.
      if (last?.role === "assistant") {
        last.tool_calls ??= [];
        last.tool_calls.push(call);
      } else messages.push({ role: "assistant", content: "", tool_calls: [call] });
    } else if (item.role === "assistant") {
      messages.push({ role: "assistant", content: item.content.map((p) => (p.type === "text" ? p.text : "")).join("") });
    } else {
      messages.push({ role: "user", content: userContent(item.content) });
    }
  }
  showImages();
  return messages;
}

/** Plain text as a string (some local servers take nothing else); with images, content parts. */
function userContent(content: ContentPart[]): string | Json[] {
  if (content.every((p) => p.type === "text")) return content.map((p) => (p.type === "text" ? p.text : "")).join("");
  return content.map((p) =>
    p.type === "text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: `data:${p.mime};base64,${p.data}` } },
  );
}

function tool(spec: ToolSpec): Json {
  return { type: "function", function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

/** Translate chat-completion chunks into ProviderEvents; throws ProviderError on error chunks or a truncated stream. */
export async function* parseChatStream(events: AsyncIterable<SseEvent>, call: { provider: string; apiKey?: string }): AsyncGenerator<ProviderEvent> {
  let itemId = "";
  let text = "";
  let usage: Usage | undefined;
  let finished = false;
  let sawDone = false;
  const calls = new Map<number, PendingCall>();

  /** The end of the message: its full text, then the tool calls in index order. */
  function* flush(): Generator<ProviderEvent> {
    finished = true;
    if (text) yield { type: "message_done", itemId, text };
    for (const [index, pending] of [...calls].sort(([a], [b]) => a - b)) {
      const callId = pending.id || `call_${itemId}_${index}`;
      yield { type: "tool_call", callId, name: pending.name, arguments: pending.arguments || "{}" };
    }
  }

  for await (const frame of events) {
    if (frame.data.trim() === "[DONE]") {
      sawDone = true;
      break;
    }
    const chunk = eventJson(frame.data, call);
    // OpenRouter and vLLM report a failure mid-stream as a chunk with an `error` object.
    if (chunk.error) throw streamError(chunk.error, call);
    itemId ||= str(chunk.id) || "chatcmpl";
    usage = usageOf(chunk.usage) ?? usage;
    const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as Json | undefined) : undefined;
    if (!choice || finished) continue;
    const delta = (choice.delta ?? {}) as Json;
    // llama.cpp and vLLM say reasoning_content; Ollama and OpenRouter say reasoning.
    const reasoning = str(delta.reasoning_content) || str(delta.reasoning);
    if (reasoning) yield { type: "reasoning_delta", itemId, delta: reasoning };
    const content = str(delta.content);
    if (content) {
      text += content;
      yield { type: "text_delta", itemId, delta: content };
    }
    if (Array.isArray(delta.tool_calls)) collectToolCalls(delta.tool_calls as Json[], calls);
    const finish = choice.finish_reason;
    if (typeof finish !== "string" || !finish) continue;
    yield* flush();
    if (finish === "length") throw providerError(call, "the response is incomplete: max_output_tokens", undefined, "max_output_tokens");
    if (finish === "content_filter") throw providerError(call, "the response is incomplete: content_filter", undefined, "content_filter");
  }
  // A stream that ends cleanly after a finish_reason but without [DONE] is fine; without either it was cut short.
  if (!finished && !sawDone) throw providerError(call, "the stream ended before the response completed", undefined, "truncated");
  if (!finished) yield* flush();
  yield usage ? { type: "completed", usage } : { type: "completed" };
}

/** Merge tool-call fragments by index: the id and name arrive once, the arguments in pieces. */
function collectToolCalls(fragments: Json[], calls: Map<number, PendingCall>): void {
  fragments.forEach((fragment, position) => {
    const index = typeof fragment.index === "number" ? fragment.index : position;
    const fn = (fragment.function ?? {}) as Json;
    let pending = calls.get(index);
    if (!pending) {
      pending = { id: "", name: "", arguments: "" };
      calls.set(index, pending);
    }
    pending.id ||= str(fragment.id);
    pending.name ||= str(fn.name);
    // A few servers send the arguments as an object rather than a JSON string.
    if (typeof fn.arguments === "string") pending.arguments += fn.arguments;
    else if (fn.arguments && typeof fn.arguments === "object") pending.arguments += JSON.stringify(fn.arguments);
  });
}

function streamError(error: unknown, call: { provider: string; apiKey?: string }) {
  if (typeof error === "string") return providerError(call, `the stream reported an error: ${error}`);
  const { message, code } = error as Json;
  const codeText = typeof code === "string" ? code : typeof code === "number" ? String(code) : undefined;
  return providerError(call, `the stream reported an error: ${str(message) || "no message"}`, undefined, codeText);
}

function usageOf(value: unknown): Usage | undefined {
  if (!value || typeof value !== "object") return undefined;
  const { prompt_tokens, completion_tokens } = value as Json;
  if (typeof prompt_tokens !== "number" && typeof completion_tokens !== "number") return undefined;
  return { inputTokens: Number(prompt_tokens ?? 0), outputTokens: Number(completion_tokens ?? 0) };
}
