/**
 * The Telegram reply port: one conversation (chat, forum topic) reached
 * through the Bot API. Text arrives already rendered as Telegram HTML; this
 * file only maps it onto methods, flags and errors: parse_mode unless plain,
 * link previews off, silent unless `notify`, the topic's thread id, a parse
 * error as FormattingRejected, 429 waited out, and media within the caps.
 */
import { statSync } from "node:fs";
import type { InlineKeyboardMarkup, ReactionTypeEmoji } from "grammy/types";
import { type Api, InputFile } from "grammy/web";
import type { Logger } from "../../kernel/log.ts";
import { formatMb, MB } from "../../kernel/sizes.ts";
import {
  FormattingRejected,
  type OutboundMedia,
  type OutboundMediaKind,
  type OutboundText,
  type ReplyButton,
  type ReplyCapabilities,
  type ReplyPort,
  type ReplyTarget,
  type SentMessage,
} from "../../message/index.ts";
import { classify, retryAfterSeconds, TelegramApiError, toApiError } from "./api.ts";
import { TELEGRAM_REACTIONS, telegramProfile } from "./profile.ts";

export { TELEGRAM_REACTIONS } from "./profile.ts";

/** Outbound caps by kind, bytes: the Bot API's upload limits (photos 10 MB, other files 50 MB). */
export const TELEGRAM_MEDIA_CAPS: Readonly<Record<OutboundMediaKind, number>> = {
  image: 10 * MB,
  document: 50 * MB,
  audio: 50 * MB,
  video: 50 * MB,
  voice: 1 * MB,
};

/** Telegram's caption limit; a longer caption goes as a text message after the file. */
const CAPTION_LIMIT = 1024;

/** Telegram edits, deletes, reacts from its fixed set, carries media, shows typing and has buttons (src/channels/telegram/profile.ts). */
export const TELEGRAM_CAPABILITIES: ReplyCapabilities = telegramProfile.capabilities;

/** The allowed-set spelling of an emoji: models often add the FE0F variation selector (❤️) Telegram omits. */
export function normalizeReaction(emoji: string): string | null {
  const bare = emoji.trim().replace(/\uFE0F/g, "");
  return (TELEGRAM_REACTIONS as readonly string[]).includes(bare) ? bare : null;
}

/** The text sent instead of a file over its cap: names the file and the cap. */
export function overCapNotice(media: Pick<OutboundMedia, "kind" | "filename">, size: number): string {
  const cap = TELEGRAM_MEDIA_CAPS[media.kind];
  const shown = formatMb;
  return `I couldn't send the file "${media.filename}": it is ${shown(size)}, over Telegram's ${shown(cap)} limit for ${media.kind} files.`;
}

