/**
 * `/background` work: a detached turn (no streaming, not written into the
 * conversation as a request) whose result is posted to the same conversation
 * through the outbox when it finishes — or refused past the daemon-wide cap.
 */
import { BackgroundLimitReached } from "./background.ts";
import { CommandRefused } from "./commands/index.ts";
import type { GatewayDeps } from "./deps.ts";
import { faultMessage } from "./faults.ts";
import type { InboundMessage, ReplyPort, ReplyTarget } from "../message/index.ts";
import { type Asker, audienceFor, senderOf, toolsForTurn } from "./tools.ts";
import { roleOf, type Standing } from "./trust.ts";

export interface BackgroundRequest {
  message: InboundMessage;
  /** Where the sender stands: what the role table offers the work. */
  standing: Standing;
  conversation: string;
  target: ReplyTarget;
  rawPort: ReplyPort;
  say: (markdown: string) => Promise<void>;
  prompt: string;
}

/** Start the work and return its task number; throws CommandRefused at the cap or while the agent restarts. */
export function startBackgroundTurn(deps: GatewayDeps, request: BackgroundRequest): number {
  const { message, conversation, target, rawPort, say, prompt } = request;
  const asker: Asker = { ...message, standing: request.standing };
  const audience = audienceFor(asker, "background", (channel, chatId) => deps.sandbox?.store.sharedToolsOn(channel, chatId) ?? false);
  const role = roleOf(request.standing);
  const agent = deps.agent.current();
  if (!agent) throw new CommandRefused("The assistant is restarting (restart in progress) — try /background again in a moment.");
  try {
    return deps.background.start(conversation, prompt, async (signal, task) => {
      const key = `bg:${task.id}:${message.channel}:${message.messageId}`;
      const result = await agent.runTurn({
        conversation,
        channel: message.channel,
        text: prompt,
        images: [],
        sender: senderOf(asker, audience),
        shared: !audience.direct,
        tools: toolsForTurn({ channel: message.channel, conversation, senderId: message.senderId, role, audience }, deps),
        // Tool media goes through the outbox like every other send (its own key: the result's `say` records from part 0).
        toolContext: {
          port: deps.delivery.durablePort(message.channel, target, `${key}:media`, rawPort),
          channel: message.channel,
          conversation,
          senderId: message.senderId,
          role,
          target,
          workspace: deps.workspace,
          idempotency: deps.idempotency,
          say,
        },
        signal,
        detached: true,
      });
      if (result.status === "cancelled") return;
      // Health hears how the provider did, as the foreground runner tells it; the provider's words stay in the log.
      deps.agent.noteOutcome?.(result.status !== "failed", result.failure);
      const body =
        result.status === "ok" || result.status === "step_limit"
          ? result.text
          : result.status === "empty"
            ? "_The model gave an empty answer — try again._"
            : `_It failed._ ${faultMessage(result.failure?.fault, false)}`;
      if (result.status === "ok") deps.conversations.append(conversation, "assistant", `[background task #${task.id}] ${result.text}`);
      await deps.delivery.say(message.channel, target, key, `**Background task #${task.id} finished**\n\n${body}`, rawPort);
      if (result.status !== "ok" && result.status !== "step_limit") throw new Error(result.error ?? result.status);
    }).id;
  } catch (error) {
    if (error instanceof BackgroundLimitReached) {
      throw new CommandRefused(`${error.limit} background tasks are already running, the most allowed at once; wait for one to finish or /stop them.`);
    }
    throw error;
  }
}
