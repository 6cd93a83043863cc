/**
 * What the delivery modules share: how a reply is rendered for a channel,
 * the text files sent after one, how a send ended, and a setting read from
 * the config in force each time it is used (a reload changes it).
 */
import type { GatewayChannel, OutboundText, ReplyTarget } from "../../message/index.ts";

/** A reply rendered for one channel: its messages, the plain fallback of each, and oversized code blocks as files. */
export interface RenderedReply {
  parts: OutboundText[];
  attachments: TextFile[];
  /** Part `index` again as plain text (one or more messages), for a platform that rejected its formatting. */
  fallback(index: number): OutboundText[];
}

/** A text file sent after a reply: a code block too big for a message, or a whole answer too long for messages. */
export interface TextFile {
  filename: string;
  mime: string;
  content: string;
  /** false: if the file cannot be delivered, say so rather than send its text as messages (a whole long answer). */
  inline?: boolean;
}

export interface Presenter {
  /** Split → render → measure, for one channel. */
  render(markdown: string, channel: GatewayChannel): RenderedReply;
  /** Raw text as plain messages within the channel's limit (a code block whose file could not be sent). */
  plain(text: string, channel: GatewayChannel): OutboundText[];
}

/** How a send ended for now: delivered, waiting for a retry, given up, or stopped. */
export type SendOutcome = "sent" | "deferred" | "failed" | "cancelled";

/** A number fixed at construction, or read from the config in force each time it is needed. */
export type Setting = number | (() => number);

export const readSetting = (setting: Setting): number => (typeof setting === "function" ? setting() : setting);

/** One chat of one channel: the unit whose replies keep their order. */
export const chatKeyOf = (part: { channel: GatewayChannel; target: ReplyTarget }): string => `${part.channel}:${part.target.chatId}`;
