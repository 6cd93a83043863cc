/**
 * A loopback fake of the WhatsApp Cloud API (Graph API), for channel-adapter
 * and end-to-end tests (real servers on loopback, not mocks). Any version segment is accepted
 * (`${url}/v21.0/…`, `/v25.0/…`), so `graph_api_base` is `fake.graphBase()`.
 *
 * Routes (Bearer token required on all; `?access_token=` also works):
 *   POST   /{ver}/{phone_number_id}/messages  JSON; validates messaging_product, to, type and the typed
 *          object (text.body ≤ 4096, media by id xor link, caption ≤ 1024, reaction {message_id, emoji});
 *          → {messaging_product, contacts:[{input,wa_id}], messages:[{id:"wamid…"}]}
 *   POST   /{ver}/{phone_number_id}/media     multipart: file, type, messaging_product → {id}
 *   GET    /{ver}/{phone-number-id}           → {display_phone_number, verified_name, id}
 *   GET    /{ver}/{media-id}                  → {messaging_product, url, mime_type, sha256, file_size, id}
 *   DELETE /{ver}/{media-id}                  → {success:true}
 *   GET    {url from above}                   → the bytes (Bearer required)
 * Errors are Graph objects: {error:{message,type,code,error_data?,fbtrace_id}}; a wrong or missing
 * token is 401 with code 190.
 *
 * State tests read:
 *   fake.requests / fake.calls("messages" | "media" | "media.get" | "media.download" | "media.delete")
 *   fake.sent(to?)               outbound messages, in order (WaSent)
 *   fake.visibleTexts(to)        text bodies and captions the user would see
 *   fake.reactionOn(wamid)       the bot's current reaction on an inbound message
 * Injections (next call(s) only):
 *   fake.rateLimitNext("messages")   HTTP 429, code 130429 "(#130429) Rate limit hit"
 *   fake.failNext("media", { status: 500, code: 1, message: "(#1) An unknown error occurred" })
 *
 * Usage:
 *   const wa = startWhatsAppFake();
 *   // config: graph_api_base = wa.graphBase(), phone_number_id = wa.phoneNumberId, access token = wa.token
 *   const payload = wa.webhook.audio({ voice: true, bytes: oggBytes });   // sign and POST to the daemon
 *   await wa.waitForCall("messages");
 *   expect(wa.visibleTexts(WA_USER.wa_id)).toEqual(["Got your voice note."]);
 *   await wa.stop();
 */
import { createHash } from "node:crypto";
import { FaultQueue, jsonReply, LoopbackServer, parseRequest, type RecordedRequest, waitFor } from "./recorder.ts";
import { GraphError, graphError, validateMessage, validateUpload } from "./whatsapp/graph.ts";
import { WhatsAppWebhookBuilder, wamid } from "./whatsapp/webhooks.ts";

export { WA_USER } from "./whatsapp/webhooks.ts";

export interface WhatsAppFakeOptions {
  token?: string;
  phoneNumberId?: string;
  displayPhoneNumber?: string;
  wabaId?: string;
  /** How GET /{media-id} reports file_size: the Cloud API sends a string; some SDKs type it a number. */
  fileSizeAs?: "string" | "number";
}

export interface WaMedia {
  id: string;
  bytes: Uint8Array;
  mime_type: string;
  sha256: string;
  /** Reported size (may exceed bytes.length to test caps cheaply). */
  file_size: number;
  filename?: string;
  /** true when the business uploaded it through /media. */
  uploaded: boolean;
  deleted: boolean;
}

export interface WaSent {
  id: string;
  to: string;
  type: string;
  /** text.body or the media caption. */
  text?: string;
  /** The typed object as sent (text, image, document, audio, reaction, …). */
  payload: Record<string, unknown>;
  /** context.message_id when replying. */
  reply_to?: string;
  body: Record<string, unknown>;
  at: number;
}

type Fault = { status: number; code: number; message: string; details?: string };

export class WhatsAppFake {
  readonly token: string;
  readonly phoneNumberId: string;
  readonly displayPhoneNumber: string;
  readonly wabaId: string;
  readonly media = new Map<string, WaMedia>();
  readonly webhook: WhatsAppWebhookBuilder;
  private readonly inbound = new Map<string, Record<string, unknown>>();
  private readonly reactions = new Map<string, string>();
  private readonly outbox: WaSent[] = [];
  private readonly http: LoopbackServer;
  private readonly faults = new FaultQueue<Fault>();
  private readonly fileSizeAs: "string" | "number";
  private mediaCounter = 0;

