/**
 * A loopback fake of the Slack Web API, for channel-adapter and end-to-end
 * tests (real servers on loopback, not mocks). It answers `${url}/api/<method>` the way
 * @slack/web-api 8.2.0 calls it (POST, form-urlencoded with objects
 * JSON-stringified, `Authorization: Bearer <token>`; JSON bodies and a
 * `token` field work too) with `{ok:true,...}` or `{ok:false,error}` at HTTP
 * 200, and 429 with `Retry-After` when rate limiting is injected.
 *
 * Methods: auth.test, chat.postMessage, chat.update, chat.delete,
 * reactions.add, reactions.remove, files.getUploadURLExternal, the upload
 * POST to upload_url (`${url}/upload/v1/<file_id>`, answers 200 "OK - <n>"),
 * files.completeUploadExternal. Private files are served at their
 * url_private (`${url}/files-pri/…`) only with the right Bearer token (401
 * otherwise). Anything else answers `unknown_method`.
 *
 * State tests read:
 *   fake.requests / fake.calls("chat.postMessage")   parsed requests (form fields are strings)
 *   fake.messages(channel, thread_ts?)               the channel (or one thread) as a user sees it
 *   fake.visibleTexts(channel, thread_ts?)           current text of the bot's undeleted messages
 *   fake.files.uploads                               upload flow state per file_id
 * Injections (next call(s) only):
 *   fake.rateLimitNext("chat.postMessage", 1)        HTTP 429, Retry-After: 1, {ok:false,error:"ratelimited"}
 *   fake.failNext("chat.postMessage", "msg_too_long") or "invalid_blocks", "channel_not_found", …
 *   fake.failUploadNext(500)                         the upload POST answers that HTTP status
 *   fake.neverAnswerNext("chat.postMessage")         carried out (the message is in the channel), never answered
 *
 * Usage:
 *   const slack = startSlackFake();
 *   const client = new WebClient(slack.token, { slackApiUrl: slack.apiUrl });
 *   const file = slack.addFile({ name: "a.txt", mimetype: "text/plain", bytes: "hello" });
 *   const body = slack.events.fileShare([file], "what is this?");   // POST it, signed, to the daemon
 *   await slack.waitForCall("chat.postMessage");
 *   expect(slack.visibleTexts(SLACK_DM)).toEqual(["It says hello."]);
 *   await slack.stop();
 */
import type { Server } from "bun";
import { FaultQueue, jsonReply, LoopbackServer, parseRequest, type RecordedRequest, waitFor } from "./recorder.ts";
import { type Args, decodeArgs, SlackError, str, validBlocks } from "./slack/args.ts";
import { SlackEventBuilder, type SlackFile } from "./slack/events.ts";
import { SlackFileStore } from "./slack/files.ts";

export { SLACK_ALICE, SLACK_CHANNEL, SLACK_DM, type SlackFile } from "./slack/events.ts";

export interface SlackFakeOptions {
  token?: string;
  teamId?: string;
  botUserId?: string;
  botId?: string;
  appId?: string;
  /** chat.postMessage / chat.update answer msg_too_long above this many characters (default 40,000). */
  textLimit?: number;
}

export interface SlackEntry {
  channel: string;
  ts: string;
  thread_ts?: string;
  sender: "bot" | "user";
  user: string;
  /** Current text (after chat.update). */
  text: string;
  blocks?: unknown[];
  files?: SlackFile[];
  /** Earlier texts, one per chat.update. */
  history: string[];
  deleted: boolean;
  /** Reaction names the bot added. */
  reactions: string[];
  /** The arguments of the call that created it, decoded. */
  args: Record<string, unknown>;
}

export class SlackFake {
  readonly token: string;
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  readonly files: SlackFileStore;
  readonly events: SlackEventBuilder;
  private readonly textLimit: number;
  private readonly http: LoopbackServer;
  private readonly store = new Map<string, SlackEntry[]>();
  private readonly faults = new FaultQueue<{ status: number; body: Record<string, unknown>; headers?: Record<string, string> }>();
  private readonly unanswered = new FaultQueue<true>();
  private lastMicros = 0;
  private down: number | undefined;

  constructor(opts: SlackFakeOptions = {}) {
    this.token = opts.token ?? "xoxb-0000000001-0000000002-FermixFakeSlackToken";
    this.teamId = opts.teamId ?? "T0FERMIX001";
    this.botUserId = opts.botUserId ?? "U0FERMIXBOT";
    this.botId = opts.botId ?? "B0FERMIXBOT";
    this.appId = opts.appId ?? "A0FERMIXAPP";
    this.textLimit = opts.textLimit ?? 40_000;
    this.files = new SlackFileStore(() => this.url, this.teamId);
    this.events = new SlackEventBuilder({
      teamId: this.teamId,
      appId: this.appId,
      botUserId: this.botUserId,
      nextTs: () => this.nextTs(),
      recordInbound: (channel, event) => this.recordInbound(channel, event),
    });
    this.http = new LoopbackServer((req, server) => this.handle(req, server));
  }

