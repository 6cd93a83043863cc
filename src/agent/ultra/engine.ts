/**
 * Ultra mode (`/ultra <request>`): one turn worked on exhaustively in three
 * phases on the primary provider. A planner request splits the request into
 * independent parts (a JSON plan, at most `max_parts`); a worker sub-turn per
 * part runs them in parallel (at most `concurrency` at once), each with the
 * turn's tools and its own step limit; a merge request reviews the results
 * and writes the one answer, whose events stream like any turn's.
 *
 * It is shaped like `MainAgent.runTurn`, so the gateway's turn runner
 * delivers it like any turn. Only the planner writes to history (the owner's
 * request); workers and merge are detached, and the turn runner commits the
 * merged answer: the workers' chatter never enters the conversation. Every
 * model request goes through a meter: the footer's counts, and the token
 * ceiling — past it, running workers are stopped, the rest never start, and
 * the merge works with what is done. A worker that fails is reported to the
 * merge; the turn's signal (`/stop`) aborts every request at once.
 */

import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ProviderEvent } from "../../message/stream.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import { MainAgent, type PromptSection, type TurnRequest, type TurnResult } from "../agent.ts";
import type { ModelRequest, Provider, Usage } from "../providers/types.ts";
import { mergeInput, mergeSection, type PartOutcome, type Plan, parsePlan, plannerSection, ultraFooter, workerSection } from "./plan.ts";

export interface UltraSettings {
  maxParts: number;
  concurrency: number;
  /** The token ceiling of the whole turn. */
  maxTokens: number;
}

/** What the reader is shown while an ultra turn works. */
export type UltraProgress = { phase: "planning" } | { phase: "working"; done: number; total: number } | { phase: "merging" };

export interface UltraDeps {
  /** The primary provider and its model; null when none is configured. */
  model: () => { provider: Provider; model: string } | null;
  conversations: ConversationStore;
  soul: () => string;
  /** The sections every turn's instructions get (memories, skills). */
  sections?: (request: TurnRequest) => PromptSection[];
  /** Read at the start of each ultra turn (config reloads). */
  settings: () => UltraSettings;
  now?: () => Date;
  log?: Logger;
}

/** Counts every model request and the tokens reported, and calls `over` once the ceiling is reached. */
class Meter {
  requests = 0;
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private tripped = false;

  constructor(
    private readonly ceiling: number,
    private readonly over: () => void,
  ) {}

  get tokens(): number {
    return this.usage.inputTokens + this.usage.outputTokens;
  }

  get reached(): boolean {
    return this.tripped;
  }

  wrap(provider: Provider): Provider {
    return { name: provider.name, stream: (request) => this.count(provider, request) };
  }

  private async *count(provider: Provider, request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests++;
    for await (const event of provider.stream(request)) {
      if (event.type === "completed" && event.usage) {
        this.usage.inputTokens += event.usage.inputTokens;
        this.usage.outputTokens += event.usage.outputTokens;
        if (!this.tripped && this.tokens >= this.ceiling) {
          this.tripped = true;
          this.over();
        }
      }
      yield event;
    }
  }
}

export class UltraMode {
  constructor(private readonly deps: UltraDeps) {}

