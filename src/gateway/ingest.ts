/**
 * `ingest`: the single inbound entry point. Every message, whatever its
 * channel, goes through the seven steps of DESIGN.md in order: convert
 * (done by the adapter), authorize, media, reply port, commands, queue,
 * deliver to the MainAgent.
 */
import type { TurnResult } from "../agent/agent.ts";
import type { ProviderEvent } from "../message/stream.ts";
import { reactTool } from "../agent/tools/react.ts";
import { sendAttachmentTool } from "../agent/tools/send_attachment.ts";
import type { Tool } from "../agent/tools/types.ts";
import { MB } from "../kernel/sizes.ts";
import { startBackgroundTurn } from "./background-turn.ts";
import type { GatewayDeps, TurnStream } from "./deps.ts";
import { type CommandContext, CommandRefused, findCommand } from "./commands/index.ts";
import { parseCommand } from "./commands/parse.ts";
import { isEmptyMessage, prepareMedia } from "./media.ts";
import { conversationKey, type InboundMessage, type ReplyPort, type ReplyTarget } from "../message/index.ts";
import { ShutdownInterrupt, TurnCancelled } from "./queue.ts";
import { type Role, roleFor } from "./trust.ts";

export type { AgentHandle, ChannelAccess, GatewayDeps, StreamRequest, TurnStream } from "./deps.ts";

export type IngestOutcome =
  | "dropped"
  | "empty"
  | "refused"
  | "command"
  | "unauthorized_command"
  | "answered"
  | "reacted"
  | "empty_completion"
  | "failed"
  | "cancelled"
  | "restarting"
  /** Abandoned by a shutdown: left in the inbox to replay at the next start. */
  | "interrupted";

export interface IngestOptions {
  /** Inbox entries this message came from: done when its turn is done. */
  inboxIds?: number[];
  /** A port for this turn instead of the channel's (the command line, an ACP session). */
  port?: ReplyPort;
  /** A streaming sink for this turn instead of the channel's streaming engine. */
  stream?: TurnStream;
}

const TYPING_EVERY_MS = 4500;

export class Gateway {
  constructor(private readonly deps: GatewayDeps) {}

  /** The single inbound entry point; resolves when the message's turn (or short circuit) is done. */
  async ingest(message: InboundMessage, options: IngestOptions = {}): Promise<IngestOutcome> {
    this.deps.onActivity?.();
    const inboxIds = options.inboxIds ?? [];
    let done = false;
    // Inside a turn's commit transaction: the entry is done together with the answer.
    const complete = () => {
      if (done) return;
      done = true;
      if (inboxIds.length > 0) this.deps.inbox.complete(inboxIds);
    };
    let outcome: IngestOutcome | undefined;
    try {
      outcome = await this.pipeline(message, options, complete);
      return outcome;
    } finally {
      if (!done && outcome !== "interrupted" && inboxIds.length > 0) {
        done = true;
        this.deps.inbox.completeSoon(inboxIds);
      }
    }
  }

