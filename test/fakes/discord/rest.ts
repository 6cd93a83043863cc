/**
 * The REST half of the Discord fake: the routes a bot's replies use, under
 * `/api/v10`, checked the way Discord checks them (its developer docs):
 * `Authorization: Bot <token>` (401 otherwise), content at most 2,000
 * characters (400, code 50035), not empty (400, 50006), flags limited to
 * what a bot may set, files at most 10 MB (413, 40005), unknown messages 404
 * (10008). Every answer carries `X-RateLimit-*` headers for its route's
 * bucket; a test can empty a bucket or script a 429 (with `retry_after` and
 * the `global` flag) or any failure for the next call. Attachments users
 * "sent" are served from `/attachments/…` like Discord's CDN: no token needed.
 * Messages may carry buttons (`components`); presses and their callbacks
 * are interactions.ts's, reached at `/interactions/{id}/{token}/callback`
 * without the bot token, as on Discord.
 */
import { type APIAttachment, type APIMessage, MessageFlags } from "discord-api-types/v10";
import { FaultQueue, jsonReply, parseRequest, type RecordedFile, type RecordedRequest } from "../recorder.ts";
import { DISCORD_BOT, type Snowflakes } from "./builders.ts";
import { componentsError, FakeInteractions } from "./interactions.ts";

/** A message in a channel, as a person there sees it. */
export interface FakeMessage {
  id: string;
  channelId: string;
  sender: "bot" | "user";
  authorId: string;
  /** Current content (after edits). */
  content: string;
  /** Earlier contents, one per edit. */
  history: string[];
  flags: number;
  allowedMentions?: unknown;
  messageReference?: { message_id?: string; channel_id?: string; fail_if_not_exists?: boolean };
  files: RecordedFile[];
  attachments: APIAttachment[];
  reactions: string[];
  /** Current message components (action rows of buttons), as last set. */
  components: unknown[];
  deleted: boolean;
  /** When the fake stored it (and when it was deleted). */
  at: number;
  deletedAt?: number;
}

interface Fault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The flags a bot may set on a new message. */
const SETTABLE_FLAGS = MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications;
export const FAKE_TEXT_LIMIT = 2000;
export const FAKE_FILE_LIMIT = 10 * 1024 * 1024;

const formError = (field: string, message: string) => ({
  message: "Invalid Form Body",
  code: 50035,
  errors: { [field]: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message }] } },
});

/**
 * The `attachments` of a message create as Discord's OpenAPI spec has them
 * (MessageAttachmentRequest): an array of objects whose `id` is a string —
 * for a new upload the `n` of its `files[n]` part, written as a string. A
 * number is refused as a value of the wrong type (400, Invalid Form Body),
 * and an id must name a part that was sent.
 */
function attachmentsError(attachments: unknown, parts: readonly string[]): { status: number; body: unknown } | undefined {
  if (attachments === undefined) return undefined;
  const refuse = (where: string, code: string, message: string) => ({
    status: 400,
    body: {
      message: "Invalid Form Body",
      code: 50035,
      errors: { attachments: where === "" ? { _errors: [{ code, message }] } : { [where]: { id: { _errors: [{ code, message }] } } } },
    },
  });
  if (!Array.isArray(attachments)) return refuse("", "MODEL_TYPE_CONVERT", "Only iterables may be used in a ListType");
  for (const [index, attachment] of attachments.entries()) {
    const id = (attachment as { id?: unknown } | null)?.id;
    if (typeof id !== "string") return refuse(String(index), "STRING_TYPE_CONVERT", "Must be a string.");
    if (!/^\d+$/.test(id)) return refuse(String(index), "NUMBER_TYPE_COERCE", `Value "${id}" is not snowflake.`);
    // A new message has only new uploads: each id names its part.
    if (!parts.includes(`files[${id}]`)) return refuse(String(index), "ATTACHMENT_NOT_FOUND", `No file part files[${id}] was uploaded.`);
  }
  return undefined;
}

export class FakeRest {
  readonly requests: RecordedRequest[] = [];
  readonly messages: FakeMessage[] = [];
  readonly faults = new FaultQueue<Fault>();
  readonly interactions: FakeInteractions;
  private readonly cdn = new Map<string, { bytes: Uint8Array; type: string }>();
  /** Route → the remaining/reset-after the next answer on it announces (once). */
  private readonly buckets = new Map<string, { remaining: number; resetAfter: number }>();

