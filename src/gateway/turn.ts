/**
 * Step 7 of the pipeline: one turn of the MainAgent, from the model's first
 * event to the reply delivered. It owns what a reader sees while a turn runs
 * (typing, the streaming engine, an interim "still waiting" status), how a
 * fault is told (one message per class, the details in the log), and how a
 * turn replayed after a crash squares its answer with what its first attempt
 * already delivered.
 */
import type { TurnRequest, TurnResult } from "../agent/agent.ts";
import type { InboundMessage, ReplyButton, ReplyPort, ReplyTarget, SentMessage } from "../message/index.ts";
import { remainderAfter } from "./reconcile.ts";
import type { ProviderEvent } from "../message/stream.ts";
import type { OutboxPart } from "../store/outbox.ts";
import type { GatewayDeps, TurnStream } from "./deps.ts";
import { faultMessage, WAITING_NOTICE } from "./faults.ts";
import { ShutdownInterrupt } from "./queue.ts";
import { type Asker, audienceFor, senderOf, toolsForTurn } from "./tools.ts";
import type { Standing } from "./trust.ts";

export type TurnOutcome = "answered" | "reacted" | "empty_completion" | "failed" | "cancelled" | "restarting" | "interrupted";

export interface TurnInput {
  message: InboundMessage;
  /** The sender's role: the operator (owner) or an allowed user. */
  role: "operator" | "user";
  /** Where the sender stands on the channel: what the role table offers them. */
  standing: Standing;
  conversation: string;
  target: ReplyTarget;
  replyKey: string;
  /** The channel's port wrapped by the outbox (live parts). */
  port: ReplyPort;
  /** The channel's own port, for recorded parts and typing. */
  rawPort: ReplyPort;
  say: (markdown: string, buttons?: ReplyButton[]) => Promise<void>;
  /** Complete the message's inbox entries (inside the transaction that commits the answer, where there is one). */
  complete: () => void;
  signal: AbortSignal;
  text: string;
  images: Array<{ mime: string; data: string }>;
  /** A streaming sink given by the surface (ACP), instead of the channel's engine. */
  stream?: TurnStream;
  /** The turn is replayed from the inbox after a restart. */
  replay?: boolean;
  /** Runs the turn in the MainAgent's stead (ultra mode); it shows its own progress, so no waiting notice. */
  runner?: (request: TurnRequest) => Promise<TurnResult>;
  /** Told the class and message of a fault the turn ends in (beside the message the reader is sent). */
  onFault?: (fault: TurnFault) => void;
}

/** A turn that ended in a fault: its class (a provider fault, "restarting", "no_provider", "empty", "internal") and what the user was told. */
export interface TurnFault {
  class: string;
  message: string;
}

const TYPING_EVERY_MS = 4500;
/** The one line that opens a replayed answer on a channel that cannot take back what the first attempt sent. */
export const RESTART_INTRO = "_(I was restarted while answering; here is the complete answer.)_";

export class TurnRunner {
  constructor(private readonly deps: GatewayDeps) {}