  private async pipeline(message: InboundMessage, options: IngestOptions, complete: () => void): Promise<IngestOutcome> {
    const { deps } = this;
    const log = deps.log.child({ channel: message.channel });
    // Step 2: authorize. A denied sender gets nothing, and nothing is downloaded.
    const role = roleFor(deps.config, message.channel, message.senderId);
    if (role === null) {
      log.info("message from an unauthorized sender dropped", { sender: message.senderId });
      deps.onUnknownSender?.(message);
      return "dropped";
    }
    deps.telemetry.emit("channel.message", { measurements: { count: 1 }, metadata: { channel: message.channel, direction: "inbound" } });

    const access = deps.channel(message.channel);
    const target: ReplyTarget = { chatId: message.chatId, replyTo: message.messageId };
    if (message.threadId !== undefined) target.threadId = message.threadId;
    const replyKey = `${message.channel}:${message.chatId}:${message.messageId}`;
    const rawPort = options.port ?? access?.port(target);
    if (!rawPort) {
      log.error("no reply port for channel; message not processed", { message: message.messageId });
      return "failed";
    }
    // Step 4 comes early for the short circuits: they too reply through the outbox.
    const port = deps.delivery.durablePort(message.channel, target, replyKey, rawPort);
    let notices = 0;
    const say = async (markdown: string) => {
      await deps.delivery.say(message.channel, target, `${replyKey}:n${notices++}`, markdown, rawPort);
    };

    if (isEmptyMessage(message)) {
      await say("That message looks empty — send me some text, a photo or a voice note.");
      return "empty";
    }

    const conversation = conversationKey(message);
    // Step 5: commands. An unknown /word is ordinary text for the agent; ACP has no commands.
    const parsed = message.channel === "acp" ? null : parseCommand(message.text);
    const command = parsed ? findCommand(parsed.name) : undefined;
    if (parsed && command) {
      deps.telemetry.emit("command.received", { measurements: { count: 1 }, metadata: { channel: message.channel, command: command.name } });
      if (command.operator && role !== "operator") {
        deps.telemetry.emit("command.unauthorized", {
          measurements: { count: 1 },
          metadata: { channel: message.channel, command: command.name, sender_id: message.senderId },
        });
        await say(`/${command.name} needs the owner of this assistant (operator). Send /whoami to see your id.`);
        return "unauthorized_command";
      }
      const context = this.commandContext(message, role, parsed.args, conversation, say, target, rawPort);
      const run = async () => {
        const started = performance.now();
        let ok = true;
        try {
          await command.run(context);
        } catch (error) {
          ok = false;
          if (error instanceof CommandRefused) await say(error.message);
          else {
            log.error("command failed", { command: command.name, error: error instanceof Error ? error.message : String(error) });
            await say(`/${command.name} failed: ${error instanceof Error ? error.message : "unexpected error"}`);
          }
        }
        deps.telemetry.emit("command.dispatch", {
          measurements: { duration_ms: performance.now() - started },
          metadata: { channel: message.channel, command: command.name, ok },
        });
      };
      if (command.immediate) await run();
      else await deps.queue.enqueue(conversation, run).catch((error) => (error instanceof TurnCancelled ? undefined : Promise.reject(error)));
      return "command";
    }

    // Step 3: media (after authorization, so nothing is fetched for a denied sender). It runs inside
    // the conversation's queue slot, taken synchronously on arrival: a slow download must not let a
    // later message of the same conversation overtake this one, nor let a /stop sent after it miss it.
    const prepare = (signal: AbortSignal) =>
      prepareMedia(message, {
        channel: message.channel,
        vision: deps.vision,
        model: deps.model,
        inboundCap: access?.inboundMediaCap ?? Number.POSITIVE_INFINITY,
        audioCap: deps.config.fermix_core.transcription.max_file_mb * MB,
        fetch: (m, fetchSignal) => {
          if (!access) throw new Error(`${message.channel} cannot download attachments`);
          return access.fetchMedia(m, fetchSignal);
        },
        ...(deps.transcribe ? { transcribe: deps.transcribe } : {}),
        telemetry: deps.telemetry,
        signal,
      });

    // Steps 6 and 7: queue the turn, then hand it to the MainAgent.
    try {
      return await deps.queue.enqueue(conversation, async (signal): Promise<IngestOutcome> => {
        // A /stop (or shutdown) during a download ends the turn like any other stop: no "couldn't download" reply.
        const stopped = (): IngestOutcome => (signal.reason instanceof ShutdownInterrupt ? "interrupted" : "cancelled");
        let media: Awaited<ReturnType<typeof prepare>>;
        try {
          media = await prepare(signal);
        } catch (error) {
          if (signal.aborted) return stopped();
          throw error;
        }
        if (signal.aborted) return stopped();
        if (media.kind === "refused") {
          await say(media.reply);
          return "refused";
        }
        return this.runTurn({ message, conversation, target, replyKey, port, rawPort, say, complete, signal, text: media.text, images: media.images, options });
      });
    } catch (error) {
      if (error instanceof ShutdownInterrupt) return "interrupted";
      if (error instanceof TurnCancelled) return "cancelled";
      throw error;
    }
  }

