/**
 * ACP sessions as gateway conversations: each session is its own
 * conversation on channel `acp` (chat id = session id, sender "local"),
 * owned by the connection that opened it and invisible to any other.
 * A prompt's content blocks become the common inbound message here.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { conversationKey, type FetchedMedia, type InboundMedia, type InboundMessage } from "../../message/index.ts";
import { type SessionUpdate, UpdateChannel, type UpdateMapper } from "./stream.ts";

/** The sender of every ACP message: whoever can open the 0600 socket is the local operator. */
export const ACP_SENDER = "local";

/** One running prompt of a session. */
export interface PromptTurn {
  readonly mapper: UpdateMapper;
  /** session/cancel arrived (or the client went away) while it ran. */
  cancelled: boolean;
}

/** One ACP session: a conversation of its own, owned by one connection. */
export interface AcpSession {
  readonly id: string;
  /** The gateway's conversation key: one turn at a time, history of its own. */
  readonly conversation: string;
  /** The connection that opened it; no other connection may use it. */
  readonly owner: number;
  readonly cwd: string;
  /** Every update of the session goes out through here, in order. */
  readonly updates: UpdateChannel;
  readonly turns: Set<PromptTurn>;
}

/** The sessions of every connection, by id. */
export class SessionRegistry {
  private readonly sessions = new Map<string, AcpSession>();

  /** A new session for `owner`, sending its updates through `notify`. */
  open(owner: number, cwd: string, notify: (update: SessionUpdate, sessionId: string) => Promise<void>): AcpSession {
    const id = crypto.randomUUID();
    const session: AcpSession = {
      id,
      conversation: conversationKey({ channel: "acp", chatId: id }),
      owner,
      cwd,
      updates: new UpdateChannel((update) => notify(update, id)),
      turns: new Set(),
    };
    this.sessions.set(id, session);
    return session;
  }

  /** The session, when it exists and belongs to `owner` (omit `owner` for the daemon's own look-ups). */
  find(id: string, owner?: number): AcpSession | undefined {
    const session = this.sessions.get(id);
    if (!session || (owner !== undefined && session.owner !== owner)) return undefined;
    return session;
  }

  ownedBy(owner: number): AcpSession[] {
    return [...this.sessions.values()].filter((s) => s.owner === owner);
  }

  all(): AcpSession[] {
    return [...this.sessions.values()];
  }

  remove(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }
}

/** A prompt's blocks as the gateway's message, and the image bytes its media refer to. */
export interface PromptMessage {
  message: InboundMessage;
  images: Map<string, FetchedMedia>;
}

/**
 * Text blocks become the text (a leading "/" stays text: ACP has no
 * commands), images become media served from memory, links become lines
 * naming them. Audio is not advertised and is left out.
 */
export function promptMessage(sessionId: string, blocks: readonly ContentBlock[], now = Date.now()): PromptMessage {
  const messageId = crypto.randomUUID();
  const lines: string[] = [];
  const media: InboundMedia[] = [];
  const images = new Map<string, FetchedMedia>();
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        lines.push(block.text);
        break;
      case "image": {
        const ref = `${sessionId}/${messageId}/${images.size}`;
        const bytes = new Uint8Array(Buffer.from(block.data, "base64"));
        images.set(ref, { bytes, mime: block.mimeType });
        media.push({ kind: "image", mime: block.mimeType, declaredSize: bytes.byteLength, ref });
        break;
      }
      case "resource_link":
        lines.push(`[${block.title ?? block.name}](${block.uri})`);
        break;
      case "resource":
        // Embedded context is not advertised, but a text resource is still worth reading.
        if ("text" in block.resource) lines.push(`${block.resource.uri}:\n\`\`\`\n${block.resource.text}\n\`\`\``);
        else lines.push(`[attached: ${block.resource.uri}]`);
        break;
    }
  }
  return {
    message: {
      channel: "acp",
      chatId: sessionId,
      senderId: ACP_SENDER,
      messageId,
      text: lines.join("\n"),
      media,
      receivedAt: now,
      // One editor session, one user.
      direct: true,
    },
    images,
  };
}

/** Cancel a session's prompts: each answers `cancelled`, and the conversation's queue is stopped. */
export function cancelSession(session: AcpSession, stopConversation: (key: string) => void): void {
  for (const turn of session.turns) turn.cancelled = true;
  stopConversation(session.conversation);
}