/** What a reply port is built from. */
export interface PortDeps {
  api: Api;
  token: string;
  log: Logger;
  /** Longest total 429 wait per call before giving up. */
  maxRetryWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

type SendMethod = "sendPhoto" | "sendDocument" | "sendVoice" | "sendAudio" | "sendVideo";
const METHOD: Record<OutboundMediaKind, SendMethod> = {
  image: "sendPhoto",
  document: "sendDocument",
  voice: "sendVoice",
  audio: "sendAudio",
  video: "sendVideo",
};

/** A reply port for one Telegram chat (and forum topic). */
export function telegramReplyPort(target: ReplyTarget, deps: PortDeps): ReplyPort {
  // Numeric ids go as numbers, as Telegram sends them; "@channel" names stay strings.
  const chatId = /^-?\d+$/.test(target.chatId) ? Number(target.chatId) : target.chatId;
  const thread = target.threadId !== undefined ? { message_thread_id: Number(target.threadId) } : {};
  const call = <T>(fn: () => Promise<T>) => withRateLimit(fn, deps);
  const textOptions = (m: OutboundText) => ({
    ...(m.plain ? {} : { parse_mode: "HTML" as const }),
    link_preview_options: { is_disabled: true },
  });

  const sendText = async (m: OutboundText): Promise<SentMessage> => {
    const markup = m.buttons?.length ? { reply_markup: inlineKeyboard(m.buttons) } : {};
    const sent = await call(() => deps.api.sendMessage(chatId, m.text, { ...textOptions(m), ...thread, ...markup, disable_notification: !m.notify }));
    return { id: String(sent.message_id) };
  };

  return {
    capabilities: TELEGRAM_CAPABILITIES,
    sendText,

    async editText(sent, m) {
      try {
        await call(() => deps.api.editMessageText(chatId, Number(sent.id), m.text, textOptions(m)));
      } catch (error) {
        // Streaming may re-send identical text; Telegram refuses that, but the message already shows it.
        if (error instanceof TelegramApiError && /message is not modified/i.test(error.message)) return;
        throw error;
      }
    },

    async deleteMessage(sent) {
      try {
        await call(() => deps.api.deleteMessage(chatId, Number(sent.id)));
      } catch (error) {
        if (error instanceof TelegramApiError && /message to delete not found/i.test(error.message)) return;
        throw error;
      }
    },

    async react(messageId, emoji) {
      const allowed = normalizeReaction(emoji);
      if (!allowed) throw new Error(`telegram does not allow the reaction ${JSON.stringify(emoji)}; allowed: ${TELEGRAM_REACTIONS.join(" ")}`);
      await call(() => deps.api.setMessageReaction(chatId, Number(messageId), [{ type: "emoji", emoji: allowed as ReactionTypeEmoji["emoji"] }]));
    },

    async typing() {
      // A typing hint is worth nothing after a wait: on 429, give up rather than queue behind the limit.
      await withRateLimit(() => deps.api.sendChatAction(chatId, "typing", thread), { ...deps, maxRetryWaitMs: 0 });
    },

    async sendMedia(media) {
      const size = statSync(media.path).size;
      if (size > TELEGRAM_MEDIA_CAPS[media.kind]) {
        deps.log.warn("outbound file over the telegram cap; sent a notice instead", { kind: media.kind, bytes: size, file: media.filename });
        return sendText({ text: overCapNotice(media, size), notify: media.notify, linkPreview: false, plain: true });
      }
      const caption = media.caption && media.caption.length <= CAPTION_LIMIT ? media.caption : undefined;
      // Captions come from the model as plain text: no parse_mode, so nothing in them can be rejected.
      const options = { ...thread, disable_notification: !media.notify, ...(caption ? { caption } : {}) };
      // The file's bytes as a stream, new for each attempt: grammY's web build (see api.ts) has no file-path reader.
      const send = (method: SendMethod) =>
        call(() => deps.api[method](chatId, new InputFile(Bun.file(media.path).stream(), media.filename), options as never) as Promise<{ message_id: number }>);
      let sent: { message_id: number };
      try {
        sent = await send(METHOD[media.kind]);
      } catch (error) {
        // Telegram refuses some images as photos (dimensions, format); as a document they still arrive.
        if (media.kind !== "image" || !(error instanceof TelegramApiError) || !/PHOTO|IMAGE|dimension/i.test(error.message)) throw error;
        deps.log.warn("telegram refused the image as a photo; sending it as a document", { error: error.message });
        sent = await send("sendDocument");
      }
      if (media.caption && !caption) await sendText({ text: media.caption, notify: false, linkPreview: false, plain: true });
      return { id: String(sent.message_id) };
    },
  };
}

/** Buttons as one row of an inline keyboard; each press comes back as a callback_query carrying its data. */
export function inlineKeyboard(buttons: readonly ReplyButton[]): InlineKeyboardMarkup {
  return { inline_keyboard: [buttons.map((b) => ({ text: b.label, callback_data: b.data }))] };
}

/**
 * Answer a button press: the presser's toast (answerCallbackQuery, which
 * also stops their client's spinner), and once the buttons have served,
 * take the keyboard off the message. Failures are logged, never thrown: a
 * toast that did not show changes nothing that was decided.
 */
export async function answerPressOnTelegram(
  api: Pick<Api, "answerCallbackQuery" | "editMessageReplyMarkup">,
  queryId: string,
  answer: { text: string; clearFrom?: { chatId: string; messageId: string } },
  deps: Pick<PortDeps, "token" | "log">,
): Promise<void> {
  try {
    // Telegram shows at most 200 characters of a callback answer.
    await api.answerCallbackQuery(queryId, answer.text ? { text: answer.text.slice(0, 200) } : {});
  } catch (error) {
    deps.log.warn("could not answer a button press", { error: toApiError(error, deps.token).message });
  }
  const clear = answer.clearFrom;
  if (!clear) return;
  try {
    await api.editMessageReplyMarkup(/^-?\d+$/.test(clear.chatId) ? Number(clear.chatId) : clear.chatId, Number(clear.messageId), {
      reply_markup: { inline_keyboard: [] },
    });
  } catch (error) {
    const message = toApiError(error, deps.token).message;
    if (!/message is not modified/i.test(message)) deps.log.warn("could not take the buttons off a message", { error: message });
  }
}

/**
 * Run one API call; on 429 wait `retry_after` and try again while the total
 * wait stays under the cap. Errors come out token-free, a parse error as
 * FormattingRejected.
 */
export async function withRateLimit<T>(fn: () => Promise<T>, deps: Pick<PortDeps, "token" | "log" | "maxRetryWaitMs" | "sleep">): Promise<T> {
  // Short waits are sat out here; a longer Retry-After goes to the outbox, which waits it out durably.
  const budget = deps.maxRetryWaitMs ?? 5_000;
  const sleep = deps.sleep ?? ((ms: number) => Bun.sleep(ms));
  let waited = 0;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const kind = classify(error);
      if (kind === "formatting") throw new FormattingRejected(toApiError(error, deps.token).message);
      if (kind !== "rate_limited") throw toApiError(error, deps.token);
      // At least a second, so a zero retry_after cannot spin the loop.
      const waitMs = Math.max(1, retryAfterSeconds(error) ?? 1) * 1000;
      if (waited + waitMs > budget) {
        throw new TelegramApiError(`telegram rate limit: asked to wait ${waitMs / 1000} s, past the ${budget / 1000} s cap`, "rate_limited", 429, waitMs);
      }
      deps.log.warn("telegram rate limited; waiting as asked", { retry_after_s: waitMs / 1000 });
      waited += waitMs;
      await sleep(waitMs);
    }
  }
}
