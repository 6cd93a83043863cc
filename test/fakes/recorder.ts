/**
 * What the three platform fakes (telegram.ts, slack.ts, whatsapp.ts) share:
 * a loopback Bun.serve on port 0, a log of every request as the server parsed
 * it, a queue of injected failures, and a polling wait for tests that drive
 * the compiled daemon and cannot await its calls directly.
 */
import type { Server } from "bun";

/** A file part of a multipart request, as the server received it. */
export interface RecordedFile {
  /** The multipart part name (grammY: the random `attach://` id; Slack: `body`; WhatsApp: `file`). */
  field: string;
  filename: string;
  /** The part's content type, as sent. */
  type: string;
  size: number;
  bytes: Uint8Array;
}

/** One HTTP request the fake received, parsed the way the real server would. */
export interface RecordedRequest {
  /** The platform method: Telegram `sendMessage`, Slack `chat.postMessage`, WhatsApp `messages`. */
  api: string;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  encoding: "none" | "json" | "form" | "multipart" | "raw";
  /** JSON body, or form / multipart text fields (values are strings, as sent). */
  body: Record<string, unknown>;
  files: RecordedFile[];
  /** Byte length of a body that was none of the above (e.g. raw upload bytes). */
  rawSize: number;
  at: number;
  /** performance.now() when the request arrived, for latency figures finer than `at`'s millisecond (bench/turn.ts). */
  arrivedPerf: number;
  /** The HTTP status the fake answered; filled in once the handler returns. */
  status?: number;
  /** The JSON the fake answered, when it answered JSON. */
  response?: unknown;
}

/** Read and parse a request (consuming its body) the way the platform's server would. */
export async function parseRequest(req: Request, api: string): Promise<RecordedRequest> {
  const url = new URL(req.url);
  const headers: Record<string, string> = {};
  req.headers.forEach((value, key) => {
    headers[key.toLowerCase()] = value;
  });
  const record: RecordedRequest = {
    api,
    method: req.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    encoding: "none",
    body: {},
    files: [],
    rawSize: 0,
    at: Date.now(),
    arrivedPerf: performance.now(),
  };
  if (req.method === "GET" || req.method === "HEAD") return record;
  const type = (headers["content-type"] ?? "").toLowerCase();
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (type.startsWith("multipart/form-data")) {
    record.encoding = "multipart";
    // Parsed by hand: Bun's formData() replaces a part's content type with one guessed from the filename.
    const parsed = parseMultipart(bytes, boundaryOf(headers["content-type"] ?? ""));
    record.body = parsed.fields;
    record.files = parsed.files;
    return record;
  }
  if (bytes.byteLength === 0) return record;
  const text = new TextDecoder().decode(bytes);
  if (type.startsWith("application/json")) {
    record.encoding = "json";
    try {
      const parsed: unknown = JSON.parse(text);
      record.body = parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : { _: parsed };
    } catch {
      // Keep the text so a test can see what was malformed; handlers treat it as a parse error.
      record.body = { _invalid_json: text };
    }
    return record;
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    record.encoding = "form";
    record.body = Object.fromEntries(new URLSearchParams(text));
    return record;
  }
  record.encoding = "raw";
  record.rawSize = bytes.byteLength;
  return record;
}

function boundaryOf(contentType: string): string {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2] ?? "";
}

/** A Content-Disposition parameter, quoted (`name="x"`) or bare (grammY's `filename=p.png`). */
function dispositionParam(disposition: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|;)\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, "i").exec(disposition);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2]!.trim();
}

/** Split a multipart/form-data body into text fields and file parts (RFC 7578). */
export function parseMultipart(body: Uint8Array, boundary: string): { fields: Record<string, string>; files: RecordedFile[] } {
  const fields: Record<string, string> = {};
  const files: RecordedFile[] = [];
  if (!boundary) return { fields, files };
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const delimiter = Buffer.from(`--${boundary}`);
  let pos = buf.indexOf(delimiter);
  while (pos >= 0) {
    let start = pos + delimiter.length;
    if (buf[start] === 0x2d && buf[start + 1] === 0x2d) break; // "--": the closing delimiter
    if (buf[start] === 0x0d && buf[start + 1] === 0x0a) start += 2;
    const next = buf.indexOf(Buffer.from(`\r\n--${boundary}`), start);
    if (next < 0) break;
    const headerEnd = buf.indexOf("\r\n\r\n", start);
    if (headerEnd < 0 || headerEnd > next) {
      pos = next + 2;
      continue;
    }
    const partHeaders: Record<string, string> = {};
    for (const line of buf.subarray(start, headerEnd).toString("utf8").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) partHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const content = new Uint8Array(buf.subarray(headerEnd + 4, next));
    const disposition = partHeaders["content-disposition"] ?? "";
    const name = dispositionParam(disposition, "name") ?? "";
    const filename = dispositionParam(disposition, "filename");
    if (filename === undefined) fields[name] = new TextDecoder().decode(content);
    else files.push({ field: name, filename, type: partHeaders["content-type"] ?? "", size: content.byteLength, bytes: content });
    pos = next + 2;
  }
  return { fields, files };
}

/** Failures queued per platform method; `*` matches any method. */
export class FaultQueue<F> {
  private readonly queued = new Map<string, F[]>();

  /** Queue `fault` for the next `times` calls of `api`. */
  add(api: string, fault: F, times = 1): void {
    const list = this.queued.get(api) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.queued.set(api, list);
  }

  /** The next fault for `api`, removed from the queue. */
  take(api: string): F | undefined {
    for (const key of [api, "*"]) {
      const list = this.queued.get(key);
      if (list && list.length > 0) return list.shift();
    }
    return undefined;
  }

  clear(): void {
    this.queued.clear();
  }
}

/** Poll `probe` until it returns something truthy; the daemon under test runs in another process. */
export async function waitFor<T>(probe: () => T | undefined | null | false, opts: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? "condition"}`);
    await Bun.sleep(10);
  }
}

/** A JSON response; also remembered on the record so tests can read what the client was told. */
export function jsonReply(record: RecordedRequest, status: number, body: unknown, headers: Record<string, string> = {}): Response {
  record.status = status;
  record.response = body;
  return Response.json(body, { status, headers });
}

/** The common half of every fake: the server, its URL and the request log. */
export class LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  readonly server: Server<undefined>;

  constructor(handle: (req: Request, server: Server<undefined>) => Promise<Response>) {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req, server) => handle(req, server),
    });
  }

  /** `http://127.0.0.1:<port>` without a trailing slash (grammY rejects one). */
  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Every recorded request for one platform method, oldest first. */
  calls(api: string): RecordedRequest[] {
    return this.requests.filter((r) => r.api === api);
  }

  /** Wait until a request for `api` matching `match` has arrived, answered or not (a held long poll). */
  waitForRequest(api: string, match: (r: RecordedRequest) => boolean = () => true, timeoutMs = 5000): Promise<RecordedRequest> {
    return waitFor(() => this.requests.find((r) => r.api === api && match(r)), { timeoutMs, what: `a ${api} request` });
  }

  /** Wait until a request for `api` matching `match` has arrived and been answered. */
  waitForCall(api: string, match: (r: RecordedRequest) => boolean = () => true, timeoutMs = 5000): Promise<RecordedRequest> {
    return waitFor(() => this.requests.find((r) => r.api === api && r.status !== undefined && match(r)), {
      timeoutMs,
      what: `a ${api} call`,
    });
  }

  /** Forget recorded requests (state such as sent messages is kept). */
  clearRequests(): void {
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    await this.server.stop(true);
  }
}
