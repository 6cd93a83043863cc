/**
 * The slash commands (README.md "Channels"; /help lists them) with
 * their role gates. Handlers only talk to the services they are given; the
 * gateway decides when each runs (`/stop` at once, ahead of the queue).
 */
import type { Compactor } from "../../agent/compaction.ts";
import { describeJob } from "../../agent/jobs/tools.ts";
import type { SkillLibrary } from "../../agent/skills/library.ts";
import type { Persona } from "../../agent/soul/persona.ts";
import type { UltraMode } from "../../agent/ultra/engine.ts";
import { sleep } from "../../kernel/wait.ts";
import type { InboundMessage, ReplyPort, ReplyTarget } from "../../message/index.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import type { Job } from "../../store/jobs.ts";
import type { BackgroundWork } from "../background.ts";
import type { Stopped } from "../queue.ts";
import type { SandboxControl } from "../sandbox-control.ts";
import type { Role, Standing } from "../trust.ts";
import { type DesktopControl, describeDesk, notOwner, PAUSE_COMMAND, RESUME_COMMAND } from "./desktop.ts";
import { SANDBOX_COMMAND } from "./sandbox.ts";
import { SKILLS_COMMAND } from "./skills.ts";
import { SOUL_COMMAND } from "./soul.ts";
import { ULTRA_COMMAND } from "./ultra.ts";

/** A command that cannot do what was asked, for a reason the user should read (not a fault): replied, not logged as an error. */
export class CommandRefused extends Error {
  override name = "CommandRefused";
}

/** What `/background` starts: a detached turn for this sender in this conversation. */
export interface BackgroundRequest {
  message: InboundMessage;
  /** Where the sender stands: what the role table offers the work. */
  standing: Standing;
  conversation: string;
  target: ReplyTarget;
  rawPort: ReplyPort;
  prompt: string;
}

/** What the commands work with, handed by the composition root (read when a command runs: a reload applies). */
export interface CommandServices {
  background: BackgroundWork;
  conversations: Pick<ConversationStore, "newWindow">;
  /** The compactor of the provider in force, or null. */
  compactor(): Compactor | null;
  /** Start `/background` work; throws CommandRefused at the cap or while the agent restarts. */
  startBackground(request: BackgroundRequest): number;
  /** SOUL.md and its revisions, for /soul. */
  persona?: Persona | null;
  /** Ultra mode, for /ultra; absent: /ultra is not available. */
  ultra?: UltraMode | null;
  /** The skills the assistant learns, for /skills. */
  skills?: SkillLibrary | null;
  /** The workspace sandbox's state and confirmation codes (/sandbox, /confirm). */
  sandbox?: SandboxControl | null;
  /** Scheduled jobs still to run that were made in, or deliver to, a conversation (/tasks, /stop). */
  upcomingJobs?(conversation: string): Job[];
  /** The owner's desktop (/pause, /resume, /stop, /tasks); absent: there is none. */
  desk?: DesktopControl | null;
  /** Where a screenshot sent as a photo is copied first (`<home>/spool`); absent: none is sent. */
  spoolDir?: string;
  /** The owner's live realtime voice session, if one is up (/tasks shows it; /stop leaves it alone). */
  liveVoice?(): LiveVoiceSession | null;
}

/** A realtime voice session as the commands tell of it: since when, and through which companion. */
export interface LiveVoiceSession {
  since: number;
  client: string;
}

