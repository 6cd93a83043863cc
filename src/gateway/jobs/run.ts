/**
 * One run of a scheduled job: a detached turn of the one engine (kind
 * `scheduled`: it reads the target conversation's history but does not write
 * the request into it; `/stop` does not reach it), whose answer is delivered
 * through the outbox under the key `job:<id>:<due time>`. A run that finds
 * its key already recorded (it was delivered, or recorded for sending, before
 * a crash) is not run again: the outbox finishes what is left of it, and the
 * user gets it once.
 */
import { formatLocal } from "../../agent/jobs/when.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../kernel/log.ts";
import type { GatewayChannel, ReplyTarget } from "../../message/index.ts";
import type { Job } from "../../store/jobs.ts";
import type { Outbox } from "../../store/outbox.ts";
import type { ChannelLookup } from "../channel-facts.ts";
import type { ChannelAccess } from "../deps.ts";
import { roleOf, standingFor } from "../trust.ts";
import type { TurnEngine, TurnOutcome } from "../turn/engine.ts";
import { type JobRun, type RunOutcome, targetConversation } from "./scheduler.ts";

export interface JobRunnerDeps {
  engine: TurnEngine;
  channel(name: GatewayChannel): ChannelAccess | undefined;
  /** What each channel is: who is authorized on it, and whether a chat is a direct one. */
  profiles: ChannelLookup;
  /** The config in force: whoever made a job is judged by it when it runs. */
  config(): Config;
  /** To see whether a run's delivery was recorded before a crash. */
  outbox: Pick<Outbox, "parts">;
  log: Logger;
  now?: () => number;
}

/** What a run came to, from what its turn came to. */
const RUN_OUTCOMES: Readonly<Record<TurnOutcome, RunOutcome>> = {
  answered: "ok",
  reacted: "ok",
  empty_completion: "empty",
  failed: "failed",
  restarting: "failed",
  cancelled: "stopped",
  interrupted: "stopped",
};

/** The outbox key of one run's result: one per (job, due time). */
export const runKey = (jobId: number, dueAt: number) => `job:${jobId}:${dueAt}`;

/** The line that opens a delivered result: which job, and whether it is late. */
export function runHeading(job: Job, dueAt: number, late: boolean): string {
  return late
    ? `⏰ _Scheduled job #${job.id} — late: it was due ${formatLocal(dueAt, job.timezone)}, while Fermix was not running._`
    : `⏰ _Scheduled job #${job.id}_`;
}

/** What the model is given when a job falls due. */
export function runPrompt(job: Job, dueAt: number, late: boolean, now: number): string {
  const facts = [
    `Scheduled job #${job.id}, made ${formatLocal(job.createdAt, job.timezone)}`,
    `due ${formatLocal(dueAt, job.timezone)}`,
    ...(late ? [`it runs late (now ${formatLocal(now, job.timezone)}) because Fermix was not running when it was due; say so if it matters`] : []),
    ...(job.schedule ? [`it repeats on the schedule \`${job.schedule}\``] : []),
  ];
  return `[${facts.join("; ")}. Carry out the request below now; your answer is sent to the user as a message of its own.]\n\n${job.request}`;
}

/** The runner the scheduler calls for each claimed run. */
export function jobRunner(deps: JobRunnerDeps): (run: JobRun) => Promise<RunOutcome> {
  const now = deps.now ?? Date.now;
  const log = deps.log.child({ component: "jobs" });

  return async ({ job, dueAt, late, signal }) => {
    const key = runKey(job.id, dueAt);
    if (deps.outbox.parts(key).length > 0) {
      log.info("scheduled run was delivered before a restart; not run again", { job: job.id, due: new Date(dueAt).toISOString() });
      return "ok";
    }
    const channel = job.target.channel;
    const access = deps.channel(channel);
    if (!access) {
      log.error("scheduled job not run: its target channel is not running", { job: job.id, channel });
      return "failed";
    }
    // Whoever made the job is judged by the config in force now: a former owner's job runs with no more than they have now.
    const standing = standingFor(deps.config(), deps.profiles(job.origin.channel), job.origin.senderId);
    if (standing === null) {
      log.warn("scheduled job not run: whoever made it may no longer use the assistant", { job: job.id, channel: job.origin.channel });
      return "failed";
    }
    const target: ReplyTarget = { chatId: job.target.chatId };
    if (job.target.threadId !== undefined) target.threadId = job.target.threadId;
    const heading = runHeading(job, dueAt, late);
    const outcome = await deps.engine.run({
      kind: "scheduled",
      asker: {
        channel,
        chatId: job.target.chatId,
        senderId: job.origin.senderId,
        standing,
        direct: deps.profiles(channel).isDirect({ chatId: job.target.chatId, senderId: job.origin.senderId }),
      },
      role: roleOf(standing),
      conversation: targetConversation(job),
      target,
      replyKey: key,
      rawPort: access.port(target),
      text: runPrompt(job, dueAt, late, now()),
      images: [],
      signal,
      frame: {
        answer: (text) => `${heading}\n\n${text}`,
        failure: (why) => `${heading}\n\n_It could not run._ ${why}`,
        historyTag: `[scheduled job #${job.id}]`,
      },
    });
    return RUN_OUTCOMES[outcome];
  };
}
