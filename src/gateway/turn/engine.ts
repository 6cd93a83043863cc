/**
 * The one turn engine: every kind of turn — a conversation turn, an `/ultra`
 * turn, `/background` work, a scheduled job's run — goes through `run`, which
 * owns what they share: the tools a turn gets (through the role table), the
 * fault classes and the user's text for each (one table, no upstream words),
 * which provider answered, history writes, the step-limit note, outbox
 * keys, and what a reader sees while it runs. The kinds differ only in data
 * (src/gateway/turn/modes.ts): whether they answer live, what frames a
 * detached result, whether `/stop` reaches them.
 *
 * A live turn (conversation, ultra) streams where its channel does, shows
 * "typing…" and, after a silence, the "still waiting" status; its request
 * joins history when it starts, and a replay after a crash squares its answer
 * with what was delivered. A detached turn reads history, runs, and delivers
 * one framed message under its key; its answer joins history tagged with
 * where it came from, in the same transaction that records its delivery.
 */
import type { Database } from "bun:sqlite";
import type { TurnRequest, TurnResult } from "../../agent/agent.ts";
import type { Compactor } from "../../agent/compaction.ts";
import type { Tool } from "../../agent/tools/types.ts";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import type { ReplyButton, ReplyPort, ReplyTarget } from "../../message/index.ts";
import type { ProviderEvent } from "../../message/stream.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import type { IdempotencyStore } from "../../store/idempotency.ts";
import type { OutboxPart } from "../../store/outbox.ts";
import type { ChannelLookup } from "../channel-facts.ts";
import type { Delivery } from "../delivery.ts";
import type { AgentHandle, StreamRequest, ToolScope, TurnStream } from "../deps.ts";
import { ShutdownInterrupt } from "../queue.ts";
import type { RoleSources } from "../roles.ts";
import { type Asker, audienceFor, type SharedToolsLookup, senderOf, toolsForTurn } from "../tools.ts";
import type { Role } from "../trust.ts";
import { faultMessage, STEP_LIMIT_NOTE, type TurnFaultClass } from "./faults.ts";
import { type DetachedFrame, TURN_KINDS, type TurnKind } from "./modes.ts";
import { committedAnswer, squared, withdraw } from "./replay.ts";
import { watchSilence } from "./waiting.ts";

export type TurnOutcome = "answered" | "reacted" | "empty_completion" | "failed" | "cancelled" | "restarting" | "interrupted";

/** A turn that ended in a fault: its class and what the user was told. */
export interface TurnFault {
  class: TurnFaultClass;
  message: string;
}

/** What the engine needs of the daemon: small, and reading the config in force where a setting matters (the MCP servers' `roles` among it). */
export interface TurnServices extends RoleSources {
  agent: AgentHandle;
  conversations: ConversationStore;
  delivery: Delivery;
  /** For the transactions that commit an answer with its delivery. */
  db: Database;
  idempotency: IdempotencyStore;
  workspace: string;
  /** Tools the features offer a scope besides react and send_attachment (workspace, memory, jobs, skills). */
  extraTools?: (scope: ToolScope) => Tool[];
  /** Shared chats where the owner switched the changing and sending tools on. */
  sharedToolsOn: SharedToolsLookup;
  /** What each channel is (its profile): whether a turn there streams and shows statuses. */
  profiles: ChannelLookup;
  /** A streaming engine for a live turn, or null where its channel does not stream (the config in force decides). */
  stream?: (request: StreamRequest) => TurnStream | null;
  /** `waiting_notice_ms` in force; 0: never. */
  waitingNoticeMs(): number;
  /** The compactor of the provider in force, or null. */
  compactor(): Compactor | null;
  telemetry: Telemetry;
  log: Logger;
}

