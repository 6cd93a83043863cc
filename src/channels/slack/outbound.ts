/**
 * The Slack reply port: mrkdwn messages in the conversation's channel and
 * thread with unfurling off, edits and deletes for streaming, reactions by
 * shortcode name, and files through files.uploadV2. Slack has no per-message
 * "silent" switch and no typing indicator for bots, so `notify` is not
 * expressible here and typing is not claimed.
 */
import { statSync } from "node:fs";
import { formatMb, MB } from "../../kernel/sizes.ts";
import {
  FormattingRejected,
  type OutboundMedia,
  type OutboundText,
  type ReplyCapabilities,
  type ReplyPort,
  type ReplyTarget,
  type SentMessage,
} from "../../message/index.ts";
import { type SlackApi, SlackApiError } from "./api.ts";
import { SLACK_REACTION_NAMES, SLACK_REACTIONS, slackProfile } from "./profile.ts";

export { SLACK_REACTION_NAMES } from "./profile.ts";

/** The outbound media cap for Slack: a larger file is not uploaded. */
export const SLACK_MEDIA_CAP = 100 * MB;

/** Slack edits, deletes and reacts by shortcode name; no typing indicator for bots (src/channels/slack/profile.ts). */
export const SLACK_CAPABILITIES: ReplyCapabilities = slackProfile.capabilities;

/** Slack's refusals that are about the text itself: resent once as plain text by the gateway. */
const FORMATTING_ERRORS = new Set(["msg_too_long", "msg_blocks_too_long", "invalid_blocks", "invalid_blocks_format"]);

const SHORTCODE = /^[a-z0-9_+\-']+(::skin-tone-[2-6])?$/;
const bare = (emoji: string) => emoji.replace(/\uFE0F/g, "");

/** A Slack reaction name for a shortcode (with or without colons) or a listed emoji; undefined when it is neither. */
export function slackReactionName(input: string): string | undefined {
  const trimmed = input.trim();
  const name = trimmed.replace(/^:(.*):$/, "$1").toLowerCase();
  if (SHORTCODE.test(name)) return name === "+1" ? "thumbsup" : name;
  return SLACK_REACTIONS.find(([, emoji]) => bare(emoji) === bare(trimmed))?.[0];
}

/** Slack reads &, < and > as control characters in any text, mrkdwn or not. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Told when a file is not sent for being over the cap (the adapter counts it as a failed media reply). */
export type OverCapHook = (media: OutboundMedia, size: number) => void;

/** A reply port for one Slack conversation (channel, and thread when there is one). */
export function slackReplyPort(api: SlackApi, target: ReplyTarget, onOverCap: OverCapHook = () => {}): ReplyPort {
  const thread = target.threadId ? { thread_ts: target.threadId } : {};
  // Plain text (the formatting fallback) is not markup: escape it and tell Slack not to parse it.
  const body = (message: OutboundText) => (message.plain ? escapeSlackText(message.text) : message.text);

  const sendText = async (message: OutboundText): Promise<SentMessage> => {
    const ts = await asFormatting(() => api.postMessage({ channel: target.chatId, text: body(message), mrkdwn: !message.plain, ...thread }));
    return { id: ts };
  };

  return {
    capabilities: SLACK_CAPABILITIES,
    sendText,
    async editText(sent, message) {
      await asFormatting(() => api.update(target.chatId, sent.id, body(message)));
    },
    async deleteMessage(sent) {
      await api.delete(target.chatId, sent.id);
    },
    async react(messageId, emoji) {
      const name = slackReactionName(emoji);
      if (!name) throw new Error(`Slack reactions take a shortcode name such as ${SLACK_REACTION_NAMES.slice(0, 3).join(", ")}; "${emoji}" is not one`);
      await api.addReaction(target.chatId, messageId, name);
    },
    async sendMedia(media: OutboundMedia) {
      const size = statSync(media.path).size;
      if (size > SLACK_MEDIA_CAP) {
        onOverCap(media, size);
        // Never a silent drop: the user hears which file did not come and why.
        const note = `📎 ${media.filename} is ${formatMb(size)}, over Slack's ${formatMb(SLACK_MEDIA_CAP)} limit for files here, so it was not sent.`;
        return sendText({ text: note, notify: media.notify, linkPreview: false, plain: true });
      }
      const bytes = new Uint8Array(await Bun.file(media.path).arrayBuffer());
      const id = await api.uploadFile({
        channel: target.chatId,
        ...thread,
        bytes,
        filename: media.filename,
        ...(media.caption ? { caption: escapeSlackText(media.caption) } : {}),
      });
      return { id };
    },
    async typing() {
      // Slack shows no typing indicator for bots on the Web API; capabilities say so.
    },
  };
}

/** Run a send, turning Slack's text-shaped refusals into FormattingRejected. */
async function asFormatting<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof SlackApiError && FORMATTING_ERRORS.has(error.code)) throw new FormattingRejected(error.message);
    throw error;
  }
}
