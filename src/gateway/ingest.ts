/**
 * `ingest`: the single inbound entry point. Every message, whatever its
 * channel, goes through the seven steps of docs/architecture.md ("The
 * gateway pipeline") in order: convert (done by the adapter), authorize,
 * media, reply port, commands, queue, and the one turn engine.
 */
import { sendScreenshot as sendDesktopScreenshot } from "../agent/computer/tool.ts";
import type { TranscriptionEngine } from "../agent/transcription/index.ts";
import type { Config } from "../config/schema.ts";
import { describeError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { conversationKey, type InboundMessage, type ReplyButton, type ReplyPort, type ReplyTarget } from "../message/index.ts";
import type { Inbox } from "../store/inbox.ts";
import type { ChannelLookup } from "./channel-facts.ts";
import { type CommandContext, CommandRefused, type CommandServices, findCommand } from "./commands/index.ts";
import { parseCommand } from "./commands/parse.ts";
import type { Delivery } from "./delivery.ts";
import type { ChannelAccess, TurnStream } from "./deps.ts";
import { isEmptyMessage, prepareMedia } from "./media.ts";
import { type ConversationQueue, ShutdownInterrupt, TurnCancelled } from "./queue.ts";
import type { StrangerTally } from "./strangers.ts";
import { type Role, roleOf, type Standing, standingFor } from "./trust.ts";
import type { TurnEngine, TurnFault, TurnOutcome, TurnSpec } from "./turn/engine.ts";
import { runUltraTurn } from "./ultra.ts";

export type { AgentHandle, ChannelAccess, StreamRequest, TurnStream } from "./deps.ts";
export type { TurnFault } from "./turn/engine.ts";

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

/** What the media step reads, from the provider and config in force. */
export interface MediaFacts {
  /** The primary model accepts images. */
  vision: boolean;
  model: string;
  transcription: TranscriptionEngine;
}

/** What intake needs: small, and reading the config and provider in force on every message. */
export interface IntakeServices {
  /** The config in force: who may talk, and who is the owner. */
  config(): Config;
  channel(name: InboundMessage["channel"]): ChannelAccess | undefined;
  /** What each channel is (its profile): who is authorized on it, whether it has commands, how it shows a turn. */
  profiles: ChannelLookup;
  delivery: Pick<Delivery, "durablePort" | "say">;
  inbox: Pick<Inbox, "complete" | "completeSoon">;
  queue: ConversationQueue;
  /** The provider's vision and model, and the transcription backend, in force. */
  media(): MediaFacts;
  engine: TurnEngine;
  /** What the commands work with. */
  commands: CommandServices;
  /** Called as each message arrives (the daemon's memory settler). */
  onActivity?: () => void;
  /** Called with each message dropped because its sender is not authorized (setup's owner pairing listens). */
  onUnknownSender?: (message: InboundMessage) => void;
  /** Where dropped messages are counted for the log (a line a minute, not one per message). */
  strangers: StrangerTally;
  telemetry: Telemetry;
  log: Logger;
}

export class Gateway {
  constructor(private readonly services: IntakeServices) {}

  /**
   * Step 2, by the config in force: the sender's standing, or null for a stranger, who is counted
   * (src/gateway/strangers.ts) and told to the pairing hook. The dispatcher asks it before anything
   * is recorded; the pipeline asks it again for what reaches it otherwise (a replay, the CLI).
   */
  authorize(message: InboundMessage): Standing | null {
    const { services } = this;
    const standing = standingFor(services.config(), services.profiles(message.channel), message.senderId, message.senderAliases);
    if (standing === null) {
      services.strangers.drop(message.channel, message.senderId);
      services.onUnknownSender?.(message);
    }
    return standing;
  }

  /**
   * The single inbound entry point; resolves when the message's turn (or
   * short circuit) is done. Everything up to the conversation queue runs
   * synchronously, before the first await: the message has its place in line
   * the moment `ingest` is called, so a caller hands messages on in order
   * without ever waiting for a turn (and a /stop is never stuck behind one).
   */
  async ingest(message: InboundMessage, options: IngestOptions = {}): Promise<IngestOutcome> {
    this.services.onActivity?.();
    const inboxIds = options.inboxIds ?? [];
    let done = false;
    // Inside a turn's commit transaction: the entry is done together with the answer.
    const complete = () => {
      if (done) return;
      done = true;
      if (inboxIds.length > 0) this.services.inbox.complete(inboxIds);
    };
    let outcome: IngestOutcome | undefined;
    try {
      outcome = await this.pipeline(message, options, complete);
      return outcome;
    } finally {
      if (!done && outcome !== "interrupted" && inboxIds.length > 0) {
        done = true;
        this.services.inbox.completeSoon(inboxIds);
      }
    }
  }

  private async pipeline(message: InboundMessage, options: IngestOptions, complete: () => void): Promise<IngestOutcome> {
    const { services } = this;
    const log = services.log.child({ channel: message.channel });
    const profile = services.profiles(message.channel);
    // Step 2: authorize. A denied sender gets nothing, and nothing is downloaded.
    const standing = this.authorize(message);
    if (standing === null) return "dropped";
    const role = roleOf(standing);
    services.telemetry.emit("channel.message", { measurements: { count: 1 }, metadata: { channel: message.channel, direction: "inbound" } });

    const access = services.channel(message.channel);
    const target: ReplyTarget = { chatId: message.chatId, replyTo: message.messageId };
    if (message.threadId !== undefined) target.threadId = message.threadId;
    const replyKey = `${message.channel}:${message.chatId}:${message.messageId}`;
    const rawPort = options.port ?? access?.port(target);
    if (!rawPort) {
      log.error("no reply port for channel; message not processed", { message: message.messageId });
      return "failed";
    }
    // Step 4 comes early for the short circuits: they too reply through the outbox.
    const port = services.delivery.durablePort(message.channel, target, replyKey, rawPort);
    let notices = 0;
    const say = async (markdown: string, buttons?: ReplyButton[]) => {
      await services.delivery.say(message.channel, target, `${replyKey}:n${notices++}`, markdown, rawPort, buttons);
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
        ...services.media(),
        inboundCap: access?.inboundMediaCap ?? Number.POSITIVE_INFINITY,
        fetch: (m, fetchSignal, maxBytes) => {
          if (!access) throw new Error(`${message.channel} cannot download attachments`);
          return access.fetchMedia(m, fetchSignal, maxBytes);
        },
        telemetry: services.telemetry,
        log,
        signal,
      });

    const conversation = conversationKey(message);
    /** The turn of this message, as the engine runs it, bar what each kind of turn adds. */
    const turn = (signal: AbortSignal, text: string, images: TurnSpec["images"]): TurnSpec => ({
      kind: "conversation",
      asker: { ...message, standing },
      role,
      conversation,
      target,
      replyKey,
      rawPort,
      port,
      say,
      complete,
      signal,
      text,
      images,
      ...(options.stream ? { stream: options.stream } : {}),
      ...(options.replay ? { replay: true } : {}),
      ...(options.onFault ? { onFault: options.onFault } : {}),
    });

    // Step 5: commands. An unknown /word is ordinary text for the agent; a channel without commands (an editor) has none.
    const parsed = profile.commands ? parseCommand(message.text) : null;
    const command = parsed ? findCommand(parsed.name) : undefined;
    if (parsed && command) {
      services.telemetry.emit("command.received", { measurements: { count: 1 }, metadata: { channel: message.channel, command: command.name } });
      if (command.operator && role !== "operator") {
        services.telemetry.emit("command.unauthorized", {
          measurements: { count: 1 },
          metadata: { channel: message.channel, command: command.name, sender_id: message.senderId },
        });
        await say(`/${command.name} needs the owner of this assistant (operator). Send /whoami to see your id.`);
        return "unauthorized_command";
      }
      const context = { ...this.commandContext(message, role, standing, parsed.args, conversation, say, target, rawPort), invokedAs: parsed.name };
      // A queued command gets its lane's signal (/stop aborts it) and can run a foreground turn under it (/ultra).
      let turnOutcome: TurnOutcome | undefined;
      const ultraTurn = (signal: AbortSignal) => async (prompt: string) => {
        const ultra = services.commands.ultra;
        if (!ultra) throw new CommandRefused("Ultra mode is not available here.");
        // Photos and voice notes sent with /ultra go to it like to any turn: images seen, audio transcribed.
        let text = prompt;
        let images: TurnSpec["images"] = [];
        if (message.media.length > 0) {
          const media = await prepare(signal, prompt);
          if (signal.aborted) return;
          if (media.kind === "refused") {
            await say(media.reply);
            return;
          }
          ({ text, images } = media);
        }
        turnOutcome = await runUltraTurn(services.engine, ultra, turn(signal, text, images), log, profile.streaming !== null);
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
            log.error("command failed", { command: command.name, error: describeError(error) });
            await reply(`/${command.name} failed: ${error instanceof Error ? error.message : "unexpected error"}`);
          }
        }
        services.telemetry.emit("command.dispatch", {
          measurements: { duration_ms: performance.now() - started },
          metadata: { channel: message.channel, command: command.name, ok },
        });
      };
      if (command.immediate) await run();
      else
        await services.queue
          .enqueue(conversation, (signal) => run(signal))
          .catch((error) => (error instanceof TurnCancelled ? undefined : Promise.reject(error)));
      // An ultra turn cut short by a shutdown stays in the inbox, to run again at the next start like any turn.
      return turnOutcome === "interrupted" ? "interrupted" : "command";
    }

    // Steps 6 and 7: queue the turn, then hand it to the MainAgent.
    try {
      return await services.queue.enqueue(conversation, async (signal): Promise<IngestOutcome> => {
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
        return services.engine.run(turn(signal, media.text, media.images));
      });
    } catch (error) {
      if (error instanceof ShutdownInterrupt) return "interrupted";
      if (error instanceof TurnCancelled) return "cancelled";
      throw error;
    }
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
    const { commands, queue, delivery } = this.services;
    let shots = 0;
    return {
      message,
      role,
      args,
      conversation,
      reply: say,
      background: commands.background,
      stopTurns: () => queue.stop(conversation),
      stopBackground: () => commands.background.stop(conversation),
      newWindow: () => commands.conversations.newWindow(conversation),
      compact: async () => commands.compactor()?.compact(conversation) ?? false,
      startBackground: (prompt) => commands.startBackground({ message, standing, conversation, target, rawPort, prompt }),
      persona: commands.persona ?? null,
      upcomingJobs: () => commands.upcomingJobs?.(conversation) ?? [],
      liveVoice: () => (role === "operator" ? (commands.liveVoice?.() ?? null) : null),
      skills: commands.skills ?? null,
      sandbox: commands.sandbox ?? null,
      desk: commands.desk ?? null,
      standing,
      // A photo through the outbox, under the command message's key like its replies.
      sendScreenshot: async (png, caption) => {
        if (!commands.spoolDir) return;
        const port = delivery.durablePort(message.channel, target, `${message.channel}:${message.chatId}:${message.messageId}:shot${shots++}`, rawPort);
        await sendDesktopScreenshot(port, commands.spoolDir, png, caption);
      },
    };
  }
}
