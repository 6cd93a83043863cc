/**
 * The Discord reply port: one conversation (a DM, a guild channel, or a
 * thread — replies go to the thread) reached over REST. Text arrives already
 * rendered (Discord's Markdown, split at 2,000 characters upstream); this file
 * maps it onto the message body: SUPPRESS_EMBEDS on every message (no link
 * previews), SUPPRESS_NOTIFICATIONS on all but the first of a reply,
 * `allowed_mentions` that lets user mentions through but never @everyone,
 * @here or roles, and — in guild channels — the first message quoting the
 * message it answers. Edits and deletes serve streaming; reactions take any
 * single emoji; files up to 10 MB go as multipart uploads. Buttons
 * (an access request's Approve / Deny) go as message components: action
 * rows of buttons whose `custom_id` is each button's data; a press comes back
 * as an interaction (interaction.ts).
 */
import { statSync } from "node:fs";
import type { APIActionRowComponent, APIAllowedMentions, APIButtonComponentWithCustomId, RESTPostAPIChannelMessageJSONBody } from "discord-api-types/v10";
import { isSingleEmoji } from "../../kernel/emoji.ts";
import { formatMb, MB } from "../../kernel/sizes.ts";
import {
  FormattingRejected,
  type OutboundMedia,
  type OutboundText,
  type ReplyButton,
  type ReplyCapabilities,
  type ReplyPort,
  type ReplyTarget,
  type SentMessage,
} from "../../message/index.ts";
import { type DiscordApi, DiscordApiError } from "./api.ts";
import { discordProfile } from "./profile.ts";
import { AllowedMentionsTypes, ButtonStyle, ComponentType, MessageFlags } from "./wire.ts";

/** The outbound media cap for Discord: its upload limit for a bot's message. */
export const DISCORD_MEDIA_CAP = 10 * MB;

/** Discord's message content limit, in characters. */
export const DISCORD_TEXT_LIMIT = 2000;

/** Discord edits, deletes, takes any single emoji as a reaction, carries files, shows typing and has buttons. */
export const DISCORD_CAPABILITIES: ReplyCapabilities = discordProfile.capabilities;

/** Discord's limits on buttons: five to a row, five rows to a message, 80 characters of label. */
const BUTTONS_PER_ROW = 5;
const MAX_ROWS = 5;
const LABEL_LIMIT = 80;

/**
 * Buttons as message components: action rows of up to five, the first
 * button primary (the one a person is expected to tap), the rest secondary;
 * each press comes back as an interaction carrying the button's data as
 * `custom_id`.
 */
export function buttonRows(buttons: readonly ReplyButton[]): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  const rows: APIActionRowComponent<APIButtonComponentWithCustomId>[] = [];
  buttons.slice(0, BUTTONS_PER_ROW * MAX_ROWS).forEach((button, i) => {
    if (i % BUTTONS_PER_ROW === 0) rows.push({ type: ComponentType.ActionRow, components: [] });
    const label = button.label.length <= LABEL_LIMIT ? button.label : `${button.label.slice(0, LABEL_LIMIT - 1)}…`;
    rows.at(-1)!.components.push({ type: ComponentType.Button, style: i === 0 ? ButtonStyle.Primary : ButtonStyle.Secondary, label, custom_id: button.data });
  });
  return rows;
}

/** User mentions in the text work; @everyone, @here and role mentions never ping. */
function allowedMentions(pingRepliedUser: boolean): APIAllowedMentions {
  return { parse: [AllowedMentionsTypes.User], replied_user: pingRepliedUser };
}

/** What a reply port is built from. */
export interface DiscordPortDeps {
  api: DiscordApi;
  /** Whether a channel is a DM (no reply quoting there). */
  isDirect(channelId: string): boolean;
  /** Told when a file is not sent for being over the cap (the user is told in text). */
  onOverCap?(media: OutboundMedia, size: number): void;
}

