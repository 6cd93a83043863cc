/**
 * A loopback fake of the Telegram Bot API, for channel-adapter and
 * end-to-end tests (real servers on loopback, not mocks). It speaks the documented wire format
 * at `${url}/bot<token>/<method>` (JSON, GET query, or the multipart grammY
 * sends with `attach://` parts) and answers `{ok:true,result}` or
 * `{ok:false,error_code,description,parameters?}`.
 *
 * Methods: getMe, setWebhook, deleteWebhook, getWebhookInfo, getUpdates (real
 * long polling), sendMessage (with an inline keyboard in reply_markup),
 * editMessageText, editMessageReplyMarkup, deleteMessage, setMessageReaction,
 * sendChatAction, answerCallbackQuery, sendPhoto/Document/Voice/Audio/Video/
 * VideoNote/Sticker/Animation, getFile; files download from
 * `${url}/file/bot<token>/<file_path>`. Anything else answers 404 Not Found.
 *
 * State tests read:
 *   fake.requests / fake.calls("sendMessage")   every request, parsed (body, files, headers)
 *   fake.chat(chatId)                          the chat as the user sees it (ChatEntry[])
 *   fake.visibleTexts(chatId)                  current text/caption of the bot's undeleted messages
 *   fake.chatActions(chatId)                   sendChatAction calls
 *   fake.updates.lastOffset                    the offset of the latest getUpdates
 *   fake.callbackAnswers                       answerCallbackQuery calls, by query id
 * A user tapping an inline button (a callback_query update, as Telegram sends it):
 *   const queryId = fake.pressButton(chatId, messageId, { from: BOB, data })   data defaults to the first button's
 *   const answer = await fake.waitForCallbackAnswer(queryId)                    { text?, show_alert? }
 * Injections (each affects the next call(s) only):
 *   fake.rateLimitNext("sendMessage", 2)       429 "Too Many Requests: retry after 2"
 *   fake.rejectEntitiesNext("sendMessage")     400 can't parse entities, for a call with parse_mode set
 *   fake.conflictNext()                        409 on the next getUpdates
 *   fake.holdAnswer("sendMessage", 1)          the 2nd sendMessage is done, but its answer waits for release()
 *   fake.failNext("getFile", { error_code: 500, description: "Internal Server Error" })
 * An outage (every call fails until it ends; a held long poll is let go first):
 *   const outage = fake.outage()                502 Bad Gateway by default
 *   outage.end()
 *
 * Usage:
 *   const tg = startTelegramFake();
 *   const bot = new Bot(tg.token, { client: { apiRoot: tg.url } });
 *   tg.pushMessage(tg.message.text("hello"));          // a DM from ALICE
 *   tg.pushMessage(tg.message.photo({ caption: "look" }));
 *   await tg.waitForCall("sendMessage");
 *   expect(tg.visibleTexts(ALICE.id)).toEqual(["Hi!"]);
 *   await tg.stop();
 */
import type { Update, User } from "grammy/types";
import { FaultQueue, jsonReply, LoopbackServer, parseRequest, type RecordedRequest, waitFor } from "./recorder.ts";
import { ALICE, MessageBuilder } from "./telegram/builders.ts";
import { type ChatAction, type ChatEntry, ChatLog } from "./telegram/chats.ts";
import { type AddFileOptions, DOWNLOAD_LIMIT, FileStore } from "./telegram/files.ts";
import * as m from "./telegram/methods.ts";
import { type PollParams, type UpdateBody, UpdateQueue } from "./telegram/updates.ts";

export { ALICE, BOB, groupChat, privateChat } from "./telegram/builders.ts";
export type { ChatEntry } from "./telegram/chats.ts";
export { parseTelegramHtml } from "./telegram/html.ts";
export { ALLOWED_REACTIONS } from "./telegram/methods.ts";

export interface TelegramFakeOptions {
  /** Bot token; the numeric prefix becomes the bot's user id. */
  token?: string;
  username?: string;
  firstUpdateId?: number;
  /** Validate parse_mode HTML like the server (default true). */
  validateHtml?: boolean;
  /** false: getUpdates answers at once whatever timeout it is asked for (a server that does not hold long polls). */
  holdPolls?: boolean;
  /**
   * Unit for the 4096/1024 limits. Telegram says "characters"; whether that
   * means UTF-16 units or code points is not documented, so the
   * default is the stricter "utf16".
   */
  lengthUnit?: "utf16" | "codepoint";
  /** Cap on how long a long poll is held, whatever `timeout` asks (ms). */
  maxPollMs?: number;
}