  get url(): string {
    return this.http.url;
  }
  /** What to pass as `slackApiUrl` (trailing slash included, as the client expects). */
  get apiUrl(): string {
    return `${this.http.url}/api/`;
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
  stop(): Promise<void> {
    return this.http.stop();
  }

  /** Host a private file (for inbound file_share events). */
  addFile(opts: { name: string; bytes: Uint8Array | string; mimetype?: string; size?: number; title?: string; user?: string }): SlackFile {
    const bytes = typeof opts.bytes === "string" ? new TextEncoder().encode(opts.bytes) : opts.bytes;
    return this.files.add({ ...opts, bytes });
  }

  /** Every message in a channel, or only one thread (its parent and replies). */
  messages(channel: string, thread_ts?: string): SlackEntry[] {
    const all = this.store.get(channel) ?? [];
    return thread_ts === undefined ? all : all.filter((e) => e.ts === thread_ts || e.thread_ts === thread_ts);
  }
  visibleTexts(channel: string, thread_ts?: string): string[] {
    return this.messages(channel, thread_ts)
      .filter((e) => e.sender === "bot" && !e.deleted)
      .map((e) => e.text);
  }
  waitForTexts(channel: string, done: (texts: string[]) => boolean, thread_ts?: string, timeoutMs = 5000): Promise<string[]> {
    return waitFor(() => (done(this.visibleTexts(channel, thread_ts)) ? this.visibleTexts(channel, thread_ts) : undefined), {
      timeoutMs,
      what: `bot texts in ${channel}`,
    });
  }

  failNext(method: string, error: string, extra: Record<string, unknown> = {}, times = 1): void {
    this.faults.add(method, { status: 200, body: { ok: false, error, ...extra } }, times);
  }
  rateLimitNext(method: string, retryAfter = 1, times = 1): void {
    this.faults.add(method, { status: 429, body: { ok: false, error: "ratelimited" }, headers: { "retry-after": String(retryAfter) } }, times);
  }
  /**
   * A Slack outage: until `end()`, every Web API call is answered with
   * `status` and a plain-text body (what a load balancer in trouble sends).
   */
  outage(status = 500): { end(): void } {
    this.down = status;
    return {
      end: () => {
        this.down = undefined;
      },
    };
  }
  /** The next `method` call is answered with `status`, as a Slack server in trouble answers. */
  serverErrorNext(method: string, status = 500, times = 1): void {
    this.faults.add(method, { status, body: { ok: false, error: "internal_error" } }, times);
  }
  /**
   * The next `method` call is carried out — a posted message is in the
   * channel — but its answer never comes: the client waits until it gives up
   * or dies, never learning that it succeeded.
   */
  neverAnswerNext(method: string): void {
    this.unanswered.add(method, true);
  }
  failUploadNext(status = 500, times = 1): void {
    this.faults.add("upload", { status, body: { ok: false, error: "upload_failed" } }, times);
  }

  /** Slack timestamps: "<seconds>.<6 digits>", unique and increasing. */
  nextTs(): string {
    this.lastMicros = Math.max(Date.now() * 1000, this.lastMicros + 1);
    return `${Math.floor(this.lastMicros / 1e6)}.${String(this.lastMicros % 1e6).padStart(6, "0")}`;
  }

  private recordInbound(channel: string, event: Record<string, unknown>): void {
    this.add({
      channel,
      ts: String(event.ts),
      thread_ts: str(event.thread_ts),
      sender: "user",
      user: String(event.user),
      text: String(event.text ?? ""),
      files: event.files as SlackFile[] | undefined,
      history: [],
      deleted: false,
      reactions: [],
      args: event,
    });
  }

  private add(entry: SlackEntry): SlackEntry {
    const list = this.store.get(entry.channel) ?? [];
    list.push(entry);
    this.store.set(entry.channel, list);
    return entry;
  }

  private find(channel: unknown, ts: unknown): SlackEntry {
    const entry = this.store.get(String(channel))?.find((e) => e.ts === String(ts));
    if (!entry || entry.deleted) throw new SlackError("message_not_found");
    return entry;
  }

  private async handle(req: Request, server: Server<undefined>): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (path.startsWith("/files-pri/")) return this.servePrivate(req, path);
    if (path.startsWith("/upload/v1/")) return this.receiveUpload(req, path.slice("/upload/v1/".length));
    const method = /^\/api\/([A-Za-z.]+)$/.exec(path)?.[1] ?? "";
    const record = await parseRequest(req, method);
    if (req.method === "GET") Object.assign(record.body, record.query);
    this.http.requests.push(record);
    if (this.down !== undefined) {
      record.status = this.down;
      return new Response("upstream unavailable", { status: this.down, headers: { "content-type": "text/plain" } });
    }
    const fault = this.faults.take(method);
    if (fault) return jsonReply(record, fault.status, fault.body, fault.headers);
    const bearer = /^Bearer\s+(.+)$/i.exec(record.headers.authorization ?? "")?.[1] ?? str(record.body.token);
    if (!bearer) return jsonReply(record, 200, { ok: false, error: "not_authed" });
    if (bearer !== this.token) return jsonReply(record, 200, { ok: false, error: "invalid_auth" });
    try {
      const result = this.dispatch(method, decodeArgs(record.body));
      if (this.unanswered.take(method)) {
        server.timeout(req, 0);
        return new Promise<Response>(() => {});
      }
      return jsonReply(record, 200, { ok: true, ...result });
    } catch (e) {
      if (e instanceof SlackError) return jsonReply(record, 200, { ok: false, error: e.error, ...e.extra });
      throw e;
    }
  }

