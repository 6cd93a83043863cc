/**
 * The MainAgent's turn loop: history + the new message in, the model's
 * answer out, with function calling up to a step limit. It writes the user's
 * message to history when the turn starts (an interrupted request stays as
 * context); the caller commits the answer together with its delivery.
 */

import { describeError } from "../kernel/errors.ts";
import type { GatewayChannel } from "../message/index.ts";
import { type MessageSender, spokenText } from "../message/untrusted.ts";
import type { ConversationStore, HistoryMessage } from "../store/conversations.ts";
import { buildInstructions } from "./prompt.ts";
import { type ContentPart, type ModelInput, type Provider, ProviderError, type ProviderEvent, type ProviderFault, type Usage } from "./providers/types.ts";
import { type ComputerCallResult, type Tool, type ToolContext, ToolError, type ToolResult, type TurnEffects } from "./tools/types.ts";

export const MAX_STEPS = 8;

export interface TurnRequest {
  conversation: string;
  channel: GatewayChannel;
  text: string;
  images: Array<{ mime: string; data: string }>;
  tools: Tool[];
  toolContext: Omit<ToolContext, "effects" | "signal">;
  signal: AbortSignal;
  /** Every provider event as it arrives, for the streaming engine. */
  onEvent?: (event: ProviderEvent) => void;
  /** Background work: reads history but does not write the request into it. */
  detached?: boolean;
  /** Sections for this request only, after the composition root's (an ultra turn's planner, worker, merge). */
  sections?: PromptSection[];
  /** Who sent `text`: kept with it in history, and shown to the model (anyone but the owner as untrusted). */
  sender?: MessageSender;
  /** The chat is shared with others (a group): every message is shown with who sent it. */
  shared?: boolean;
}

export type TurnStatus = "ok" | "empty" | "cancelled" | "failed" | "step_limit";

export interface TurnResult {
  status: TurnStatus;
  /** All assistant text of the turn, in order (pre-tool commentary included). */
  text: string;
  /** Closes the answer: why a tool ended the turn (TurnEffects.halt). */
  note?: string;
  effects: TurnEffects;
  usage: Usage;
  /** For `failed`: what went wrong, for the log (the provider's own words, no credential). */
  error?: string;
  /** For `failed`: the provider's fault, for the user's message and for health. */
  failure?: { fault: ProviderFault; status?: number; code?: string; attempts: number };
  /** The provider that took the turn's latest request (answered it, or failed it last), where the provider is a failover chain. */
  provider?: string;
}

/** A section the composition root adds to a turn's instructions (relevant memories, available skills…). */
export interface PromptSection {
  title: string;
  body: string;
}

export interface AgentDeps {
  provider: Provider;
  model: string;
  conversations: ConversationStore;
  /** The persona, read for every turn (it may change between turns). */
  soul: () => string;
  /** Extra sections for one turn's instructions, in order; empty ones are left out. */
  sections?: (request: TurnRequest) => PromptSection[];
  now?: () => Date;
  maxSteps?: number;
}

/** History as model input (each user message as spokenText shows it); a summary goes into the instructions instead. */
export function historyInput(history: HistoryMessage[], shared = false): { input: ModelInput[]; summary?: string } {
  const input: ModelInput[] = [];
  let summary: string | undefined;
  for (const message of history) {
    if (message.role === "summary") summary = message.text;
    else {
      const text = message.role === "user" ? spokenText(message.text, message.sender, shared) : message.text;
      input.push({ type: "message", role: message.role, content: [{ type: "text", text }] });
    }
  }
  return summary === undefined ? { input } : { input, summary };
}

const isAbort = (error: unknown, signal: AbortSignal) =>
  signal.aborted || (error instanceof Error && (error.name === "AbortError" || error.name === "TurnCancelled"));

export class MainAgent {
  constructor(private readonly deps: AgentDeps) {}

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    const { conversations } = this.deps;
    let history = conversations.history(request.conversation);
    // The request is written when its turn starts, so a turn replayed from the inbox after a crash
    // (or the same words resent after a /stop or an empty answer) finds it already last in the window,
    // unanswered: it is this request, not a second one, and the model must see it once.
    const last = history.at(-1);
    const sender = request.sender ?? { id: request.toolContext.senderId, trusted: request.toolContext.role === "operator" };
    if (last?.role === "user" && last.text === request.text) history = history.slice(0, -1);
    else if (!request.detached) conversations.append(request.conversation, "user", request.text, sender);

    const { input, summary } = historyInput(history, request.shared);
    const content: ContentPart[] = [];
    if (request.text !== "") content.push({ type: "text", text: spokenText(request.text, sender, request.shared ?? false) });
    for (const image of request.images) content.push({ type: "image", mime: image.mime, data: image.data });
    input.push({ type: "message", role: "user", content });