export interface CommandContext {
  message: InboundMessage;
  role: Role;
  /** Where the sender stands: the owner, an operator, an allowed sender (the desktop's commands are the owner's alone). */
  standing: Standing;
  args: string;
  conversation: string;
  reply(markdown: string): Promise<void>;
  background: BackgroundWork;
  /** Cancel the running turn and drop queued ones in this conversation. */
  stopTurns(): Stopped;
  /** Stop this conversation's background work. */
  stopBackground(): { stopped: number; settled: Promise<void> };
  newWindow(): void;
  compact(): Promise<boolean>;
  /** Start `/background` work; throws BackgroundLimitReached at the cap. */
  startBackground(prompt: string): number;
  /** SOUL.md and its revisions (/soul); null where the gateway was built without them. */
  persona: Persona | null;
  /** Scheduled jobs still to run that were made in, or deliver to, this conversation, soonest first. */
  upcomingJobs(): Job[];
  /** The owner's live voice session (for an operator only), or null. */
  liveVoice?(): LiveVoiceSession | null;
  /** The name the command was sent under (an alias tells /sandbox what to do: /grant, /revoke, /confirm). */
  invokedAs?: string;
  /** The workspace sandbox (/sandbox); absent where the gateway was built without it. */
  sandbox?: SandboxControl | null;
  /** The conversation queue's signal, for a queued command: /stop aborts it. */
  signal?: AbortSignal;
  /** Run a request as a foreground turn of this conversation in ultra mode (queued commands only). */
  ultraTurn?(prompt: string): Promise<void>;
  /** The skills the assistant learns (/skills); null where the gateway was built without them. */
  skills?: SkillLibrary | null;
  /** The owner's desktop; null where there is none. */
  desk?: DesktopControl | null;
  /** Send a screenshot as a photo in this conversation, where the channel takes files. */
  sendScreenshot(png: Uint8Array, caption: string): Promise<void>;
}

