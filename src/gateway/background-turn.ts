/**
 * `/background` work: a detached turn of the one engine (kind `background`:
 * not streamed, the request not written into the conversation) whose result
 * is posted to the same conversation through the outbox when it finishes —
 * or refused past the daemon-wide cap.
 */
import { BackgroundLimitReached, type BackgroundWork } from "./background.ts";
import { type BackgroundRequest, CommandRefused } from "./commands/index.ts";
import type { AgentHandle } from "./deps.ts";
import { roleOf } from "./trust.ts";
import type { TurnEngine } from "./turn/engine.ts";
import { TURN_KINDS } from "./turn/modes.ts";

export interface BackgroundServices {
  engine: TurnEngine;
  background: BackgroundWork;
  agent: AgentHandle;
}

/** The task ended without an answer (a fault or an empty completion, which its message told): /tasks lists it as failed. */
class BackgroundTurnFailed extends Error {
  override name = "BackgroundTurnFailed";
}

/** Start the work and return its task number; throws CommandRefused at the cap or while the agent restarts. */
export function startBackgroundTurn(services: BackgroundServices, request: BackgroundRequest): number {
  const { message, conversation, target, rawPort, prompt, standing } = request;
  if (!services.agent.current()) throw new CommandRefused("The assistant is restarting (restart in progress) — try /background again in a moment.");
  try {
    return services.background.start(
      conversation,
      prompt,
      async (signal, task) => {
        const outcome = await services.engine.run({
          kind: "background",
          asker: { ...message, standing },
          role: roleOf(standing),
          conversation,
          target,
          replyKey: `bg:${task.id}:${message.channel}:${message.messageId}`,
          rawPort,
          text: prompt,
          images: [],
          signal,
          frame: {
            answer: (text) => `**Background task #${task.id} finished**\n\n${text}`,
            failure: (why) => `**Background task #${task.id} failed**\n\n${why}`,
            historyTag: `[background task #${task.id}]`,
          },
        });
        if (outcome === "failed" || outcome === "empty_completion") throw new BackgroundTurnFailed(outcome);
      },
      TURN_KINDS.background.stoppable,
    ).id;
  } catch (error) {
    if (error instanceof BackgroundLimitReached) {
      throw new CommandRefused(`${error.limit} background tasks are already running, the most allowed at once; wait for one to finish or /stop them.`);
    }
    throw error;
  }
}
