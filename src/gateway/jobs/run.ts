/**
 * One run of a scheduled job: a detached turn of the MainAgent (it reads the
 * target conversation's history but does not write the request into it),
 * whose answer is delivered through the outbox under the key
 * `job:<id>:<due time>`. A run that finds its key already recorded (it was
 * delivered, or recorded for sending, before a crash) is not run again: the
 * outbox finishes what is left of it, and the user gets it once.
 */
import { formatLocal } from "../../agent/jobs/when.ts";
import type { MainAgent } from "../../agent/agent.ts";
import { type Sleep, sleep as realSleep } from "../../kernel/wait.ts";
import type { ReplyTarget } from "../../message/index.ts";
import type { Job } from "../../store/jobs.ts";
import type { Outbox } from "../../store/outbox.ts";
import type { AgentHandle, GatewayDeps } from "../deps.ts";
import { faultMessage } from "../faults.ts";
import { type Asker, audienceFor, senderOf, toolsForTurn } from "../tools.ts";
import { roleOf, standingFor } from "../trust.ts";
import { type JobRun, type RunOutcome, targetConversation } from "./scheduler.ts";

export interface JobRunnerDeps {
  gateway: GatewayDeps;
  /** To see whether a run's delivery was recorded before a crash. */
  outbox: Outbox;
  sleep?: Sleep;
  now?: () => number;
}

/** How often a run due while the agent restarts looks again (ms). */
const AGENT_POLL_MS = 500;

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
  const g = deps.gateway;
  const sleep = deps.sleep ?? realSleep;
  const now = deps.now ?? Date.now;
  const log = g.log.child({ component: "jobs" });

  return async ({ job, dueAt, late, signal }) => {
    const key = runKey(job.id, dueAt);
    if (deps.outbox.parts(key).length > 0) {
      log.info("scheduled run was delivered before a restart; not run again", { job: job.id, due: new Date(dueAt).toISOString() });
      return "ok";
    }
    const channel = job.target.channel;
    const access = g.channel(channel);
    if (!access) {
      log.error("scheduled job not run: its target channel is not running", { job: job.id, channel });
      return "failed";
    }
    const target: ReplyTarget = { chatId: job.target.chatId };
    if (job.target.threadId !== undefined) target.threadId = job.target.threadId;
    const rawPort = access.port(target);
    const heading = runHeading(job, dueAt, late);
    const deliver = (body: string) => g.delivery.say(channel, target, key, `${heading}\n\n${body}`, rawPort);

    if (!g.agent.configured) {
      await deliver("_It could not run: no model provider is configured (run `fermix setup`)._");
      return "failed";
    }
    const agent = await liveAgent(g.agent, signal, sleep);
    if (!agent) return "stopped";

    // Whoever made the job is judged by the config in force now: a former owner's job runs with no more than they have now.
    const standing = standingFor(g.config, g.profiles(job.origin.channel), job.origin.senderId);
    if (standing === null) {
      log.warn("scheduled job not run: whoever made it may no longer use the assistant", { job: job.id, channel: job.origin.channel });
      return "failed";
    }
    const conversation = targetConversation(job);
    const asker: Asker = { channel, chatId: job.target.chatId, senderId: job.origin.senderId, standing, direct: g.profiles(channel).isDirect({ chatId: job.target.chatId, senderId: job.origin.senderId }) };
    const audience = audienceFor(asker, "scheduled", (c, chatId) => g.sandbox?.store.sharedToolsOn(c, chatId) ?? false);
    const role = roleOf(standing);
    const scope = { channel, conversation, senderId: job.origin.senderId, role, audience };
    let notices = 0;
    const result = await agent.runTurn({
      conversation,
      channel,
      text: runPrompt(job, dueAt, late, now()),
      images: [],
      sender: senderOf(asker, audience),
      shared: !audience.direct,
      tools: toolsForTurn(scope, g),
      toolContext: {
        port: g.delivery.durablePort(channel, target, `${key}:media`, rawPort),
        channel,
        conversation,
        senderId: job.origin.senderId,
        role,
        target,
        workspace: g.workspace,
        idempotency: g.idempotency,
        say: async (markdown) => {
          await g.delivery.say(channel, target, `${key}:n${notices++}`, markdown, rawPort);
        },
      },
      signal,
      detached: true,
    });

    switch (result.status) {
      case "cancelled":
        return "stopped";
      case "failed":
        g.agent.noteOutcome?.(false, result.failure);
        log.error("scheduled job failed: the model request failed", { job: job.id, fault: result.failure?.fault ?? "server", reason: result.error ?? "unknown" });
        await deliver(`_It could not run._ ${faultMessage(result.failure?.fault, false)}`);
        return "failed";
      case "empty":
        g.agent.noteOutcome?.(true);
        await deliver("_The model gave an empty answer._");
        return "empty";
    }
    g.agent.noteOutcome?.(true);
    const text = result.status === "step_limit" ? `${result.text}\n\n_(I stopped after too many tool steps.)_`.trim() : result.text;
    if (text === "") return "ok"; // it only sent attachments: they were delivered as it went
    // The answer joins the conversation and is recorded for delivery together: a crash after this
    // finds the key recorded and does not run the job again.
    const parts = g.db.transaction(() => {
      g.conversations.append(conversation, "assistant", `[scheduled job #${job.id}] ${text}`);
      return g.delivery.record(channel, target, key, `${heading}\n\n${text}`, 0);
    })();
    await g.delivery.send(parts, rawPort);
    return "ok";
  };
}

/** The live agent, waiting while it restarts; null when the run is stopped first. */
async function liveAgent(handle: AgentHandle, signal: AbortSignal, sleep: Sleep): Promise<MainAgent | null> {
  for (;;) {
    if (signal.aborted) return null;
    const agent = handle.current();
    if (agent) return agent;
    try {
      await sleep(AGENT_POLL_MS, signal);
    } catch {
      return null;
    }
  }
}