export interface TgFailure {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number };
}

const CONFLICT: TgFailure = {
  error_code: 409,
  description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
};

export class TelegramFake {
  readonly token: string;
  readonly bot: User;
  readonly files = new FileStore();
  readonly chats = new ChatLog();
  readonly updates: UpdateQueue;
  /** Builders for realistic inbound messages (see telegram/builders.ts). */
  readonly message: MessageBuilder;
  /** The URL set by setWebhook; getUpdates refuses while it is set. */
  webhookUrl = "";
  /** answerCallbackQuery calls, by callback query id; a query is answered at most once. */
  readonly callbackAnswers = new Map<string, { text?: string; show_alert?: boolean }>();
  private readonly openQueries = new Set<string>();
  private queries = 0;
  private readonly http: LoopbackServer;
  private readonly faults = new FaultQueue<TgFailure>();
  private readonly entityFaults = new FaultQueue<string>();
  private readonly holds: Array<{ method: string; skip: number; released: Promise<void> }> = [];
  private readonly state: m.TelegramState;
  /** The status every call gets while the Bot API is down (see outage()). */
  private down: number | undefined;

  private readonly holdPolls: boolean;
  private readonly bareFaults = new FaultQueue<number>();

  constructor(opts: TelegramFakeOptions = {}) {
    this.holdPolls = opts.holdPolls ?? true;
    this.token = opts.token ?? "7000000001:AAFakeFermixTestTokenxxxxxxxxxxxxxxx";
    const id = Number(this.token.split(":")[0]) || 7000000001;
    this.bot = { id, is_bot: true, first_name: "Fermix Test", username: opts.username ?? "fermix_test_bot" };
    this.updates = new UpdateQueue(opts.firstUpdateId ?? 100000001, opts.maxPollMs);
    this.message = new MessageBuilder({ files: this.files, nextMessageId: (c) => this.chats.nextMessageId(c) });
    this.state = {
      bot: this.bot,
      chats: this.chats,
      files: this.files,
      validateHtml: opts.validateHtml ?? true,
      lengthUnit: opts.lengthUnit ?? "utf16",
    };
    this.http = new LoopbackServer((req, server) => this.handle(req, server));
  }