/** One turn, as the engine is asked to run it. */
export interface TurnSpec {
  kind: TurnKind;
  /** Who asked, and in which chat: the role table judges the tools from it; the model is shown who said it. */
  asker: Asker;
  /** Whose memory and jobs the tools work in. */
  role: Role;
  conversation: string;
  target: ReplyTarget;
  /** The outbox key of the answer; the tools' files and the notices get keys under it. */
  replyKey: string;
  /** The channel's own port: typing, statuses, and what recorded parts go through. */
  rawPort: ReplyPort;
  /** The port the tools send through, wrapped by the outbox (default: one under `replyKey`). */
  port?: ReplyPort;
  /** Short notices in the conversation (default: recorded under `replyKey`). */
  say?: (markdown: string, buttons?: ReplyButton[]) => Promise<void>;
  text: string;
  images: Array<{ mime: string; data: string }>;
  signal: AbortSignal;
  /** Marks the message's inbox entries done, inside the transaction that commits the answer. */
  complete?: () => void;
  /** A streaming sink given by the surface (ACP), instead of the channel's engine. */
  stream?: TurnStream;
  /** Replayed from the inbox after a restart. */
  replay?: boolean;
  /** Runs the turn in the MainAgent's stead (ultra mode). */
  runner?: (request: TurnRequest) => Promise<TurnResult>;
  /** A detached turn's heading and history tag. */
  frame?: DetachedFrame;
  /** Told the class and message of a fault the turn ends in, beside the message the reader is sent. */
  onFault?: (fault: TurnFault) => void;
}

const TYPING_EVERY_MS = 4500;
/** How often a detached turn due while the agent restarts looks again (ms). */
const AGENT_POLL_MS = 500;

export class TurnEngine {
  constructor(private readonly services: TurnServices) {}

  async run(spec: TurnSpec): Promise<TurnOutcome> {
    const { services } = this;
    const rules = TURN_KINDS[spec.kind];
    const channel = spec.asker.channel;
    const log = services.log.child({ channel, turn: spec.kind });
    const port = spec.port ?? services.delivery.durablePort(channel, spec.target, `${spec.replyKey}:media`, spec.rawPort, "media");
    let notices = 0;
    const say =
      spec.say ??
      (async (markdown: string) => void (await services.delivery.say(channel, spec.target, `${spec.replyKey}:n${notices++}`, markdown, spec.rawPort)));
    const fault = async (kind: TurnFaultClass, shownAnything = false): Promise<void> => {
      const message = faultMessage(kind, shownAnything);
      spec.onFault?.({ class: kind, message });
      if (spec.frame) await this.deliverDetached(spec, spec.frame.failure(message));
      else await say(message);
    };

    if (!services.agent.configured) {
      await fault("no_provider");
      return "failed";
    }
    const agent = rules.live ? services.agent.current() : await this.liveAgent(spec.signal);
    if (!agent) {
      if (!rules.live) return spec.signal.reason instanceof ShutdownInterrupt ? "interrupted" : "cancelled";
      services.telemetry.emit("dispatcher.agent_unavailable", { measurements: { count: 1 }, metadata: { channel } });
      await fault("restarting");
      return "restarting";
    }

    // A replay first looks at what its earlier attempt left under the same reply key.
    const earlier = rules.live && spec.replay ? services.delivery.delivered(spec.replyKey) : [];
    // A part caught mid-send has no id to take back and may have arrived: it is never sent again, so what was delivered is squared.
    const takeBack = earlier.length > 0 && spec.rawPort.capabilities.delete && earlier.every((part) => part.platformId !== null);
    const reconcile = earlier.length > 0 && !takeBack;
    if (takeBack) await withdraw(spec.rawPort, earlier, log);
    const committed = rules.live && spec.replay ? committedAnswer(services.conversations, spec.conversation, spec.text) : undefined;
    if (committed !== undefined) return this.deliverLive(spec, committed, null, reconcile ? earlier : [], true);

    // Where the client shows the turn itself (an editor, the terminal), no streaming engine and no status: its profile streams null.
    const showsTurn = services.profiles(channel).streaming !== null;
    // On a channel that cannot take messages back, a replay does not stream: its answer is squared with what was sent first.
    const stream = rules.live && !reconcile && showsTurn ? (spec.stream ?? this.channelStream(spec, port)) : (spec.stream ?? null);
    const stopTyping = rules.live ? keepTyping(spec.rawPort, spec.signal) : () => {};
    const silence = rules.waitingNotice && showsTurn ? watchSilence(spec.rawPort, services.waitingNoticeMs(), spec.signal, log) : undefined;
    const audience = audienceFor(spec.asker, rules.tools, services.sharedToolsOn);
    let shown = false;
    const started = performance.now();
    let result: TurnResult;
    try {
      result = await (spec.runner ?? ((request: TurnRequest) => agent.runTurn(request)))({
        conversation: spec.conversation,
        channel,
        text: spec.text,
        images: spec.images,
        sender: senderOf(spec.asker, audience),
        shared: !audience.direct,
        tools: toolsForTurn(
          { channel, conversation: spec.conversation, senderId: spec.asker.senderId, role: spec.role, audience },
          services,
          rules.live ? spec.rawPort.capabilities.react : false,
        ),
        toolContext: {
          port,
          channel,
          conversation: spec.conversation,
          senderId: spec.asker.senderId,
          role: spec.role,
          target: spec.target,
          workspace: services.workspace,
          idempotency: services.idempotency,
          say,
        },
        signal: spec.signal,
        ...(rules.live ? {} : { detached: true }),
        onEvent: (event: ProviderEvent) => {
          shown ||= event.type === "text_delta" || event.type === "message_done";
          silence?.heard();
          stream?.push(event);
        },
      });
    } catch (error) {
      stopTyping();
      await silence?.close();
      await stream?.stop();
      log.error("the agent failed unexpectedly; restarting it", { error: describeError(error) });
      services.agent.restart("turn failed");
      await fault("internal");
      return "failed";
    }
    stopTyping();
    await silence?.close();
    try {
      return await this.conclude(spec, result, { stream, shown, started, log, fault, reconcile, earlier });
    } finally {
      // What the tools asked to do once the turn is over (a desktop's last screenshot), whatever its end.
      for (const after of result.effects.after ?? []) {
        await after().catch((error: unknown) => log.warn("a step after the turn failed", { error: describeError(error) }));
      }
    }
  }

