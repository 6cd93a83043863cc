/**
 * Every tool a turn is offered, gathered from the features that make them
 * (react and send_attachment here; the workspace, memory, jobs, skills, the
 * web and tool servers through the composition root's `extraTools`) and
 * passed through the role
 * table (src/gateway/roles.ts) — the one gate, whatever kind of turn asks.
 */
import { reactTool } from "../agent/tools/react.ts";
import { sendAttachmentTool } from "../agent/tools/send_attachment.ts";
import type { Tool } from "../agent/tools/types.ts";
import { type GatewayChannel, isDirectChat, type ReplyCapabilities } from "../message/index.ts";
import type { MessageSender } from "../message/untrusted.ts";
import type { ToolScope } from "./deps.ts";
import { type Audience, offeredTools, type RoleSources, type TurnMode, trustedWords } from "./roles.ts";
import type { Standing } from "./trust.ts";

export interface ToolSources extends RoleSources {
  /** Tools the composition root offers besides react and send_attachment, made for the scope. */
  extraTools?: (scope: ToolScope) => Tool[];
}

/** The tools for one turn: what the features make for its scope, as far as the role table lets its audience have them. */
export function toolsForTurn(scope: ToolScope, sources: ToolSources, react: ReplyCapabilities["react"] = false): Tool[] {
  const reacting = reactTool(react);
  const candidates = [...(reacting ? [reacting] : []), sendAttachmentTool, ...(sources.extraTools?.(scope) ?? [])];
  return offeredTools(candidates, scope.audience, sources);
}

/** Who asks, and in which chat: what an audience is judged from. */
export interface Asker {
  channel: GatewayChannel;
  chatId: string;
  senderId: string;
  senderName?: string;
  standing: Standing;
  /** The adapter's word on whether the chat is one-to-one (InboundMessage.direct). */
  direct?: boolean;
}

/** Where the owner switched the changing and sending tools on for a shared chat (`/sandbox chat on`). */
export type SharedToolsLookup = (channel: GatewayChannel, chatId: string) => boolean;

/** The audience of a turn of `mode` for `asker`. */
export function audienceFor(asker: Asker, mode: TurnMode, sharedToolsOn: SharedToolsLookup): Audience {
  const direct = isDirectChat(asker);
  return { standing: asker.standing, direct, mode, sharedToolsOn: !direct && sharedToolsOn(asker.channel, asker.chatId) };
}

/** The asker as the model is shown them: trusted words or not (src/message/untrusted.ts). */
export function senderOf(asker: Asker, audience: Audience): MessageSender {
  return { id: asker.senderId, trusted: trustedWords(audience), ...(asker.senderName ? { name: asker.senderName } : {}) };
}