  private dispatch(method: string, a: Args): Record<string, unknown> {
    switch (method) {
      case "auth.test":
        return {
          url: "https://fermix-test.slack.com/",
          team: "Fermix Test",
          user: "fermix",
          team_id: this.teamId,
          user_id: this.botUserId,
          bot_id: this.botId,
          is_enterprise_install: false,
        };
      case "chat.postMessage":
        return this.postMessage(a);
      case "chat.update":
        return this.update(a);
      case "chat.delete": {
        const entry = this.find(a.channel, a.ts);
        if (entry.sender !== "bot") throw new SlackError("cant_delete_message");
        entry.deleted = true;
        return { channel: entry.channel, ts: entry.ts };
      }
      case "reactions.add":
      case "reactions.remove":
        return this.react(method, a);
      case "files.getUploadURLExternal":
        return this.uploadUrl(a);
      case "files.completeUploadExternal":
        return this.completeUpload(a);
    }
    throw new SlackError("unknown_method");
  }

  /** text / blocks / markdown_text checks shared by postMessage and update. */
  private content(a: Args): { text: string; blocks?: unknown[] } {
    const text = str(a.text);
    const markdown = str(a.markdown_text);
    if (markdown !== undefined && (text !== undefined || a.blocks !== undefined)) throw new SlackError("markdown_text_conflict");
    if (a.blocks !== undefined && !validBlocks(a.blocks)) throw new SlackError("invalid_blocks", { errors: ["invalid_blocks_format"] });
    if (text === undefined && markdown === undefined && a.blocks === undefined && a.attachments === undefined) throw new SlackError("no_text");
    const shown = text ?? markdown ?? "";
    if (shown.length > (markdown !== undefined ? 12_000 : this.textLimit)) throw new SlackError("msg_too_long");
    return a.blocks === undefined ? { text: shown } : { text: shown, blocks: a.blocks as unknown[] };
  }

  private botMessage(entry: SlackEntry): Record<string, unknown> {
    const message: Record<string, unknown> = {
      user: this.botUserId,
      type: "message",
      ts: entry.ts,
      bot_id: this.botId,
      app_id: this.appId,
      text: entry.text,
      team: this.teamId,
      bot_profile: { id: this.botId, app_id: this.appId, name: "Fermix", deleted: false, team_id: this.teamId },
    };
    if (entry.blocks) message.blocks = entry.blocks;
    if (entry.files) message.files = entry.files;
    if (entry.thread_ts) {
      const parent = this.store.get(entry.channel)?.find((e) => e.ts === entry.thread_ts);
      Object.assign(message, { thread_ts: entry.thread_ts, parent_user_id: parent?.user ?? this.botUserId });
    }
    return message;
  }

  private postMessage(a: Args): Record<string, unknown> {
    const channel = str(a.channel);
    if (!channel) throw new SlackError("channel_not_found");
    const { text, blocks } = this.content(a);
    const thread_ts = str(a.thread_ts);
    const entry = this.add({
      channel,
      ts: this.nextTs(),
      thread_ts,
      sender: "bot",
      user: this.botUserId,
      text,
      blocks,
      history: [],
      deleted: false,
      reactions: [],
      args: a,
    });
    return { channel, ts: entry.ts, message: this.botMessage(entry) };
  }

  private update(a: Args): Record<string, unknown> {
    const entry = this.find(a.channel, a.ts);
    if (entry.sender !== "bot") throw new SlackError("cant_update_message");
    const { text, blocks } = this.content(a);
    entry.history.push(entry.text);
    entry.text = text;
    entry.blocks = blocks;
    return { channel: entry.channel, ts: entry.ts, text, message: this.botMessage(entry) };
  }

