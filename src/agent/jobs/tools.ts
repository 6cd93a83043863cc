/**
 * The job tools the model is offered: `schedule(when, request, target?)`,
 * `list_jobs()` and `cancel_job(id)`. A job belongs to whoever made it: the
 * owner sees and cancels the owner's jobs (from any channel), anyone else
 * only their own. Where a job delivers is decided by the composition root
 * (`resolveTarget`): the conversation it was made in, a chat named by
 * `target`, or `[fermix_core.jobs] default_target`.
 */
import { Type } from "@sinclair/typebox";
import type { Job, JobStore, JobTarget } from "../../store/jobs.ts";
import { defineTool, type Tool, type ToolContext, ToolError } from "../tools/types.ts";
import { ACCEPTED, formatLocal, fromNow, parseWhen, WhenError } from "./when.ts";

/** Jobs the owner may have waiting at once; anyone else may have a tenth of that. */
export const MAX_LIVE_JOBS = 100;
const MAX_LIVE_JOBS_OTHERS = 10;
const REQUEST_MAX_CHARS = 4000;

export interface JobToolsDeps {
  store: JobStore;
  /** The owner's time zone, for reading times without an offset and for showing them. */
  timezone: string;
  now: () => number;
  /** Where a job made in this turn delivers; throws ToolError when `spec` names somewhere it may not go. */
  resolveTarget(spec: string | undefined, ctx: ToolContext): JobTarget;
  /** A job was added or cancelled: the scheduler looks again. */
  changed(): void;
  /** Whether the scheduler runs in this process (`fermix run`); `fermix ask` without a daemon only stores the job. */
  schedulerRunning?: () => boolean;
}

/** Whether a job is `ctx`'s to see and cancel: the owner's jobs for the owner, one's own for anyone else. */
export function ownsJob(job: Job, who: Pick<ToolContext, "channel" | "senderId" | "role">): boolean {
  if (who.role === "operator") return job.origin.role === "operator";
  return job.origin.role === "user" && job.origin.channel === who.channel && job.origin.senderId === who.senderId;
}

/** Where a job's result goes, in words. */
export function describeTarget(target: JobTarget, from?: { channel: string; conversation: string }): string {
  const key = `${target.channel}:${target.chatId}:${target.threadId ?? ""}`;
  if (from && key === from.conversation) return "this conversation";
  return `${target.channel} chat ${target.chatId}${target.threadId ? ` (thread ${target.threadId})` : ""}`;
}

/** One job as the model (and /tasks) reads it. */
export function describeJob(job: Job, now: number): string {
  const when = `${formatLocal(job.dueAt, job.timezone)}, ${fromNow(job.dueAt, now)}`;
  const repeat = job.schedule ? `repeats \`${job.schedule}\`; next ` : "";
  const running = job.state === "running" ? " (running now)" : "";
  const request = job.request.length > 120 ? `${job.request.slice(0, 117)}…` : job.request;
  return `#${job.id}${running}: ${repeat}${when} → ${describeTarget(job.target)}: ${request}`;
}

/** schedule, list_jobs and cancel_job. Built per turn: the description carries the owner's time now. */
export function jobTools(deps: JobToolsDeps): Tool[] {
  const { store, timezone } = deps;
  const schedule = defineTool({
    name: "schedule",
    description:
      "Schedule a request for later: you will be given the request again when it falls due and your answer is sent to the user then " +
      "(reminders, check-ins, a daily summary). " +
      `when: ${ACCEPTED}. Times are in ${timezone}, where it is now ${formatLocal(deps.now(), timezone)}. ` +
      'request: what to do then, written as an instruction to yourself ("Remind the user to call Anna"). ' +
      'target (optional, owner only): another chat to deliver to, as "<channel>:<chat id>"; default: this conversation.',
    parameters: Type.Object(
      {
        when: Type.String(),
        request: Type.String(),
        target: Type.Optional(Type.String({ description: '"<channel>:<chat id>", e.g. "telegram:123456789"' })),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const request = args.request.trim();
      if (request === "") throw new ToolError("request is empty: say what to do when the job is due");
      if (request.length > REQUEST_MAX_CHARS) throw new ToolError(`request is ${request.length} characters; keep it under ${REQUEST_MAX_CHARS}`);
      const now = deps.now();
      let when: ReturnType<typeof parseWhen>;
      try {
        when = parseWhen(args.when.trim(), { now, timezone });
      } catch (error) {
        if (error instanceof WhenError) throw new ToolError(error.message);
        throw error;
      }
      const target = deps.resolveTarget(args.target?.trim() || undefined, ctx);
      const cap = ctx.role === "operator" ? MAX_LIVE_JOBS : MAX_LIVE_JOBS_OTHERS;
      if (store.live().filter((job) => ownsJob(job, ctx)).length >= cap) {
        throw new ToolError(`there are already ${cap} jobs waiting; cancel some first (list_jobs)`);
      }
      const job = store.create({
        request,
        schedule: when.kind === "repeat" ? when.schedule : null,
        timezone,
        dueAt: when.kind === "repeat" ? when.next : when.at,
        origin: { channel: ctx.channel, conversation: ctx.conversation, senderId: ctx.senderId, role: ctx.role },
        target,
      });
      deps.changed();
      const at = `${formatLocal(job.dueAt, timezone)}, ${fromNow(job.dueAt, now)}`;
      const where = describeTarget(target, ctx);
      const idle =
        deps.schedulerRunning?.() === false ? "; note: Fermix is not running as a daemon (`fermix run`) right now, so it runs when the daemon starts" : "";
      return job.schedule
        ? `scheduled repeating job #${job.id} (\`${job.schedule}\`); first run ${at}; results go to ${where}${idle}`
        : `scheduled job #${job.id} for ${at}; the result goes to ${where}${idle}`;
    },
  });

  const list = defineTool({
    name: "list_jobs",
    description: "List the scheduled jobs still to run, soonest first, with their ids, times and where their results go.",
    parameters: Type.Object({}, { additionalProperties: false }),
    async run(_args, ctx) {
      const jobs = store.live().filter((job) => ownsJob(job, ctx));
      if (jobs.length === 0) return "no scheduled jobs";
      const now = deps.now();
      return jobs.map((job) => describeJob(job, now)).join("\n");
    },
  });

  const cancel = defineTool({
    name: "cancel_job",
    description: "Cancel a scheduled job by its id (from list_jobs); a repeating job stops repeating.",
    parameters: Type.Object({ id: Type.Integer() }, { additionalProperties: false }),
    async run(args, ctx) {
      const { id } = args;
      const job = store.get(id);
      if (!job || !ownsJob(job, ctx) || (job.state !== "pending" && job.state !== "running")) {
        throw new ToolError(`there is no scheduled job #${id} of yours still to run; see list_jobs`);
      }
      store.cancel(id);
      deps.changed();
      return `cancelled job #${id}${job.state === "running" ? " (its current run finishes, but it will not run again)" : ""}`;
    },
  });

  return [schedule, list, cancel];
}