export interface CommandSpec {
  name: string;
  aliases: readonly string[];
  usage: string;
  summary: string;
  operator: boolean;
  /** Runs at once instead of waiting its turn in the conversation's queue. */
  immediate: boolean;
  run(ctx: CommandContext): Promise<void>;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** How long /stop waits for the stopped work to wind down before it answers anyway. */
const STOP_GRACE_MS = 5000;

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "help",
    aliases: [],
    usage: "/help",
    summary: "list the commands",
    operator: false,
    immediate: true,
    async run(ctx) {
      const lines = COMMANDS.filter((c) => !c.operator || ctx.role === "operator").map(
        (c) => `- \`${c.usage}\`${c.aliases.length ? ` (also ${c.aliases.map((a) => `/${a}`).join(", ")})` : ""} — ${c.summary}`,
      );
      await ctx.reply(`**Commands**\n\n${lines.join("\n")}\n\nAnything else you write goes to the assistant.`);
    },
  },
  {
    name: "whoami",
    aliases: [],
    usage: "/whoami",
    summary: "show your id on this channel, as used for authorization",
    operator: false,
    immediate: true,
    async run(ctx) {
      await ctx.reply(
        `Your id on ${ctx.message.channel} is \`${ctx.message.senderId}\` (${ctx.role === "operator" ? "owner: operator commands allowed" : "allowed user"}).`,
      );
    },
  },
  {
    name: "new",
    aliases: ["clear"],
    usage: "/new",
    summary: "start a fresh conversation window (long-term memory is kept)",
    operator: true,
    immediate: false,
    async run(ctx) {
      ctx.newWindow();
      await ctx.reply("Started a new conversation. Earlier messages are no longer in my context.");
    },
  },
  {
    name: "compact",
    aliases: [],
    usage: "/compact",
    summary: "summarise the conversation so far and keep the summary",
    operator: true,
    immediate: false,
    async run(ctx) {
      await ctx.reply((await ctx.compact()) ? "Compacted: older messages are now a summary." : "Nothing to compact yet.");
    },
  },
  {
    name: "background",
    aliases: ["bg"],
    usage: "/background <request>",
    summary: "run a request as background work; the result is posted here when done (at most 8 at once)",
    operator: true,
    immediate: true,
    async run(ctx) {
      if (ctx.args === "") {
        await ctx.reply("Usage: `/background <request>`");
        return;
      }
      const id = ctx.startBackground(ctx.args);
      await ctx.reply(`Started background task #${id}. I'll post the result here when it is done.`);
    },
  },
  {
    name: "tasks",
    aliases: [],
    usage: "/tasks",
    summary: "list running and recent background work and upcoming scheduled jobs of this conversation",
    operator: true,
    immediate: true,
    async run(ctx) {
      const tasks = ctx.background.list(ctx.conversation);
      const jobs = ctx.upcomingJobs();
      const sections: string[] = [];
      // The desktop is the owner's: only they see it listed, with a screenshot of where it stands.
      const desktop = ctx.standing === "owner" ? (ctx.desk?.status() ?? null) : null;
      if (desktop) sections.push(`**Desktop**\n\n${describeDesk(desktop, Date.now())}`);
      if (tasks.length > 0) {
        const lines = tasks.map((t) => `- #${t.id} ${t.state}: ${t.prompt.length > 60 ? `${t.prompt.slice(0, 57)}…` : t.prompt}`);
        sections.push(`**Background tasks** (${ctx.background.active} of ${ctx.background.limit} slots in use)\n\n${lines.join("\n")}`);
      }
      if (jobs.length > 0) {
        const now = Date.now();
        sections.push(`**Scheduled jobs**\n\n${jobs.map((job) => `- ${describeJob(job, now)}`).join("\n")}`);
      }
      const voice = ctx.liveVoice?.();
      if (voice) sections.push(voiceLine(voice));
      await ctx.reply(sections.length > 0 ? sections.join("\n\n") : "No background tasks and no scheduled jobs in this conversation.");
      const png = desktop ? await ctx.desk!.screenshot() : null;
      if (png) await ctx.sendScreenshot(png, "🖥️ The desktop now.");
    },
  },
  {
    name: "stop",
    aliases: [],
    usage: "/stop",
    summary: "stop everything now: the running reply, queued messages, background work and the desktop session",
    operator: true,
    immediate: true,
    async run(ctx) {
      // Synchronous, before any await: whatever arrives after /stop is queued after the stop, not stopped by it.
      const turns = ctx.stopTurns();
      const work = ctx.stopBackground();
      const { cancelled, dropped } = turns;
      const background = work.stopped;
      // The owner's desktop goes with it: its display and every program on it (another's /stop leaves it be).
      const desktop = notOwner(ctx, "stop") === null && ctx.desk ? ctx.desk.stop() : Promise.resolve(false);
      // "Stopped" is the last word: the stopped reply winds down first (its live card deleted, its
      // unsent parts cancelled), so nothing of it can arrive after this reply.
      await Promise.race([Promise.all([turns.settled, work.settled]), sleep(STOP_GRACE_MS)]);
      const closed = await desktop;
      const parts = [
        cancelled ? plural(cancelled, "running reply") : "",
        dropped ? plural(dropped, "queued message") : "",
        background ? plural(background, "background task") : "",
        closed ? "the desktop session" : "",
      ].filter(Boolean);
      const jobs = ctx.upcomingJobs().length;
      const kept = jobs > 0 ? ` Scheduled jobs are kept (${plural(jobs, "job")} still to run: /tasks lists them).` : "";
      // A voice session is the owner talking live elsewhere: it ends from its companion, never from a chat.
      const voice = ctx.liveVoice?.() ? " The live voice session goes on (end it from its companion)." : "";
      await ctx.reply((parts.length ? `Stopped ${parts.join(", ")}.` : "Nothing was running.") + kept + voice);
    },
  },
  SOUL_COMMAND,
  SANDBOX_COMMAND,
  ULTRA_COMMAND,
  SKILLS_COMMAND,
  PAUSE_COMMAND,
  RESUME_COMMAND,
];

/** A live voice session in /tasks: when it began, through what, and that /stop leaves it be. */
function voiceLine(voice: LiveVoiceSession): string {
  const minutes = Math.max(0, Math.round((Date.now() - voice.since) / 60_000));
  return `**Voice session**\n\n- live for ${minutes < 1 ? "less than a minute" : plural(minutes, "minute")}, through ${voice.client} (/stop leaves it running; end it from its companion)`;
}

/** The command for a name or alias. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name || c.aliases.includes(name));
}