  constructor(
    private readonly token: () => string,
    private readonly baseUrl: () => string,
    private readonly ids: Snowflakes,
    private readonly gatewayBot: () => unknown,
  ) {
    this.interactions = new FakeInteractions(ids, {
      apiMessage: (channelId, id) => {
        const message = this.find(channelId, id);
        return message?.sender === "bot" ? (this.apiMessage(message) as unknown as APIMessage) : undefined;
      },
      update: (channelId, id, data) => this.update(channelId, id, data),
      post: (channelId, content) => void this.messages.push(this.botMessage(channelId, content, 0)),
    });
  }

  /** Host bytes as a user's attachment; returns the attachment object a MESSAGE_CREATE carries (`size` overrides the declared size, to test caps cheaply). */
  addAttachment(channelId: string, filename: string, bytes: Uint8Array, contentType?: string, size = bytes.byteLength): APIAttachment {
    const id = this.ids.next();
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
    this.cdn.set(path, { bytes, type: contentType ?? "application/octet-stream" });
    return {
      id,
      filename,
      size,
      url: `${this.baseUrl()}${path}?ex=65f0a1b2&is=65de2c32&hm=fake`,
      proxy_url: `${this.baseUrl()}${path}`,
      ...(contentType ? { content_type: contentType } : {}),
    };
  }

  /** Record a user's message (what a MESSAGE_CREATE announced), so replies and reactions can target it. */
  addUserMessage(id: string, channelId: string, authorId: string, content: string, attachments: APIAttachment[] = []): void {
    this.messages.push({
      id,
      channelId,
      sender: "user",
      authorId,
      content,
      history: [],
      flags: 0,
      files: [],
      attachments,
      reactions: [],
      components: [],
      deleted: false,
      at: Date.now(),
    });
  }

  /** The next answer on `api` announces `remaining` calls left, refilling after `resetAfter` seconds. */
  setBucket(api: string, remaining: number, resetAfter: number): void {
    this.buckets.set(api, { remaining, resetAfter });
  }