  private async runTurn(turn: {
    message: InboundMessage;
    conversation: string;
    target: ReplyTarget;
    replyKey: string;
    port: ReplyPort;
    rawPort: ReplyPort;
    say: (markdown: string) => Promise<void>;
    complete: () => void;
    signal: AbortSignal;
    text: string;
    images: Array<{ mime: string; data: string }>;
    options: IngestOptions;
  }): Promise<IngestOutcome> {
    const { deps } = this;
    const { message } = turn;
    if (!deps.agent.configured) {
      await turn.say("No model provider is configured yet — run `fermix setup` on the machine running Fermix.");
      return "failed";
    }
    const agent = deps.agent.current();
    if (!agent) {
      deps.telemetry.emit("dispatcher.agent_unavailable", { measurements: { count: 1 }, metadata: { channel: message.channel } });
      await turn.say("The assistant is restarting (restart in progress) — please send that again in a moment.");
      return "restarting";
    }

    const stream =
      turn.options.stream ??
      (message.channel === "cli" ? null : (deps.stream?.({ channel: message.channel, port: turn.port, conversation: turn.conversation }) ?? null));
    const stopTyping = this.keepTyping(turn.rawPort, turn.signal);
    let result: TurnResult;
    try {
      result = await agent.runTurn({
        conversation: turn.conversation,
        channel: message.channel,
        text: turn.text,
        images: turn.images,
        tools: this.toolsFor(turn.port),
        toolContext: {
          port: turn.port,
          channel: message.channel,
          target: turn.target,
          workspace: deps.workspace,
          idempotency: deps.idempotency,
          say: turn.say,
        },
        signal: turn.signal,
        ...(stream ? { onEvent: (event: ProviderEvent) => stream.push(event) } : {}),
      });
    } catch (error) {
      stopTyping();
      await stream?.stop();
      deps.log.error("the agent failed unexpectedly; restarting it", { error: error instanceof Error ? error.message : String(error) });
      deps.agent.restart("turn failed");
      await turn.say("Something went wrong on my side and the assistant is restarting — please try again in a moment.");
      return "failed";
    }
    stopTyping();

    switch (result.status) {
      case "cancelled":
        await stream?.stop();
        return turn.signal.reason instanceof ShutdownInterrupt ? "interrupted" : "cancelled";
      case "failed":
        await stream?.stop();
        await turn.say(`The model provider failed: ${result.error ?? "unknown error"}. Please try again.`);
        return "failed";
      case "empty":
        await stream?.stop();
        await turn.say("I got an empty answer from the model — please try again.");
        return "empty_completion";
    }

    const text = result.status === "step_limit" ? `${result.text}\n\n_(I stopped after too many tool steps.)_`.trim() : result.text;
    if (text === "") {
      // Only reactions or attachments: nothing more to say, nothing to write to history.
      await stream?.stop();
      return "reacted";
    }
    if (stream) {
      deps.db.transaction(() => {
        deps.conversations.append(turn.conversation, "assistant", text);
        turn.complete();
      })();
      await stream.finish(text);
    } else {
      const parts = deps.db.transaction(() => {
        deps.conversations.append(turn.conversation, "assistant", text);
        turn.complete();
        return deps.delivery.record(message.channel, turn.target, turn.replyKey, text);
      })();
      await deps.delivery.send(parts, turn.rawPort);
    }
    await this.compactIfDue(turn.conversation, turn.signal);
    return "answered";
  }

  private toolsFor(port: ReplyPort): Tool[] {
    const react = reactTool(port.capabilities.react);
    return react ? [react, sendAttachmentTool] : [sendAttachmentTool];
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

  private async compactIfDue(conversation: string, signal: AbortSignal): Promise<void> {
    const compactor = this.deps.compactor;
    if (!compactor || !compactor.due(conversation)) return;
    try {
      await compactor.compact(conversation, signal);
    } catch (error) {
      this.deps.log.warn("automatic compaction failed", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  private commandContext(
    message: InboundMessage,
    role: Role,
    args: string,
    conversation: string,
    say: (markdown: string) => Promise<void>,
    target: ReplyTarget,
    rawPort: ReplyPort,
  ): CommandContext {
    const { deps } = this;
    return {
      message,
      role,
      args,
      conversation,
      reply: say,
      background: deps.background,
      stopTurns: () => deps.queue.stop(conversation),
      newWindow: () => deps.conversations.newWindow(conversation),
      compact: async () => (deps.compactor ? deps.compactor.compact(conversation) : false),
      startBackground: (prompt) => startBackgroundTurn(deps, { message, conversation, target, rawPort, say, prompt }),
    };
  }
}