  /** The apiRoot: `http://127.0.0.1:<port>`, no trailing slash. */
  get url(): string {
    return this.http.url;
  }
  get requests(): RecordedRequest[] {
    return this.http.requests;
  }
  calls(method: string): RecordedRequest[] {
    return this.http.calls(method);
  }
  waitForCall(method: string, match?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest> {
    return this.http.waitForCall(method, match, timeoutMs);
  }
  waitForRequest(method: string, match?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest> {
    return this.http.waitForRequest(method, match, timeoutMs);
  }
  stop(): Promise<void> {
    // Let a held poll end quietly rather than with a connection reset.
    this.updates.release();
    return this.http.stop();
  }

  /** Queue an update (update_id assigned) and wake a waiting getUpdates. */
  pushUpdate(body: UpdateBody): Update {
    for (const msg of [body.message, body.edited_message, body.channel_post, body.edited_channel_post]) {
      if (msg) this.chats.recordInbound(msg);
    }
    return this.updates.push(body);
  }
  /** Shorthand for pushUpdate({ message }) over one or more messages (an album is several). */
  pushMessage(...messages: NonNullable<UpdateBody["message"]>[]): Update[] {
    return messages.map((message) => this.pushUpdate({ message }));
  }

  /**
   * A user taps a button under one of the bot's messages: a callback_query
   * update carrying the message (as the user's client has it) and the
   * button's callback_data. Returns the query id to wait for its answer.
   */
  pressButton(chatId: number | string, messageId: number, opts: { from?: User; data?: string } = {}): string {
    const entry = this.chats.find(String(chatId), messageId);
    if (!entry || entry.deleted) throw new Error(`no message ${messageId} in chat ${chatId} to press a button on`);
    const buttons = (entry.reply_markup?.inline_keyboard ?? []).flat() as Array<{ text: string; callback_data?: string }>;
    const data = opts.data ?? buttons[0]?.callback_data;
    if (data === undefined || !buttons.some((b) => b.callback_data === data)) throw new Error(`message ${messageId} has no button with data ${data}`);
    const id = String(4_000_000_000_000 + ++this.queries);
    this.openQueries.add(id);
    const from = opts.from ?? ALICE;
    this.updates.push({ callback_query: { id, from, message: entry.message, chat_instance: `ci-${chatId}`, data } } as UpdateBody);
    return id;
  }

  /** Resolves with the bot's answer to a button press. */
  waitForCallbackAnswer(queryId: string, timeoutMs = 5000): Promise<{ text?: string; show_alert?: boolean }> {
    return waitFor(() => this.callbackAnswers.get(queryId), { timeoutMs, what: `an answer to callback query ${queryId}` });
  }

  /** Register downloadable bytes; `size` overrides the reported file_size (to test caps cheaply). */
  addFile(file_id: string, bytes: Uint8Array | string, opts: AddFileOptions = {}): void {
    this.files.add(file_id, typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes, opts);
  }

  failNext(method: string, failure: TgFailure, times = 1): void {
    this.faults.add(method, failure, times);
  }
  /** The next `times` calls of `method` get a bare HTTP `status` with an HTML body, not a Bot API error (a proxy's page). */
  bareFailNext(method: string, status = 502, times = 1): void {
    this.bareFaults.add(method, status, times);
  }
  rateLimitNext(method: string, retryAfter = 1, times = 1): void {
    const description = `Too Many Requests: retry after ${retryAfter}`;
    this.faults.add(method, { error_code: 429, description, parameters: { retry_after: retryAfter } }, times);
  }
  /** The next call of `method` that sets parse_mode gets a parse error; a plain-text retry passes. */
  rejectEntitiesNext(method = "sendMessage", detail = 'Unsupported start tag "foo" at byte offset 0', times = 1): void {
    this.entityFaults.add(method, detail, times);
  }
  /**
   * The call of `method` after the next `skip` ones is carried out (the message
   * is in the chat) but its answer is withheld until `release()` — the client
   * never learns it succeeded, as when a sender dies mid-request.
   */
  holdAnswer(method: string, skip = 0): { release(): void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.push({ method, skip, released });
    return { release };
  }
  /**
   * Telegram down: until `end()`, every call (long polls included) is
   * answered with `status`, as a failing load balancer in front of the Bot
   * API does; a poll held when it starts is answered first, empty.
   */
  outage(status = 502): { end(): void } {
    this.down = status;
    this.updates.release();
    return {
      end: () => {
        this.down = undefined;
      },
    };
  }
  conflictNext(times = 1): void {
    this.faults.add("getUpdates", CONFLICT, times);
  }

  chat(chatId: number | string): ChatEntry[] {
    return this.chats.list(chatId);
  }
  botMessages(chatId: number | string): ChatEntry[] {
    return this.chat(chatId).filter((e) => e.sender === "bot");
  }
  visibleTexts(chatId: number | string): string[] {
    return this.botMessages(chatId)
      .filter((e) => !e.deleted)
      .map((e) => e.text ?? e.caption ?? "");
  }
  chatActions(chatId: number | string): ChatAction[] {
    return this.chats.actions.get(String(chatId)) ?? [];
  }
  /** Wait until the bot's visible messages in a chat satisfy `done`. */
  waitForTexts(chatId: number | string, done: (texts: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
    return waitFor(() => (done(this.visibleTexts(chatId)) ? this.visibleTexts(chatId) : undefined), {
      timeoutMs,
      what: `bot texts in chat ${chatId}`,
    });
  }

  private async handle(req: Request, server: Bun.Server<undefined>): Promise<Response> {
    const path = new URL(req.url).pathname;
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(path);
    if (file) return this.download(req, file[1]!, decodeURIComponent(file[2]!));
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(path);
    const record = await parseRequest(req, call?.[2] ?? "");
    // GET /bot…/method?chat_id=… is as valid as POST for the Bot API.
    if (req.method === "GET") Object.assign(record.body, record.query);
    this.http.requests.push(record);
    const fail = (f: TgFailure) => jsonReply(record, f.error_code, { ok: false, ...f });
    if (!call) return fail({ error_code: 404, description: "Not Found" });
    if (this.down !== undefined) return fail({ error_code: this.down, description: "Bad Gateway" });
    if (call[1] !== this.token) return fail({ error_code: 401, description: "Unauthorized" });
    if ("_invalid_json" in record.body) return fail({ error_code: 400, description: "Bad Request: can't parse JSON object" });
    const method = call[2]!;
    const bare = this.bareFaults.take(method);
    if (bare !== undefined) {
      // What a proxy in trouble sends: an HTML page, no Bot API error body.
      record.status = bare;
      return new Response(`<html><body><h1>${bare} Bad Gateway</h1></body></html>`, { status: bare, headers: { "content-type": "text/html" } });
    }
    const injected = this.faults.take(method);
    if (injected) return fail(injected);
    const params = new m.Params(record.body);
    if (params.str("parse_mode")) {
      const detail = this.entityFaults.take(method);
      if (detail) return fail({ error_code: 400, description: `Bad Request: can't parse entities: ${detail}` });
    }
    try {
      if (method === "getUpdates") server.timeout(req, 0);
      const result = await this.dispatch(method, params, record, req.signal);
      const hold = this.holds.find((h) => h.method === method);
      if (hold && hold.skip-- === 0) {
        this.holds.splice(this.holds.indexOf(hold), 1);
        await hold.released;
      }
      return jsonReply(record, 200, { ok: true, result });
    } catch (e) {
      if (e instanceof m.TgError) return fail({ error_code: e.error_code, description: e.description, parameters: e.parameters });
      throw e;
    }
  }

  private async dispatch(method: string, p: m.Params, record: RecordedRequest, signal: AbortSignal): Promise<unknown> {
    switch (method) {
      case "getMe":
        return {
          ...this.bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
          can_connect_to_business: false,
          has_main_web_app: false,
        };
      case "setWebhook":
        this.webhookUrl = p.str("url") ?? "";
        return true;
      case "deleteWebhook":
        this.webhookUrl = "";
        if (p.bool("drop_pending_updates")) this.updates.drop();
        return true;
      case "getWebhookInfo":
        return { url: this.webhookUrl, has_custom_certificate: false, pending_update_count: this.updates.size };
      case "getUpdates":
        return this.getUpdates(p, signal);
      case "sendMessage":
        return m.sendMessage(this.state, p);
      case "editMessageText":
        return m.editMessageText(this.state, p);
      case "deleteMessage":
        return m.deleteMessage(this.state, p);
      case "setMessageReaction":
        return m.setMessageReaction(this.state, p);
      case "sendChatAction":
        return m.sendChatAction(this.state, p);
      case "getFile":
        return this.getFile(p);
      case "editMessageReplyMarkup":
        return m.editMessageReplyMarkup(this.state, p);
      case "answerCallbackQuery":
        return this.answerCallbackQuery(p);
    }
    if (method in m.MEDIA_METHODS) return m.sendMedia(this.state, p, method, record.files);
    throw new m.TgError(404, "Not Found");
  }

  private async getUpdates(p: m.Params, signal: AbortSignal): Promise<Update[]> {
    if (this.webhookUrl) {
      throw new m.TgError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    }
    const params: PollParams = { offset: p.num("offset"), limit: p.num("limit"), timeout: this.holdPolls ? p.num("timeout") : 0 };
    const allowed = p.obj<string[]>("allowed_updates");
    if (allowed !== undefined) params.allowed_updates = allowed;
    const outcome = await this.updates.poll(params, signal);
    if (outcome.kind === "conflict") throw new m.TgError(CONFLICT.error_code, CONFLICT.description);
    return outcome.updates;
  }

  private answerCallbackQuery(p: m.Params): true {
    const id = p.str("callback_query_id") ?? "";
    if (!this.openQueries.delete(id)) throw new m.TgError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid");
    const text = p.str("text");
    if (text !== undefined && [...text].length > 200) throw new m.TgError(400, "Bad Request: MESSAGE_TOO_LONG");
    this.callbackAnswers.set(id, { ...(text !== undefined ? { text } : {}), ...(p.bool("show_alert") ? { show_alert: true } : {}) });
    return true;
  }

  private getFile(p: m.Params) {
    const stored = this.files.get(p.str("file_id") ?? "");
    if (!stored) throw new m.TgError(400, "Bad Request: invalid file_id");
    if (stored.size > DOWNLOAD_LIMIT) throw new m.TgError(400, "Bad Request: file is too big");
    return this.files.describe(stored);
  }

  private async download(req: Request, token: string, filePath: string): Promise<Response> {
    const record = await parseRequest(req, "file");
    this.http.requests.push(record);
    const injected = this.faults.take("file");
    if (injected) return jsonReply(record, injected.error_code, { ok: false, ...injected });
    const stored = token === this.token ? this.files.byFilePath(filePath) : undefined;
    if (!stored) return jsonReply(record, 404, { ok: false, error_code: 404, description: "Not Found" });
    record.status = 200;
    return new Response(stored.bytes, {
      headers: { "content-type": stored.mime_type ?? "application/octet-stream", "content-length": String(stored.bytes.byteLength) },
    });
  }
}

/** Start a Telegram fake on 127.0.0.1, port 0. */
export function startTelegramFake(opts?: TelegramFakeOptions): TelegramFake {
  return new TelegramFake(opts);
}