  /** Deliver, or report, what the agent came back with. */
  private async conclude(
    spec: TurnSpec,
    result: TurnResult,
    turn: {
      stream: TurnStream | null;
      shown: boolean;
      started: number;
      log: Logger;
      fault: (kind: TurnFaultClass, shownAnything?: boolean) => Promise<void>;
      reconcile: boolean;
      earlier: OutboxPart[];
    },
  ): Promise<TurnOutcome> {
    const { services } = this;
    const channel = spec.asker.channel;
    const { stream, shown, started, log, fault, reconcile, earlier } = turn;
    switch (result.status) {
      case "cancelled":
        await stream?.stop();
        return spec.signal.reason instanceof ShutdownInterrupt ? "interrupted" : "cancelled";
      case "failed": {
        // What the reader saw stays, marked as cut off; the fault follows in one line, the details in the log.
        if (shown) await stream?.cut();
        else await stream?.stop();
        const failure = result.failure;
        // Health heard of the failure from the provider chain itself, provider by provider.
        log.error("turn failed: the model request failed", {
          conversation: spec.conversation,
          provider: result.provider ?? services.agent.providerName ?? "unknown",
          fault: failure?.fault ?? "server",
          ...(failure?.status !== undefined ? { status: failure.status } : {}),
          ...(failure?.code !== undefined ? { code: failure.code } : {}),
          attempts: failure?.attempts ?? 1,
          duration_ms: Math.round(performance.now() - started),
          reason: result.error ?? "unknown",
        });
        services.telemetry.emit("turn.failed", {
          measurements: { duration_ms: performance.now() - started },
          metadata: { channel, kind: spec.kind, class: failure?.fault ?? "server" },
        });
        await fault(failure?.fault ?? "server", shown && stream !== null);
        return "failed";
      }
      case "empty":
        await stream?.stop();
        await fault("empty");
        return "empty_completion";
    }
    services.telemetry.emit("turn.done", {
      measurements: { duration_ms: performance.now() - started, input_tokens: result.usage.inputTokens, output_tokens: result.usage.outputTokens },
      // Which provider gave the answer: the dashboard shows it (a fallback's answer while the primary is down).
      metadata: { channel, kind: spec.kind, outcome: result.status, ...(result.provider ? { provider: result.provider } : {}) },
    });

    const note = result.status === "step_limit" ? STEP_LIMIT_NOTE : result.note;
    const text = note ? `${result.text}\n\n${note}`.trim() : result.text;
    if (text === "") {
      // Only reactions or attachments, delivered as they went: nothing more to say or keep.
      await stream?.stop();
      spec.complete?.();
      return "reacted";
    }
    if (spec.frame) {
      await this.deliverDetached(spec, spec.frame.answer(text), `${spec.frame.historyTag} ${text}`);
      return "answered";
    }
    const outcome = await this.deliverLive(spec, text, stream, reconcile ? earlier : [], false);
    await this.compactIfDue(spec.conversation, spec.signal, log);
    return outcome;
  }