  async run(turn: TurnInput): Promise<TurnOutcome> {
    const { deps } = this;
    const { message } = turn;
    const fault = async (kind: string, text: string) => {
      turn.onFault?.({ class: kind, message: text });
      await turn.say(text);
    };
    if (!deps.agent.configured) {
      await fault("no_provider", "No model provider is configured yet — run `fermix setup` on the machine running Fermix.");
      return "failed";
    }
    const agent = deps.agent.current();
    if (!agent) {
      deps.telemetry.emit("dispatcher.agent_unavailable", { measurements: { count: 1 }, metadata: { channel: message.channel } });
      await fault("restarting", "The assistant is restarting (restart in progress) — please send that again in a moment.");
      return "restarting";
    }

    // A replay first looks at what its earlier attempt left under the same reply key.
    const earlier = turn.replay ? deps.delivery.delivered(turn.replyKey) : [];
    const withdraw = earlier.length > 0 && turn.rawPort.capabilities.delete;
    const reconcile = earlier.length > 0 && !withdraw;
    if (withdraw) await this.withdraw(turn, earlier);
    const committed = turn.replay ? this.committedAnswer(turn) : undefined;
    if (committed !== undefined) return this.deliver(turn, committed, null, reconcile ? earlier : [], true);

    // On a channel that cannot take messages back, a replay does not stream: its answer is squared with what was sent first.
    const stream =
      turn.stream ??
      (deps.profiles(message.channel).streaming === null || reconcile
        ? null
        : (deps.stream?.({
            channel: message.channel,
            port: turn.port,
            conversation: turn.conversation,
            signal: turn.signal,
            fallback: deps.delivery.fallback(message.channel, turn.target, turn.replyKey, turn.rawPort),
            sendFile: async (file) => {
              await deps.delivery.send(deps.delivery.recordFiles(message.channel, turn.target, turn.replyKey, [file]), turn.rawPort);
            },
          }) ?? null));
    const stopTyping = this.keepTyping(turn.rawPort, turn.signal);
    const waiting = turn.runner ? { answered: async () => {} } : this.waitingNotice(turn);
    let shown = false;
    const started = performance.now();
    const asker: Asker = { ...message, standing: turn.standing };
    // An ultra turn's tools are its parts' (the planner and the merge get none).
    const audience = audienceFor(asker, turn.runner ? "ultra_part" : "foreground", (channel, chatId) => deps.sandbox?.store.sharedToolsOn(channel, chatId) ?? false);
    let result: TurnResult;
    try {
      result = await (turn.runner ?? ((request: TurnRequest) => agent.runTurn(request)))({
        conversation: turn.conversation,
        channel: message.channel,
        text: turn.text,
        images: turn.images,
        sender: senderOf(asker, audience),
        shared: !audience.direct,
        tools: toolsForTurn(
          { channel: message.channel, conversation: turn.conversation, senderId: message.senderId, role: turn.role, audience },
          deps,
          turn.port.capabilities.react,
        ),
        toolContext: {
          port: turn.port,
          channel: message.channel,
          conversation: turn.conversation,
          senderId: message.senderId,
          role: turn.role,
          target: turn.target,
          workspace: deps.workspace,
          idempotency: deps.idempotency,
          say: turn.say,
        },
        signal: turn.signal,
        onEvent: (event: ProviderEvent) => {
          if (event.type === "text_delta" || event.type === "reasoning_delta" || event.type === "message_done") {
            shown ||= event.type !== "reasoning_delta";
            void waiting.answered();
          }
          stream?.push(event);
        },
      });
    } catch (error) {
      stopTyping();
      await waiting.answered();
      await stream?.stop();
      deps.log.error("the agent failed unexpectedly; restarting it", { error: error instanceof Error ? error.message : String(error) });
      deps.agent.restart("turn failed");
      await fault("internal", "Something went wrong on my side and the assistant is restarting — please try again in a moment.");
      return "failed";
    }
    stopTyping();
    await waiting.answered();

    switch (result.status) {
      case "cancelled":
        await stream?.stop();
        return turn.signal.reason instanceof ShutdownInterrupt ? "interrupted" : "cancelled";
      case "failed": {
        // What the reader saw stays, marked as cut off; the fault follows in one line, the details in the log.
        if (shown) await stream?.cut();
        else await stream?.stop();
        const failure = result.failure;
        deps.agent.noteOutcome?.(false, result.failure);
        deps.log.error("turn failed: the model request failed", {
          channel: message.channel,
          conversation: turn.conversation,
          provider: deps.agent.providerName ?? "unknown",
          fault: failure?.fault ?? "server",
          ...(failure?.status !== undefined ? { status: failure.status } : {}),
          ...(failure?.code !== undefined ? { code: failure.code } : {}),
          attempts: failure?.attempts ?? 1,
          duration_ms: Math.round(performance.now() - started),
          reason: result.error ?? "unknown",
        });
        deps.telemetry.emit("turn.failed", {
          measurements: { duration_ms: performance.now() - started },
          metadata: { channel: message.channel, class: failure?.fault ?? "server" },
        });
        await fault(failure?.fault ?? "server", faultMessage(failure?.fault, shown && stream !== null));
        return "failed";
      }
      case "empty":
        await stream?.stop();
        deps.agent.noteOutcome?.(true);
        await fault("empty", "I got an empty answer from the model — please try again.");
        return "empty_completion";
    }
    deps.agent.noteOutcome?.(true);
    deps.telemetry.emit("turn.done", {
      measurements: { duration_ms: performance.now() - started, input_tokens: result.usage.inputTokens, output_tokens: result.usage.outputTokens },
      metadata: { channel: message.channel, outcome: result.status },
    });

    const text = result.status === "step_limit" ? `${result.text}\n\n_(I stopped after too many tool steps.)_`.trim() : result.text;
    if (text === "") {
      // Only reactions or attachments: nothing more to say, nothing to write to history.
      await stream?.stop();
      return "reacted";
    }
    const outcome = await this.deliver(turn, text, stream, reconcile ? earlier : [], false);
    await this.compactIfDue(turn.conversation, turn.signal);
    return outcome;
  }