    const effects: TurnEffects = { reacted: false, attachments: 0 };
    const context: ToolContext = { ...request.toolContext, effects, signal: request.signal };
    const tools = new Map(request.tools.map((t) => [t.spec.name, t]));
    const soul = this.deps.soul();
    const instructions = buildInstructions(soul, {
      channel: request.channel,
      now: (this.deps.now ?? (() => new Date()))(),
      canReact: tools.has("react"),
      shared: request.shared ?? false,
      ...(summary ? { summary } : {}),
      sections: [...(this.deps.sections?.(request) ?? []), ...(request.sections ?? [])],
    });
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    const texts: string[] = [];
    // A failover chain gives each turn its own view: the turn's steps stay with the provider that answered.
    const turn = this.deps.provider.forTurn?.();
    const provider: Provider = turn ?? this.deps.provider;
    const result = (status: TurnStatus, error?: ProviderError): TurnResult => {
      const text = texts.join("\n\n").trim();
      const finalStatus = status === "ok" && text === "" && !effects.reacted && effects.attachments === 0 && !effects.halt ? "empty" : status;
      const answeredBy = turn?.answeredBy;
      const base: TurnResult = {
        status: finalStatus,
        text,
        effects,
        usage,
        ...(answeredBy ? { provider: answeredBy } : {}),
        ...(effects.halt ? { note: effects.halt } : {}),
      };
      if (!error) return base;
      const failure: NonNullable<TurnResult["failure"]> = { fault: error.fault, attempts: error.attempts };
      if (error.status !== undefined) failure.status = error.status;
      if (error.code !== undefined) failure.code = error.code;
      return { ...base, error: error.message, failure };
    };

    /** One model response: its text joins the answer, its calls are returned. */
    const ask = async (): Promise<ToolCallEvent[]> => {
      const calls: ToolCallEvent[] = [];
      for await (const event of provider.stream({
        model: this.deps.model,
        instructions,
        // The persona heads the instructions and stays the same from turn to turn: a provider may cache it.
        ...(instructions.startsWith(soul.trim()) ? { stableInstructions: soul.trim().length } : {}),
        input,
        ...(tools.size > 0 ? { tools: [...tools.values()].map((t) => t.spec) } : {}),
        signal: request.signal,
      })) {
        request.onEvent?.(event);
        if (event.type === "message_done" && event.text.trim() !== "") {
          texts.push(event.text);
          input.push({ type: "message", role: "assistant", content: [{ type: "text", text: event.text }] });
        } else if (event.type === "reasoning_done") {
          // Signed reasoning goes back to the model with the tool calls it led to, unchanged.
          input.push(
            event.data !== undefined
              ? { type: "reasoning", text: "", data: event.data }
              : { type: "reasoning", text: event.text, signature: event.signature ?? "" },
          );
        } else if (event.type === "tool_call") {
          calls.push(event);
        } else if (event.type === "completed" && event.usage) {
          usage.inputTokens += event.usage.inputTokens;
          usage.outputTokens += event.usage.outputTokens;
        }
      }
      return calls;
    };

    try {
      for (let step = 0; step < (this.deps.maxSteps ?? MAX_STEPS); step++) {
        const calls = await ask();
        if (calls.length === 0) return result("ok");
        // The step's calls together, then their answers: one assistant turn and the results that answer it, as every format wants them.
        for (const call of calls) {
          input.push({
            type: "function_call",
            callId: call.callId,
            name: call.name,
            arguments: call.arguments,
            ...(call.computer ? { computer: call.computer } : {}),
          });
        }
        for (const call of calls) {
          input.push(
            call.computer ? computerOutput(call.callId, await runComputer(tools, call, context)) : toolOutput(call.callId, await runTool(tools, call, context)),
          );
        }
        // A tool ended the turn: the model hears what it was told and says a last word; any call it makes now is not run.
        if (effects.halt) {
          await ask();
          return result("ok");
        }
      }
      return result("step_limit");
    } catch (error) {
      if (isAbort(error, request.signal)) return result("cancelled");
      if (error instanceof ProviderError) return result("failed", error);
      throw error;
    }
  }
}

type ToolCallEvent = Extract<ProviderEvent, { type: "tool_call" }>;

function toolOutput(callId: string, result: ToolResult): ModelInput {
  return typeof result === "string"
    ? { type: "function_call_output", callId, output: result }
    : { type: "function_call_output", callId, output: result.text, images: result.images };
}

function computerOutput(callId: string, result: ComputerCallResult): ModelInput {
  return {
    type: "function_call_output",
    callId,
    output: result.note ?? "",
    ...(result.screenshot ? { images: [result.screenshot] } : {}),
    computer: { acknowledged: result.acknowledged },
  };
}

/** A provider's own computer call, run by the tool of its name when the turn has it and it takes such calls. */
async function runComputer(tools: Map<string, Tool>, call: ToolCallEvent, context: ToolContext): Promise<ComputerCallResult> {
  const tool = tools.get(call.name);
  if (!tool?.computer || !call.computer) return { note: `error: there is no computer tool in this turn; nothing was done`, acknowledged: [] };
  try {
    return await tool.computer(call.computer, context);
  } catch (error) {
    if (isAbort(error, context.signal)) throw error;
    return { note: `error: ${error instanceof ToolError ? error.message : `${call.name} failed: ${describeError(error)}`}`, acknowledged: [] };
  }
}

/**
 * Run one call the model made: an unknown tool, arguments that are not a
 * JSON object, a refusal or a failure all come back as a line for the model
 * (`error: …`); only a stop of the turn is thrown. A realtime voice session
 * runs its calls through the same function.
 */
export async function runTool(tools: ReadonlyMap<string, Tool>, call: { name: string; arguments: string }, context: ToolContext): Promise<ToolResult> {
  const tool = tools.get(call.name);
  if (!tool) return `error: there is no tool named ${call.name}`;
  let args: unknown;
  try {
    args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch {
    return "error: the arguments were not valid JSON";
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return "error: the arguments must be a JSON object";
  try {
    return await tool.run(args as Record<string, unknown>, context);
  } catch (error) {
    if (error instanceof ToolError) return `error: ${error.message}`;
    if (isAbort(error, context.signal)) throw error;
    return `error: ${call.name} failed: ${describeError(error)}`;
  }
}