  /** The streaming engine of the turn's channel, by the config in force (null: it does not stream). */
  private channelStream(spec: TurnSpec, port: ReplyPort): TurnStream | null {
    const { delivery } = this.services;
    const channel = spec.asker.channel;
    return (
      this.services.stream?.({
        channel,
        port,
        conversation: spec.conversation,
        signal: spec.signal,
        fallback: delivery.fallback(channel, spec.target, spec.replyKey, spec.rawPort),
        sendFile: async (file) => {
          await delivery.send(delivery.recordFiles(channel, spec.target, spec.replyKey, [file]), spec.rawPort);
        },
      }) ?? null
    );
  }

  /**
   * Deliver a live answer and commit it. Streamed: the answer joins history,
   * the stream finishes, and only then is the inbox entry done — so a crash
   * while the last parts go out replays the turn, which finds the answer in
   * history and squares it with what was delivered. Not streamed: answer,
   * entry and parts commit in one transaction, and the outbox takes it from there.
   */
  private async deliverLive(spec: TurnSpec, text: string, stream: TurnStream | null, earlier: OutboxPart[], inHistory: boolean): Promise<TurnOutcome> {
    const { db, conversations, delivery, log } = this.services;
    const channel = spec.asker.channel;
    if (stream) {
      if (!inHistory) db.transaction(() => conversations.append(spec.conversation, "assistant", text))();
      await stream.finish(text);
      spec.complete?.();
      return "answered";
    }
    const markdown = earlier.length > 0 ? squared(text, earlier) : text;
    const parts = db.transaction(() => {
      if (!inHistory) conversations.append(spec.conversation, "assistant", text);
      spec.complete?.();
      return markdown.trim() === "" ? [] : delivery.record(channel, spec.target, spec.replyKey, markdown);
    })();
    if (markdown !== text) log.info("replayed answer squared with what was already delivered", { channel, reply: spec.replyKey, skipped: earlier.length });
    await delivery.send(parts, spec.rawPort, spec.signal);
    return "answered";
  }

  /**
   * A detached turn's one message, recorded under its key in the same
   * transaction that adds its answer to history (tagged) — so a crash after
   * it finds the key recorded, and the outbox, not a second run, finishes it.
   */
  private async deliverDetached(spec: TurnSpec, markdown: string, history?: string): Promise<void> {
    const { db, conversations, delivery } = this.services;
    const channel = spec.asker.channel;
    const parts = db.transaction(() => {
      if (history !== undefined) conversations.append(spec.conversation, "assistant", history);
      spec.complete?.();
      return delivery.record(channel, spec.target, spec.replyKey, markdown, 0, undefined, TURN_KINDS[spec.kind].purpose);
    })();
    await delivery.send(parts, spec.rawPort);
  }

  /** The live agent, waiting while it restarts (detached work has time); null when the turn is stopped first. */
  private async liveAgent(signal: AbortSignal) {
    for (;;) {
      if (signal.aborted) return null;
      const agent = this.services.agent.current();
      if (agent) return agent;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, AGENT_POLL_MS);
        const stop = () => {
          clearTimeout(timer);
          resolve(undefined);
        };
        signal.addEventListener("abort", stop, { once: true });
      });
    }
  }

  private async compactIfDue(conversation: string, signal: AbortSignal, log: Logger): Promise<void> {
    const compactor = this.services.compactor();
    if (!compactor?.due(conversation)) return;
    try {
      await compactor.compact(conversation, signal);
    } catch (error) {
      log.warn("automatic compaction failed", { error: describeError(error) });
    }
  }
}

/** Show "typing…" while a turn runs, on channels that have it. */
function keepTyping(port: ReplyPort, signal: AbortSignal): () => void {
  if (!port.capabilities.typing) return () => {};
  const ping = () => void port.typing().catch(() => {});
  ping();
  const timer = setInterval(ping, TYPING_EVERY_MS);
  const stop = () => clearInterval(timer);
  signal.addEventListener("abort", stop, { once: true });
  return stop;
}