  private react(method: string, a: Args): Record<string, unknown> {
    if (a.channel === undefined || a.timestamp === undefined) throw new SlackError("no_item_specified");
    const name = str(a.name) ?? "";
    // Shortcode names only: no colons, no Unicode emoji; skin tones as `thumbsup::skin-tone-2`.
    if (!/^[a-z0-9_+\-']+(::skin-tone-[2-6])?$/.test(name)) throw new SlackError("invalid_name");
    const entry = this.find(a.channel, a.timestamp);
    const has = entry.reactions.includes(name);
    if (method === "reactions.add") {
      if (has) throw new SlackError("already_reacted");
      entry.reactions.push(name);
    } else {
      if (!has) throw new SlackError("no_reaction");
      entry.reactions = entry.reactions.filter((r) => r !== name);
    }
    return {};
  }

  private uploadUrl(a: Args): Record<string, unknown> {
    const filename = str(a.filename);
    const length = Number(a.length);
    if (!filename || !Number.isInteger(length) || length <= 0) throw new SlackError("invalid_arguments");
    const file_id = this.files.newFileId();
    this.files.uploads.set(file_id, { file_id, filename, length, alt_txt: str(a.alt_txt), completed: false });
    return { upload_url: `${this.url}/upload/v1/${file_id}`, file_id };
  }

  private completeUpload(a: Args): Record<string, unknown> {
    const list = a.files;
    if (!Array.isArray(list) || list.length === 0) throw new SlackError("invalid_arguments");
    const shared: SlackFile[] = [];
    for (const item of list as Array<{ id?: string; title?: string }>) {
      const upload = this.files.uploads.get(item.id ?? "");
      if (!upload?.bytes || upload.completed) throw new SlackError("file_not_found");
      upload.completed = true;
      const mimetype = upload.part?.type && upload.part.type !== "application/octet-stream" ? upload.part.type : undefined;
      shared.push(
        this.files.add({
          id: upload.file_id,
          name: upload.filename,
          title: item.title ?? upload.filename,
          bytes: upload.bytes,
          mimetype,
          user: this.botUserId,
        }),
      );
    }
    const channel = str(a.channel_id) ?? str(a.channels)?.split(",")[0];
    if (channel) {
      const thread_ts = str(a.thread_ts);
      this.add({
        channel,
        ts: this.nextTs(),
        thread_ts,
        sender: "bot",
        user: this.botUserId,
        text: str(a.initial_comment) ?? "",
        files: shared,
        history: [],
        deleted: false,
        reactions: [],
        args: a,
      });
    }
    return { files: shared.map((f) => ({ id: f.id, title: f.title, name: f.name, mimetype: f.mimetype, size: f.size, url_private: f.url_private })) };
  }

  /** The upload POST: multipart with the bytes in a part named `body` (raw bodies are accepted too). */
  private async receiveUpload(req: Request, fileId: string): Promise<Response> {
    const record = await parseRequest(req, "upload");
    this.http.requests.push(record);
    const fault = this.faults.take("upload");
    const reply = (status: number, text: string) => {
      record.status = status;
      return new Response(text, { status, headers: { "content-type": "text/plain" } });
    };
    if (fault) return reply(fault.status, "upload failed");
    const upload = this.files.uploads.get(fileId);
    if (!upload) return reply(404, "Not Found");
    const part = record.files.find((f) => f.field === "body") ?? record.files[0];
    if (record.encoding === "multipart" && !part) return reply(400, "no file part");
    upload.bytes = part ? part.bytes : new Uint8Array(0);
    if (part) upload.part = { field: part.field, filename: part.filename, type: part.type };
    return reply(200, `OK - ${upload.bytes.byteLength}`);
  }

  /** url_private downloads need the bot token as a Bearer header. */
  private async servePrivate(req: Request, path: string): Promise<Response> {
    const record = await parseRequest(req, "files-pri");
    this.http.requests.push(record);
    const fault = this.faults.take("files-pri");
    if (fault) return jsonReply(record, fault.status, fault.body, fault.headers);
    const bearer = /^Bearer\s+(.+)$/i.exec(record.headers.authorization ?? "")?.[1];
    if (bearer !== this.token) {
      record.status = 401;
      return new Response("Unauthorized", { status: 401 });
    }
    const hit = this.files.byPrivatePath(path);
    if (!hit) {
      record.status = 404;
      return new Response("Not Found", { status: 404 });
    }
    record.status = 200;
    return new Response(hit.bytes, { headers: { "content-type": hit.file.mimetype, "content-length": String(hit.bytes.byteLength) } });
  }
}

/** Start a Slack fake on 127.0.0.1, port 0. */
export function startSlackFake(opts?: SlackFakeOptions): SlackFake {
  return new SlackFake(opts);
}