  async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/attachments/")) return this.serveAttachment(req, url.pathname);
    const path = url.pathname.replace(/^\/api\/v10/, "");
    const route = this.route(req.method, path);
    const record = await parseRequest(req, route.api);
    if (record.encoding === "multipart" && typeof record.body.payload_json === "string") {
      try {
        record.body = { ...(JSON.parse(record.body.payload_json) as Record<string, unknown>), payload_json: record.body.payload_json };
      } catch {
        record.body = { _invalid_json: record.body.payload_json };
      }
    }
    this.requests.push(record);
    const headers = this.rateHeaders(route.api);
    // A fault queued for `<api>+files` hits only a call that uploads files (see failUploadsNext).
    const fault = (record.files.length > 0 ? this.faults.take(`${route.api}+files`) : undefined) ?? this.faults.take(route.api);
    if (fault) return this.reply(record, fault.status, fault.body, { ...headers, ...fault.headers });
    // An interaction's token authenticates its callback: the bot token is neither needed nor checked.
    if (route.api === "interactions.callback") {
      const answer = this.interactions.callback(route.interactionId!, route.interactionToken!, record);
      return this.reply(record, answer.status, answer.body, headers);
    }
    if (record.headers.authorization !== `Bot ${this.token()}`) return this.reply(record, 401, { message: "401: Unauthorized", code: 0 }, headers);
    const answer = this.answer(route, record);
    return this.reply(record, answer.status, answer.body, headers);
  }

  /**
   * Answer the next `times` calls on `api` that upload files (multipart with
   * `files[n]` parts) with Discord's 500 (`{ message: "500: Internal Server
   * Error", code: 0 }`); the same calls without files go through.
   */
  failUploadsNext(api = "messages.create", times = 1, status = 500): void {
    this.faults.add(`${api}+files`, { status, body: { message: `${status}: Internal Server Error`, code: 0 } }, times);
  }

  /** Script a 429 for the next call on `api`: Discord's body and headers, bucket- or globally scoped. */
  rateLimitNext(api: string, retryAfterSeconds: number, global = false): void {
    this.faults.add(api, {
      status: 429,
      body: { message: "You are being rate limited.", retry_after: retryAfterSeconds, global },
      headers: {
        "retry-after": String(Math.ceil(retryAfterSeconds)),
        "x-ratelimit-scope": global ? "global" : "user",
        ...(global ? { "x-ratelimit-global": "true" } : { "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": String(retryAfterSeconds) }),
      },
    });
  }

  private route(
    method: string,
    path: string,
  ): { api: string; channelId?: string; messageId?: string; emoji?: string; interactionId?: string; interactionToken?: string } {
    if (method === "GET" && path === "/gateway/bot") return { api: "gateway.bot" };
    const interaction = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path);
    if (interaction && method === "POST") return { api: "interactions.callback", interactionId: interaction[1]!, interactionToken: interaction[2]! };
    const messages = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (messages && method === "POST") return { api: "messages.create", channelId: messages[1]! };
    const typing = /^\/channels\/(\d+)\/typing$/.exec(path);
    if (typing && method === "POST") return { api: "typing", channelId: typing[1]! };
    const reaction = /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/.exec(path);
    if (reaction && method === "PUT") {
      return { api: "reactions.add", channelId: reaction[1]!, messageId: reaction[2]!, emoji: decodeURIComponent(reaction[3]!) };
    }
    const message = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
    if (message) {
      if (method === "PATCH") return { api: "messages.edit", channelId: message[1]!, messageId: message[2]! };
      if (method === "DELETE") return { api: "messages.delete", channelId: message[1]!, messageId: message[2]! };
    }
    return { api: `unknown ${method} ${path}` };
  }

  private answer(route: ReturnType<FakeRest["route"]>, record: RecordedRequest): { status: number; body?: unknown } {
    switch (route.api) {
      case "gateway.bot":
        return { status: 200, body: this.gatewayBot() };
      case "messages.create":
        return this.create(route.channelId!, record);
      case "messages.edit": {
        const refused = this.update(route.channelId!, route.messageId!, record.body);
        if (refused) return refused;
        return { status: 200, body: this.apiMessage(this.find(route.channelId!, route.messageId!)!) };
      }
      case "messages.delete": {
        const message = this.find(route.channelId!, route.messageId!);
        if (!message) return unknownMessage();
        message.deleted = true;
        message.deletedAt = Date.now();
        return { status: 204 };
      }
      case "reactions.add": {
        const message = this.find(route.channelId!, route.messageId!);
        if (!message) return unknownMessage();
        const emoji = route.emoji!;
        if (!/\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(emoji) && !/^[\w-]+:\d+$/.test(emoji)) {
          return { status: 400, body: { message: "Unknown Emoji", code: 10014 } };
        }
        if (!message.reactions.includes(emoji)) message.reactions.push(emoji);
        return { status: 204 };
      }
      case "typing":
        return { status: 204 };
    }
    return { status: 404, body: { message: "404: Not Found", code: 0 } };
  }

  /** An edit (PATCH, or an interaction's type 7 answer): content, the embeds flag and components, each when given; null when done. */
  private update(channelId: string, messageId: string, body: Record<string, unknown>): { status: number; body?: unknown } | null {
    const message = this.find(channelId, messageId);
    if (!message) return unknownMessage();
    if (message.sender !== "bot") return { status: 403, body: { message: "Cannot edit a message authored by another user", code: 50005 } };
    const refused = componentsError(body.components);
    if (refused) return refused;
    const content = body.content;
    if (typeof content === "string") {
      if (content.length > FAKE_TEXT_LIMIT) return { status: 400, body: formError("content", `Must be ${FAKE_TEXT_LIMIT} or fewer in length.`) };
      message.history.push(message.content);
      message.content = content;
    }
    if (typeof body.flags === "number") message.flags = (message.flags & ~MessageFlags.SuppressEmbeds) | (body.flags & MessageFlags.SuppressEmbeds);
    if (Array.isArray(body.components)) message.components = body.components;
    return null;
  }

  /** A new message from the bot. */
  private botMessage(channelId: string, content: string, flags: number): FakeMessage {
    return {
      id: this.ids.next(),
      channelId,
      sender: "bot",
      authorId: DISCORD_BOT.id,
      content,
      history: [],
      flags,
      files: [],
      attachments: [],
      reactions: [],
      components: [],
      deleted: false,
      at: Date.now(),
    };
  }

  private create(channelId: string, record: RecordedRequest): { status: number; body?: unknown } {
    const body = record.body;
    const content = typeof body.content === "string" ? body.content : "";
    if (content.length > FAKE_TEXT_LIMIT) return { status: 400, body: formError("content", `Must be ${FAKE_TEXT_LIMIT} or fewer in length.`) };
    const flags = typeof body.flags === "number" ? body.flags : 0;
    if ((flags & ~SETTABLE_FLAGS) !== 0)
      return {
        status: 400,
        body: { message: "Invalid Form Body", code: 50035, errors: { flags: { _errors: [{ code: "MESSAGE_FLAGS_INVALID", message: "Invalid flags" }] } } },
      };
    const files = record.files.filter((f) => /^files\[\d+\]$/.test(f.field));
    if (files.some((f) => f.size > FAKE_FILE_LIMIT)) return { status: 413, body: { message: "Request entity too large", code: 40005 } };
    const attachmentsRefused = attachmentsError(
      body.attachments,
      files.map((f) => f.field),
    );
    if (attachmentsRefused) return attachmentsRefused;
    if (content === "" && files.length === 0) return { status: 400, body: { message: "Cannot send an empty message", code: 50006 } };
    const refused = componentsError(body.components);
    if (refused) return refused;
    const reference = body.message_reference as FakeMessage["messageReference"] | undefined;
    if (reference?.message_id && !this.find(reference.channel_id ?? channelId, reference.message_id) && reference.fail_if_not_exists !== false) {
      return { status: 400, body: formError("message_reference", "Unknown message") };
    }
    const message: FakeMessage = {
      id: this.ids.next(),
      channelId,
      sender: "bot",
      authorId: DISCORD_BOT.id,
      content,
      history: [],
      flags,
      allowedMentions: body.allowed_mentions,
      ...(reference ? { messageReference: reference } : {}),
      files,
      attachments: files.map((f) => this.addAttachment(channelId, f.filename, f.bytes, f.type || undefined)),
      reactions: [],
      components: Array.isArray(body.components) ? body.components : [],
      deleted: false,
      at: Date.now(),
    };
    this.messages.push(message);
    return { status: 200, body: this.apiMessage(message) };
  }

  private apiMessage(m: FakeMessage): Record<string, unknown> {
    return {
      id: m.id,
      channel_id: m.channelId,
      author: DISCORD_BOT,
      content: m.content,
      timestamp: new Date(m.at).toISOString(),
      edited_timestamp: m.history.length > 0 ? new Date().toISOString() : null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: m.attachments,
      embeds: [],
      pinned: false,
      type: m.messageReference ? 19 : 0,
      flags: m.flags,
      components: m.components,
      ...(m.messageReference ? { message_reference: { type: 0, ...m.messageReference } } : {}),
    };
  }

  private find(channelId: string, id: string): FakeMessage | undefined {
    return this.messages.find((m) => m.channelId === channelId && m.id === id && !m.deleted);
  }

  private rateHeaders(api: string): Record<string, string> {
    const scripted = this.buckets.get(api);
    this.buckets.delete(api);
    return {
      "x-ratelimit-limit": "5",
      "x-ratelimit-remaining": String(scripted?.remaining ?? 4),
      "x-ratelimit-reset-after": String(scripted?.resetAfter ?? 1),
      "x-ratelimit-reset": String(Date.now() / 1000 + (scripted?.resetAfter ?? 1)),
      "x-ratelimit-bucket": `bucket-${api.replace(/\W+/g, "-")}`,
    };
  }

  private reply(record: RecordedRequest, status: number, body: unknown, headers: Record<string, string>): Response {
    if (status === 204 || body === undefined) {
      record.status = status;
      return new Response(null, { status, headers });
    }
    return jsonReply(record, status, body, headers);
  }

  private async serveAttachment(req: Request, path: string): Promise<Response> {
    const record = await parseRequest(req, "attachment");
    this.requests.push(record);
    const fault = this.faults.take("attachment");
    if (fault) return this.reply(record, fault.status, fault.body ?? { message: "fault" }, fault.headers ?? {});
    const file = this.cdn.get(path);
    record.status = file ? 200 : 404;
    if (!file) return new Response("Not Found", { status: 404 });
    return new Response(file.bytes, { headers: { "content-type": file.type, "content-length": String(file.bytes.byteLength) } });
  }
}

const unknownMessage = () => ({ status: 404, body: { message: "Unknown Message", code: 10008 } });