  constructor(opts: WhatsAppFakeOptions = {}) {
    this.token = opts.token ?? "EAAFermixFakeWhatsAppAccessTokenZZZ";
    this.phoneNumberId = opts.phoneNumberId ?? "106540352242922";
    this.displayPhoneNumber = opts.displayPhoneNumber ?? "15550783881";
    this.wabaId = opts.wabaId ?? "102290129340398";
    this.fileSizeAs = opts.fileSizeAs ?? "string";
    this.webhook = new WhatsAppWebhookBuilder({
      wabaId: this.wabaId,
      phoneNumberId: this.phoneNumberId,
      displayPhoneNumber: this.displayPhoneNumber,
      addMedia: (bytes, mime_type, o) => this.addMedia(bytes, { mime_type, ...o }),
      recordInbound: (message) => this.inbound.set(String(message.id), message),
    });
    this.http = new LoopbackServer((req) => this.handle(req));
  }

  get url(): string {
    return this.http.url;
  }
  /** The `graph_api_base` to configure, e.g. `http://127.0.0.1:PORT/v21.0`. */
  graphBase(version = "v21.0"): string {
    return `${this.http.url}/${version}`;
  }
  get requests(): RecordedRequest[] {
    return this.http.requests;
  }
  calls(api: string): RecordedRequest[] {
    return this.http.calls(api);
  }
  waitForCall(api: string, match?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest> {
    return this.http.waitForCall(api, match, timeoutMs);
  }
  stop(): Promise<void> {
    return this.http.stop();
  }

  /** Host media (as if a user sent it); returns the id webhooks reference. */
  addMedia(bytes: Uint8Array | string, opts: { mime_type: string; size?: number; filename?: string; id?: string }): { id: string; sha256: string } {
    const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
    const id = opts.id ?? String(1_000_000_000_000_000n + BigInt(++this.mediaCounter));
    const sha256 = createHash("sha256").update(data).digest("hex");
    this.media.set(id, {
      id,
      bytes: data,
      mime_type: opts.mime_type,
      sha256,
      file_size: opts.size ?? data.byteLength,
      filename: opts.filename,
      uploaded: false,
      deleted: false,
    });
    return { id, sha256 };
  }

  /** Outbound messages, all or to one recipient. */
  sent(to?: string): WaSent[] {
    return to === undefined ? [...this.outbox] : this.outbox.filter((m) => m.to.replace(/\D/g, "") === to.replace(/\D/g, ""));
  }
  visibleTexts(to: string): string[] {
    return this.sent(to)
      .filter((m) => m.text !== undefined)
      .map((m) => m.text!);
  }
  waitForTexts(to: string, done: (texts: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
    return waitFor(() => (done(this.visibleTexts(to)) ? this.visibleTexts(to) : undefined), { timeoutMs, what: `texts to ${to}` });
  }
  /** The bot's current reaction emoji on a message (undefined when none or removed). */
  reactionOn(messageId: string): string | undefined {
    return this.reactions.get(messageId) || undefined;
  }

  failNext(api: string, fault: Fault, times = 1): void {
    this.faults.add(api, fault, times);
  }
  rateLimitNext(api = "messages", times = 1): void {
    this.faults.add(api, { status: 429, code: 130429, message: "(#130429) Rate limit hit", details: "Cloud API message throughput has been reached." }, times);
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const parts = url.pathname.split("/").filter(Boolean);
    const isDownload = url.pathname === "/whatsapp_business/attachments/";
    const api = isDownload ? "media.download" : this.apiOf(req.method, parts);
    const record = await parseRequest(req, api);
    this.http.requests.push(record);
    const reply = (e: GraphError) => jsonReply(record, e.status, e.body);
    try {
      const token = /^Bearer\s+(.+)$/i.exec(record.headers.authorization ?? "")?.[1] ?? record.query.access_token;
      if (!token) throw graphError(401, 190, "An access token is required to request this resource.");
      if (token !== this.token) throw graphError(401, 190, "Invalid OAuth access token - Cannot parse access token");
      const fault = this.faults.take(api);
      if (fault) throw graphError(fault.status, fault.code, fault.message, { details: fault.details });
      if (isDownload) return this.download(record, url.searchParams.get("mid") ?? "");
      if (!/^v\d+\.\d+$/.test(parts[0] ?? "")) throw graphError(400, 2500, `Unknown path components: /${parts.join("/")}`);
      switch (api) {
        case "messages":
          return jsonReply(record, 200, this.send(parts[1]!, record));
        case "media":
          return jsonReply(record, 200, this.upload(parts[1]!, record));
        case "phone_number.get":
          // The business phone number node, as Graph returns it for ?fields=display_phone_number,verified_name.
          return jsonReply(record, 200, { display_phone_number: "15550783881", verified_name: "Fermix Test", id: this.phoneNumberId });
        case "media.get":
          return jsonReply(record, 200, this.describe(parts[1]!));
        case "media.delete":
          this.lookup(parts[1]!).deleted = true;
          return jsonReply(record, 200, { success: true });
      }
      throw graphError(400, 100, `Unsupported ${req.method.toLowerCase()} request.`, { type: "GraphMethodException" });
    } catch (e) {
      if (e instanceof GraphError) return reply(e);
      throw e;
    }
  }

  private apiOf(method: string, parts: string[]): string {
    if (parts.length === 3 && method === "POST" && parts[2] === "messages") return "messages";
    if (parts.length === 3 && method === "POST" && parts[2] === "media") return "media";
    if (parts.length === 2 && method === "GET" && parts[1] === this.phoneNumberId) return "phone_number.get";
    if (parts.length === 2 && method === "GET") return "media.get";
    if (parts.length === 2 && method === "DELETE") return "media.delete";
    return "unknown";
  }

  /** The error Graph gives for an id it does not know (or that is not ours). */
  private noObject(id: string, verb: string): GraphError {
    return graphError(
      400,
      100,
      `Unsupported ${verb} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
      { type: "GraphMethodException", subcode: 33 },
    );
  }

  private send(phoneNumberId: string, record: RecordedRequest): Record<string, unknown> {
    if (phoneNumberId !== this.phoneNumberId) throw this.noObject(phoneNumberId, "post");
    if (record.encoding !== "json" || "_invalid_json" in record.body)
      throw graphError(400, 100, "(#100) Invalid parameter", { details: "Request body must be JSON." });
    const body = record.body;
    const type = validateMessage(body, (id) => this.media.has(id) && !this.media.get(id)!.deleted);
    const to = String(body.to);
    const payload = body[type] as Record<string, unknown>;
    const id = wamid(to);
    const text = type === "text" ? String(payload.body) : typeof payload.caption === "string" ? payload.caption : undefined;
    const context = body.context as { message_id?: string } | undefined;
    this.outbox.push({ id, to, type, text, payload, reply_to: context?.message_id, body, at: Date.now() });
    if (type === "reaction") this.reactions.set(String(payload.message_id), String(payload.emoji));
    return { messaging_product: "whatsapp", contacts: [{ input: to, wa_id: to.replace(/\D/g, "") }], messages: [{ id }] };
  }

  private upload(phoneNumberId: string, record: RecordedRequest): Record<string, unknown> {
    if (phoneNumberId !== this.phoneNumberId) throw this.noObject(phoneNumberId, "post");
    const b = record.body;
    if (b.messaging_product === undefined) throw graphError(400, 100, "(#100) The parameter messaging_product is required.");
    if (b.messaging_product !== "whatsapp")
      throw graphError(400, 100, "(#100) Invalid parameter", { details: "Param messaging_product must be one of {WHATSAPP}." });
    const file = record.files.find((f) => f.field === "file");
    if (!file) throw graphError(400, 100, "(#100) The parameter file is required.");
    const type = typeof b.type === "string" ? b.type : "";
    if (!type) throw graphError(400, 100, "(#100) The parameter type is required.");
    validateUpload(type, file.size);
    const { id } = this.addMedia(file.bytes, { mime_type: type, filename: file.filename });
    this.media.get(id)!.uploaded = true;
    return { id };
  }

  private lookup(id: string): WaMedia {
    const media = this.media.get(id);
    if (!media || media.deleted) throw this.noObject(id, "get");
    return media;
  }

  private describe(id: string): Record<string, unknown> {
    const m = this.lookup(id);
    const url = `${this.url}/whatsapp_business/attachments/?mid=${id}&ext=${Math.floor(Date.now() / 1000) + 300}&hash=AT${m.sha256.slice(0, 20)}`;
    const file_size = this.fileSizeAs === "string" ? String(m.file_size) : m.file_size;
    return { messaging_product: "whatsapp", url, mime_type: m.mime_type, sha256: m.sha256, file_size, id };
  }

  private download(record: RecordedRequest, id: string): Response {
    const m = this.media.get(id);
    if (!m || m.deleted) throw graphError(404, 100, "Media not found");
    record.status = 200;
    return new Response(m.bytes, { headers: { "content-type": m.mime_type, "content-length": String(m.bytes.byteLength) } });
  }
}

/** Start a WhatsApp Cloud API fake on 127.0.0.1, port 0. */
export function startWhatsAppFake(opts?: WhatsAppFakeOptions): WhatsAppFake {
  return new WhatsAppFake(opts);
}