  /** One ultra turn for `request` (its text is the owner's request); `onProgress` hears each phase. */
  async runTurn(request: TurnRequest, onProgress: (progress: UltraProgress) => void = () => {}): Promise<TurnResult> {
    const { deps } = this;
    const settings = deps.settings();
    const primary = deps.model();
    const effects = { reacted: false, attachments: 0 };
    if (!primary) return { status: "failed", text: "", effects, usage: { inputTokens: 0, outputTokens: 0 }, error: "no model provider is configured" };
    const budget = new AbortController();
    const meter = new Meter(settings.maxTokens, () => budget.abort(new Error("the ultra token budget ran out")));
    const agent = new MainAgent({
      provider: meter.wrap(primary.provider),
      model: primary.model,
      conversations: deps.conversations,
      soul: deps.soul,
      ...(deps.sections ? { sections: deps.sections } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
    const base = {
      conversation: request.conversation,
      channel: request.channel,
      toolContext: request.toolContext,
      ...(request.sender ? { sender: request.sender } : {}),
      ...(request.shared !== undefined ? { shared: request.shared } : {}),
    };
    const finish = (result: TurnResult): TurnResult => ({ ...result, usage: { ...meter.usage } });

    // 1. The plan. The planner is the one request that writes to history: the owner's words, before any work.
    onProgress({ phase: "planning" });
    const planned = await agent.runTurn({
      ...base,
      text: request.text,
      images: request.images,
      tools: [],
      signal: request.signal,
      sections: [plannerSection(settings.maxParts)],
    });
    if (planned.status === "cancelled" || planned.status === "failed") return finish(planned);
    const plan: Plan = parsePlan(planned.text, request.text, settings.maxParts);
    if (plan.source !== "plan") deps.log?.info("ultra plan adjusted", { source: plan.source, parts: plan.parts.length });

    // 2. The parts, at most `concurrency` at once. The budget's abort stops running ones; the others never start.
    const parts = plan.parts;
    const outcomes: PartOutcome[] = [];
    const workerSignal = AbortSignal.any([request.signal, budget.signal]);
    // The parts' tools are the turn's: the role table gave them for an ultra part (src/gateway/roles.ts).
    const tools = request.tools;
    let next = 0;
    let done = 0;
    onProgress({ phase: "working", done, total: parts.length });
    const worker = async () => {
      while (next < parts.length) {
        const index = next++;
        if (workerSignal.aborted) {
          outcomes[index] = { status: "unfinished", text: "" };
          continue;
        }
        const part = parts[index]!;
        let result: TurnResult;
        try {
          result = await agent.runTurn({
            ...base,
            text: part.task,
            // Each part sees what the owner sent with the request (a screenshot to study, say).
            images: request.images,
            tools,
            signal: workerSignal,
            detached: true,
            sections: [workerSection(request.text, index, parts.length, part)],
          });
        } catch (error) {
          outcomes[index] = { status: "failed", error: describeError(error) };
          deps.log?.warn("ultra part failed", { part: index + 1, error: outcomes[index].error });
          continue;
        }
        effects.attachments += result.effects.attachments;
        outcomes[index] = outcomeOf(result, budget.signal);
        if (outcomes[index].status === "failed") deps.log?.warn("ultra part failed", { part: index + 1, error: result.error ?? result.status });
        if (request.signal.aborted) return;
        onProgress({ phase: "working", done: ++done, total: parts.length });
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, parts.length) }, worker));
    if (request.signal.aborted) return finish({ status: "cancelled", text: "", effects, usage: meter.usage });

    // 3. The merge: the one answer, streamed to the reader through the turn's onEvent.
    onProgress({ phase: "merging" });
    const merged = await agent.runTurn({
      ...base,
      text: mergeInput(request.text, parts, outcomes),
      images: [],
      tools: [],
      signal: request.signal,
      detached: true,
      sections: [mergeSection(meter.reached)],
      ...(request.onEvent ? { onEvent: request.onEvent } : {}),
    });
    const failed = outcomes.filter((o) => o.status === "failed").length;
    const unfinished = outcomes.filter((o) => o.status === "unfinished").length;
    deps.log?.info("ultra turn done", {
      parts: parts.length,
      failed,
      unfinished,
      requests: meter.requests,
      tokens: meter.tokens,
      budget_reached: meter.reached,
      merge: merged.status,
    });
    if (merged.status !== "ok" && merged.status !== "step_limit")
      return finish({ ...merged, effects: { ...merged.effects, attachments: effects.attachments } });
    const footer = ultraFooter({
      parts: parts.length,
      failed,
      unfinished,
      requests: meter.requests,
      tokens: meter.tokens,
      ...(meter.reached ? { budget: settings.maxTokens } : {}),
    });
    return finish({ status: "ok", text: `${merged.text}\n\n${footer}`, effects: { ...merged.effects, attachments: effects.attachments }, usage: meter.usage });
  }
}

/** How a worker's sub-turn ended, for the merge. */
function outcomeOf(result: TurnResult, budget: AbortSignal): PartOutcome {
  switch (result.status) {
    case "ok":
    case "step_limit":
      return { status: "done", text: result.text, stepLimit: result.status === "step_limit" };
    case "cancelled":
      // Only the budget gets here: a /stop ends the whole turn before the merge.
      return budget.aborted ? { status: "unfinished", text: result.text } : { status: "failed", error: "it was stopped" };
    case "empty":
      return { status: "failed", error: "the model gave an empty answer" };
    case "failed":
      return {
        status: "failed",
        error: result.failure
          ? `the model request failed (${result.failure.fault}${result.failure.status ? `, HTTP ${result.failure.status}` : ""})`
          : (result.error ?? "unknown error"),
      };
  }
}
