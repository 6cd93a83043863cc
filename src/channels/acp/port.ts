/**
 * The reply port of an ACP session. Messages the gateway sends outside the
 * model stream (notices such as "try again") become `agent_message_chunk`
 * updates; attachments are never transferred: a file arrives as one text
 * line naming it. An ACP client cannot edit, delete or react.
 */
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk";
import type { OutboundMedia, PermissionAsk, ReplyCapabilities, ReplyPort } from "../../message/index.ts";
import { acpProfile } from "./profile.ts";
import type { AcpSession, PromptTurn } from "./session.ts";
import { messageChunk } from "./stream.ts";

/** Text only, streamed; files are named, never sent (src/channels/acp/profile.ts). */
export const ACP_CAPABILITIES: ReplyCapabilities = acpProfile.capabilities;

/** The one line that stands for a file the reply carried. */
export function fileLine(media: Pick<OutboundMedia, "filename" | "path" | "caption">): string {
  return `📎 ${media.filename}${media.caption ? ` — ${media.caption}` : ""} (${media.path})`;
}

/** Asks the editor (session/request_permission) on behalf of a port. */
export type PermissionAsker = (ask: PermissionAsk, signal: AbortSignal) => Promise<"allow" | "deny" | "cancelled">;

/**
 * A port into `session`; during a prompt, `turn` keeps its text apart from
 * the streamed answer, and `ask` puts permission questions to the editor.
 */
export function acpPort(session: AcpSession, turn?: PromptTurn, ask?: PermissionAsker): ReplyPort {
  let sent = 0;
  const say = async (text: string) => {
    const id = `acp-${++sent}`;
    const updates = turn ? turn.mapper.message(text, id) : text === "" ? [] : [messageChunk(text)];
    for (const update of updates) await session.updates.send(update);
    return { id };
  };
  return {
    capabilities: ACP_CAPABILITIES,
    sendText: (message) => say(message.text),
    sendMedia: (media) => say(fileLine(media)),
    async editText() {
      throw new Error("an ACP client cannot edit messages");
    },
    async deleteMessage() {
      throw new Error("an ACP client cannot delete messages");
    },
    async react() {
      throw new Error("an ACP client has no reactions");
    },
    async typing() {},
    ...(ask ? { askPermission: ask } : {}),
  };
}

/** The session/request_permission parameters for an access question: allow once, or reject. */
export function permissionRequest(sessionId: string, ask: PermissionAsk, toolCallId: string): RequestPermissionRequest {
  return {
    sessionId,
    toolCall: {
      toolCallId,
      title: ask.title,
      kind: ask.kind,
      status: "pending",
      locations: [{ path: ask.path }],
      rawInput: { path: ask.path, reason: ask.reason },
    },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "deny", name: "Deny", kind: "reject_once" },
    ],
  };
}

/** The port for a session that no longer exists (its client went away): every send fails. */
export function gonePort(sessionId: string): ReplyPort {
  const gone = async (): Promise<never> => {
    throw new Error(`ACP session ${sessionId} is closed`);
  };
  return {
    capabilities: ACP_CAPABILITIES,
    sendText: gone,
    sendMedia: gone,
    editText: gone,
    deleteMessage: gone,
    react: gone,
    typing: async () => {},
  };
}
