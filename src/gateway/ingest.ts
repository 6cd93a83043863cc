/**
 * `ingest`: the single inbound entry point. Every message, whatever its
 * channel, goes through the seven steps of DESIGN.md in order: convert
 * (done by the adapter), authorize, media, reply port, commands, queue,
 * deliver to the MainAgent.
 */
import { startBackgroundTurn } from "./background-turn.ts";
import type { GatewayDeps, TurnStream } from "./deps.ts";
import { type CommandContext, CommandRefused, findCommand } from "./commands/index.ts";
import { parseCommand } from "./commands/parse.ts";
import { isEmptyMessage, prepareMedia } from "./media.ts";
import { conversationKey, type InboundMessage, type ReplyButton, type ReplyPort, type ReplyTarget } from "../message/index.ts";
import { ShutdownInterrupt, TurnCancelled } from "./queue.ts";
import { type Role, roleOf, type Standing, standingFor } from "./trust.ts";
import { type TurnFault, type TurnInput, type TurnOutcome, TurnRunner } from "./turn.ts";
import { runUltraTurn } from "./ultra.ts";

export type { AgentHandle, ChannelAccess, GatewayDeps, StreamRequest, TurnStream } from "./deps.ts";
export type { TurnFault } from "./turn.ts";

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
  /** The message is replayed from the inbox after a restart: its turn squares its answer with what was delivered. */
  replay?: boolean;
  /** Told when the turn ends in a fault the user is told about (its class and the message): ACP answers the prompt with an error. */
  onFault?: (fault: TurnFault) => void;
}

export class Gateway {
  private readonly turns: TurnRunner;

  constructor(private readonly deps: GatewayDeps) {
    this.turns = new TurnRunner(deps);
  }

  /**
   * The single inbound entry point; resolves when the message's turn (or
   * short circuit) is done. Everything up to the conversation queue runs
   * synchronously, before the first await: the message has its place in line
   * the moment `ingest` is called, so a caller hands messages on in order
   * without ever waiting for a turn (and a /stop is never stuck behind one).
   */
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
    const standing = standingFor(deps.config, deps.profiles(message.channel), message.senderId, message.senderAliases);
    if (standing === null) {
      log.info("message from an unauthorized sender dropped", { sender: message.senderId });
      deps.onUnknownSender?.(message);
      return "dropped";
    }
    const role = roleOf(standing);
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
    const say = async (markdown: string, buttons?: ReplyButton[]) => {
      await deps.delivery.say(message.channel, target, `${replyKey}:n${notices++}`, markdown, rawPort, buttons);
    };

    if (isEmptyMessage(message)) {
      await say("That message looks empty — send me some text, a photo or a voice note.");
      return "empty";
    }

    // Step 3: media (after authorization, so nothing is fetched for a denied sender; also for /ultra's attachments). It runs inside
    // the conversation's queue slot, taken synchronously on arrival: a slow download must not let a
    // later message of the same conversation overtake this one, nor let a /stop sent after it miss it.
    const prepare = (signal: AbortSignal, text = message.text) =>
      prepareMedia(text === message.text ? message : { ...message, text }, {
        channel: message.channel,
        vision: deps.vision,
        model: deps.model,
        inboundCap: access?.inboundMediaCap ?? Number.POSITIVE_INFINITY,
        fetch: (m, fetchSignal, maxBytes) => {
          if (!access) throw new Error(`${message.channel} cannot download attachments`);
          return access.fetchMedia(m, fetchSignal, maxBytes);
        },
        transcription: deps.transcription,
        telemetry: deps.telemetry,
        log,
        signal,
      });