  /**
   * Deliver an answer and commit it. Streamed: the answer joins history, the
   * stream finishes, and only then is the inbox entry done — so a crash while
   * the last parts go out replays the turn, which finds the answer in history
   * and squares it with what was delivered. Not streamed: answer, entry and
   * parts commit in one transaction, and the outbox takes it from there.
   */
  private async deliver(turn: TurnInput, text: string, stream: TurnStream | null, earlier: OutboxPart[], inHistory: boolean): Promise<TurnOutcome> {
    const { deps } = this;
    const channel = turn.message.channel;
    if (stream) {
      if (!inHistory) deps.db.transaction(() => deps.conversations.append(turn.conversation, "assistant", text))();
      await stream.finish(text);
      turn.complete();
      return "answered";
    }
    const markdown = earlier.length > 0 ? squared(text, earlier) : text;
    const parts = deps.db.transaction(() => {
      if (!inHistory) deps.conversations.append(turn.conversation, "assistant", text);
      turn.complete();
      return markdown.trim() === "" ? [] : deps.delivery.record(channel, turn.target, turn.replyKey, markdown);
    })();
    if (markdown !== text) deps.log.info("replayed answer squared with what was already delivered", { channel, reply: turn.replyKey, skipped: earlier.length });
    await deps.delivery.send(parts, turn.rawPort, turn.signal);
    return "answered";
  }

  /** The answer a crashed attempt already committed: history ends with this request and its answer. */
  private committedAnswer(turn: TurnInput): string | undefined {
    const history = this.deps.conversations.history(turn.conversation);
    const [request, answer] = history.slice(-2);
    return request?.role === "user" && request.text === turn.text && answer?.role === "assistant" ? answer.text : undefined;
  }

  /** A replay on a channel that can take messages back: what the crashed attempt showed is removed, the new answer replaces it. */
  private async withdraw(turn: TurnInput, earlier: OutboxPart[]): Promise<void> {
    let removed = 0;
    for (const part of earlier) {
      if (part.platformId === null) continue;
      try {
        await turn.rawPort.deleteMessage({ id: part.platformId });
        removed++;
      } catch (error) {
        this.deps.log.warn("could not remove a message of an interrupted reply", { channel: turn.message.channel, error: error instanceof Error ? error.message : String(error) });
      }
    }
    this.deps.log.info("replayed turn removed what its interrupted attempt had shown", { channel: turn.message.channel, reply: turn.replyKey, removed });
  }

  /** Show "typing…" while a turn runs, on channels that have it. */
  private keepTyping(port: ReplyPort, signal: AbortSignal): () => void {
    if (!port.capabilities.typing) return () => {};
    const ping = () => void port.typing().catch(() => {});
    ping();
    const timer = setInterval(ping, TYPING_EVERY_MS);
    const stop = () => clearInterval(timer);
    signal.addEventListener("abort", stop, { once: true });
    return stop;
  }

  /**
   * After `waitingNoticeMs` without a word from the model, an interim status
   * tells the reader it is still coming; it is removed when the answer starts
   * (or the turn ends), where the channel can delete messages.
   */
  private waitingNotice(turn: TurnInput): { answered(): Promise<void> } {
    const ms = this.deps.waitingNoticeMs ?? 0;
    const channel = turn.message.channel;
    if (ms <= 0 || this.deps.profiles(channel).streaming === null) return { answered: async () => {} };
    let notice: Promise<SentMessage | undefined> | undefined;
    let over = false;
    const timer = setTimeout(() => {
      if (over || turn.signal.aborted) return;
      // Straight through the channel, not the outbox: a status is not part of the answer a replay squares.
      notice = turn.rawPort.sendText({ text: WAITING_NOTICE, notify: false, linkPreview: false, plain: true }).catch((error: unknown) => {
        this.deps.log.warn("could not show the waiting status", { channel, error: error instanceof Error ? error.message : String(error) });
        return undefined;
      });
    }, ms);
    return {
      answered: async () => {
        if (over) return;
        over = true;
        clearTimeout(timer);
        const sent = await notice;
        if (sent && turn.rawPort.capabilities.delete) await turn.rawPort.deleteMessage(sent).catch(() => {});
      },
    };
  }

  private async compactIfDue(conversation: string, signal: AbortSignal): Promise<void> {
    const compactor = this.deps.compactor;
    if (!compactor || !compactor.due(conversation)) return;
    try {
      await compactor.compact(conversation, signal);
    } catch (error) {
      this.deps.log.warn("automatic compaction failed", { error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/**
 * A replayed answer squared with what its first attempt delivered on a
 * channel that cannot take messages back: when the new answer starts with
 * what was delivered, only the rest is sent; otherwise the whole new answer,
 * introduced by one line saying why it comes again.
 */
export function squared(answer: string, earlier: readonly OutboxPart[]): string {
  const sources = earlier.map((part) => (part.payload.kind === "text" ? part.payload.message.source : undefined));
  const delivered = sources.every((s) => s !== undefined) ? sources.join("") : undefined;
  if (delivered !== undefined) {
    const rest = remainderAfter(answer, delivered);
    if (rest !== undefined) return rest;
  }
  return `${RESTART_INTRO}\n\n${answer}`;
}
