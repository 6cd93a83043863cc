/**
 * The Telegram channel adapter: long polling only (no webhook transport).
 * Received messages go to the gateway through the durable inbox together
 * with the new poll offset; a button press is decided (durably, in the
 * confirmation codes) before that offset is committed. Replies go through a
 * grammY-backed reply port.
 */
import type { Api } from "grammy/web";
import type { Config } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import { Logger, Redactor } from "../../kernel/log.ts";
import { type FetchedMedia, type InboundMedia, MediaTooLarge, type ReplyPort, type ReplyTarget } from "../../message/index.ts";
import type { AdapterContext, ChannelAdapter } from "../types.ts";
import { botIdOf, createTelegramApi, downloadFile, grammySignal, TelegramApiError, toApiError } from "./api.ts";
import { type TelegramPress, toInboundBatch, toPresses } from "./inbound.ts";
import { answerPressOnTelegram, TELEGRAM_CAPABILITIES, telegramReplyPort } from "./outbound.ts";
import { OffsetStore, Poller, type PollerOptions } from "./poller.ts";
import { telegramProfile } from "./profile.ts";

/** Bots may download files up to 20 MB (getFile's limit; src/channels/telegram/profile.ts). */
export const TELEGRAM_INBOUND_CAP = telegramProfile.inboundMediaCap;

/** Knobs tests turn; production uses the defaults. */
export interface TelegramAdapterOptions {
  fetch?: typeof fetch;
  timeoutSeconds?: number;
  backoff?: PollerOptions["backoff"];
  maxRetryWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** Until start() hands us the daemon's logger, log nowhere (ports may be built before start). */
const silent = new Logger({ write: () => {} }, "error", new Redactor());

/** The adapter: a poller feeding the inbox, reply ports, and the media fetcher. */
export class TelegramAdapter implements ChannelAdapter {
  readonly name = "telegram" as const;
  readonly capabilities = TELEGRAM_CAPABILITIES;
  readonly inboundMediaCap = TELEGRAM_INBOUND_CAP;
  private readonly token: string;
  private readonly apiRoot: string;
  private readonly api: Api;
  private log: Logger = silent;
  private poller: Poller | undefined;

  constructor(
    config: Config,
    private readonly options: TelegramAdapterOptions = {},
  ) {
    const section = config.fermix_channels.telegram;
    if (!section.bot_token) throw new Error("telegram: no bot_token configured");
    this.token = section.bot_token;
    this.apiRoot = section.api_root;
    this.api = createTelegramApi({ token: this.token, apiRoot: this.apiRoot, ...(options.fetch ? { fetch: options.fetch } : {}) });
  }

  async start(context: AdapterContext): Promise<void> {
    if (this.poller) return;
    // Belt and braces: whatever reaches the log, the logger itself also blanks the token.
    context.log.redactor.add(this.token);
    this.log = context.log;
    const offsets = new OffsetStore(context.db, botIdOf(this.token));
    this.poller = new Poller({
      api: this.api,
      token: this.token,
      offsets,
      log: context.log,
      ...(this.options.timeoutSeconds !== undefined ? { timeoutSeconds: this.options.timeoutSeconds } : {}),
      ...(this.options.backoff ? { backoff: this.options.backoff } : {}),
      deliver: async (updates, offset) => {
        // A press is decided — its code used up in SQLite — before the offset that acknowledges it is committed:
        // a crash in between has Telegram deliver it again (then refused as already used), never loses it.
        // Deciding waits for no turn (a turn may be waiting for it); only the presser's toast goes beside the loop.
        for (const press of toPresses(updates)) {
          const answer = await this.decide(press, context);
          void this.answer(press, answer);
        }
        await context.submit(toInboundBatch(updates, Date.now()), () => offsets.save(offset));
      },
    });
    // The loop runs in the background; start() returns at once so the daemon is not held by Telegram.
    this.poller.start();
  }

  async stop(): Promise<void> {
    await this.poller?.stop();
  }

  /** Hand a button press to the gateway: what the presser is told, and whether the buttons have served. */
  private async decide({ press }: TelegramPress, context: AdapterContext): Promise<{ text: string; done: boolean }> {
    if (!press || !context.press) return { text: "", done: false };
    try {
      const { text, done } = await context.press(press);
      return { text, done };
    } catch (error) {
      this.log.error("a button press failed", { error: describeError(error) });
      return { text: "That did not work; send the /confirm line instead.", done: false };
    }
  }

  /** Answer a press in the presser's client (and take the buttons off once they have served). */
  private async answer({ queryId, press }: TelegramPress, { text, done }: { text: string; done: boolean }): Promise<void> {
    await answerPressOnTelegram(
      this.api,
      queryId,
      { text, ...(press && done ? { clearFrom: { chatId: press.chatId, messageId: press.messageId } } : {}) },
      {
        token: this.token,
        log: this.log,
      },
    );
  }

  state(): ChannelRuntimeState {
    return this.poller?.state() ?? { status: "starting", process_alive: false, detail: "not started" };
  }

  replyPort(target: ReplyTarget): ReplyPort {
    return telegramReplyPort(target, {
      api: this.api,
      token: this.token,
      log: this.log,
      ...(this.options.maxRetryWaitMs !== undefined ? { maxRetryWaitMs: this.options.maxRetryWaitMs } : {}),
      ...(this.options.sleep ? { sleep: this.options.sleep } : {}),
    });
  }

  /** getFile for the path, then the download from `${api_root}/file/bot<token>/<path>`. */
  async fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia> {
    const cap = Math.min(this.inboundMediaCap, maxBytes ?? Number.POSITIVE_INFINITY);
    if (media.declaredSize !== undefined && media.declaredSize > cap) throw new MediaTooLarge(media.declaredSize, cap);
    let filePath: string | undefined;
    try {
      filePath = (await this.api.getFile(media.ref, grammySignal(signal))).file_path;
    } catch (error) {
      throw toApiError(error, this.token);
    }
    if (!filePath) throw new TelegramApiError("telegram getFile returned no file_path (the file may be too big to download)", "rejected");
    const { bytes, contentType } = await downloadFile({
      token: this.token,
      apiRoot: this.apiRoot,
      filePath,
      maxBytes: cap,
      ...(signal ? { signal } : {}),
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
    });
    const fetched: FetchedMedia = { bytes, mime: media.mime ?? contentType ?? "application/octet-stream" };
    if (media.filename) fetched.filename = media.filename;
    return fetched;
  }
}

/** The registry's factory: an adapter for the configured bot. */
export function telegramAdapter(config: Config): ChannelAdapter {
  return new TelegramAdapter(config);
}