/** Plain text (the formatting fallback) with Discord's Markdown characters escaped, so it shows as written. */
export function escapeMarkdown(text: string): string {
  return text.replace(/([\\*_~`|[\]])/g, "\\$1").replace(/^(\s*)(>|#{1,3}|-|\d+\.)(?=\s)/gm, (_, space: string, mark: string) => `${space}\\${mark}`);
}

/** A reply port for one Discord conversation. */
export function discordReplyPort(target: ReplyTarget, deps: DiscordPortDeps): ReplyPort {
  // A thread is a channel of its own: that is where its conversation is answered.
  const channel = target.threadId ?? target.chatId;
  const content = (m: Pick<OutboundText, "text" | "plain">) => (m.plain ? escapeMarkdown(m.text) : m.text);

  /** The fields every new message carries: flags, mentions, and the quote of the answered message on the first one. */
  const envelope = (notify: boolean): RESTPostAPIChannelMessageJSONBody => {
    const quote = notify && target.replyTo !== undefined && !deps.isDirect(channel);
    return {
      flags: MessageFlags.SuppressEmbeds | (notify ? 0 : MessageFlags.SuppressNotifications),
      allowed_mentions: allowedMentions(quote),
      // fail_if_not_exists false: if the user deleted their message, the reply still goes, unquoted.
      ...(quote ? { message_reference: { message_id: target.replyTo!, channel_id: channel, fail_if_not_exists: false } } : {}),
    };
  };

  const sendText = async (m: OutboundText): Promise<SentMessage> => {
    const components = m.buttons?.length ? { components: buttonRows(m.buttons) } : {};
    const sent = await asFormatting(() => deps.api.createMessage(channel, { content: content(m), ...envelope(m.notify), ...components }));
    return { id: sent.id };
  };

  return {
    capabilities: DISCORD_CAPABILITIES,
    sendText,

    async editText(sent, m) {
      await asFormatting(() =>
        deps.api.editMessage(channel, sent.id, {
          content: content(m),
          flags: MessageFlags.SuppressEmbeds,
          allowed_mentions: { parse: [AllowedMentionsTypes.User] },
        }),
      );
    },

    async deleteMessage(sent) {
      await deps.api.deleteMessage(channel, sent.id);
    },

    async react(messageId, emoji) {
      const one = emoji.trim();
      if (!isSingleEmoji(one)) throw new Error(`Discord reactions take one emoji; ${JSON.stringify(emoji)} is not one`);
      await deps.api.addReaction(channel, messageId, one);
    },

    async typing() {
      await deps.api.triggerTyping(channel);
    },

    async sendMedia(media: OutboundMedia) {
      const size = statSync(media.path).size;
      if (size > DISCORD_MEDIA_CAP) {
        deps.onOverCap?.(media, size);
        // Never a silent drop: the user hears which file did not come and why.
        const note = `📎 ${media.filename} is ${formatMb(size)}, over Discord's ${formatMb(DISCORD_MEDIA_CAP)} limit for files, so it was not sent.`;
        return sendText({ text: note, notify: media.notify, linkPreview: false, plain: true });
      }
      const bytes = new Uint8Array(await Bun.file(media.path).arrayBuffer());
      const caption = media.caption?.trim() ?? "";
      const body: RESTPostAPIChannelMessageJSONBody = {
        ...envelope(media.notify),
        // The id names the upload's part, files[0]; Discord's OpenAPI spec types it a string (a snowflake), never a number.
        attachments: [{ id: "0", filename: media.filename }],
        ...(caption && caption.length <= DISCORD_TEXT_LIMIT ? { content: caption } : {}),
      };
      const sent = await deps.api.createMessage(channel, body, [{ filename: media.filename, mime: media.mime, bytes }]);
      // A caption too long for the file's message goes after it as a message of its own, cut to the limit.
      if (caption.length > DISCORD_TEXT_LIMIT) {
        await sendText({ text: `${caption.slice(0, DISCORD_TEXT_LIMIT - 1)}…`, notify: false, linkPreview: false, plain: false });
      }
      return { id: sent.id };
    },
  };
}

/** Run a send, turning Discord's refusals of the text itself into FormattingRejected (the sender resends it plain). */
async function asFormatting<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof DiscordApiError && error.kind === "formatting") throw new FormattingRejected(error.message);
    throw error;
  }
}