    const conversation = conversationKey(message);
    // Step 5: commands. An unknown /word is ordinary text for the agent; a channel without commands (an editor) has none.
    const parsed = deps.profiles(message.channel).commands ? parseCommand(message.text) : null;
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
      const context = { ...this.commandContext(message, role, standing, parsed.args, conversation, say, target, rawPort), invokedAs: parsed.name, sandbox: deps.sandbox ?? null };
      // A queued command gets its lane's signal (/stop aborts it) and can run a foreground turn under it (/ultra).
      const turn = { message, role, standing, conversation, target, replyKey, port, rawPort, say, complete, ...(options.replay ? { replay: true } : {}) };
      let turnOutcome: TurnOutcome | undefined;
      const ultraTurn = (signal: AbortSignal) => async (prompt: string) => {
        // Photos and voice notes sent with /ultra go to it like to any turn: images seen, audio transcribed.
        let text = prompt;
        let images: Array<{ mime: string; data: string }> = [];
        if (message.media.length > 0) {
          const media = await prepare(signal, prompt);
          if (signal.aborted) return;
          if (media.kind === "refused") {
            await say(media.reply);
            return;
          }
          ({ text, images } = media);
        }
        turnOutcome = await this.ultraTurn(turn, text, images, signal);
      };
      const run = async (signal?: AbortSignal) => {
        const started = performance.now();
        let ok = true;
        // A stopped command says nothing more, whatever it was doing: /stop has answered for it.
        const reply = async (markdown: string) => {
          if (signal?.aborted) log.info("reply of a stopped command dropped", { command: command.name });
          else await say(markdown);
        };
        try {
          await command.run(signal ? { ...context, reply, signal, ultraTurn: ultraTurn(signal) } : context);
        } catch (error) {
          ok = false;
          if (error instanceof CommandRefused) await reply(error.message);
          else if (signal?.aborted) log.info("command stopped", { command: command.name });
          else {
            log.error("command failed", { command: command.name, error: error instanceof Error ? error.message : String(error) });
            await reply(`/${command.name} failed: ${error instanceof Error ? error.message : "unexpected error"}`);
          }
        }
        deps.telemetry.emit("command.dispatch", {
          measurements: { duration_ms: performance.now() - started },
          metadata: { channel: message.channel, command: command.name, ok },
        });
      };
      if (command.immediate) await run();
      else await deps.queue.enqueue(conversation, (signal) => run(signal)).catch((error) => (error instanceof TurnCancelled ? undefined : Promise.reject(error)));
      // An ultra turn cut short by a shutdown stays in the inbox, to run again at the next start like any turn.
      return turnOutcome === "interrupted" ? "interrupted" : "command";
    }

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
        return this.turns.run({
          message,
          role,
          standing,
          conversation,
          target,
          replyKey,
          port,
          rawPort,
          say,
          complete,
          signal,
          text: media.text,
          images: media.images,
          ...(options.stream ? { stream: options.stream } : {}),
          ...(options.replay ? { replay: true } : {}),
          ...(options.onFault ? { onFault: options.onFault } : {}),
        });
      });
    } catch (error) {
      if (error instanceof ShutdownInterrupt) return "interrupted";
      if (error instanceof TurnCancelled) return "cancelled";
      throw error;
    }
  }

  /** `/ultra`: the prompt as a foreground turn in ultra mode, under the queued command's signal. */
  private async ultraTurn(
    turn: Omit<TurnInput, "signal" | "text" | "images">,
    prompt: string,
    images: Array<{ mime: string; data: string }>,
    signal: AbortSignal,
  ): Promise<TurnOutcome> {
    const ultra = this.deps.ultra;
    if (!ultra) throw new CommandRefused("Ultra mode is not available here.");
    return runUltraTurn(this.turns, ultra, { ...turn, signal, text: prompt, images }, this.deps.log.child({ channel: turn.message.channel }), this.deps.profiles(turn.message.channel).streaming !== null);
  }

  private commandContext(
    message: InboundMessage,
    role: Role,
    standing: Standing,
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
      stopBackground: () => deps.background.stop(conversation),
      newWindow: () => deps.conversations.newWindow(conversation),
      compact: async () => (deps.compactor ? deps.compactor.compact(conversation) : false),
      startBackground: (prompt) => startBackgroundTurn(deps, { message, standing, conversation, target, rawPort, say, prompt }),
      persona: deps.persona ?? null,
      upcomingJobs: () => deps.upcomingJobs?.(conversation) ?? [],
      skills: deps.skills ?? null,
    };
  }
}
