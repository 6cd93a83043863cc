/**
 * A fake model server on loopback that speaks the three wire formats Fermix
 * uses: the OpenAI Responses API (`POST …/responses`, SSE events),
 * OpenAI-compatible chat completions (`POST …/chat/completions`, `data:`
 * chunks and `[DONE]`) and Anthropic's Messages API (`POST …/messages`, its
 * documented events from `message_start` to `message_stop`, `ping`, `error`;
 * errors as `{type:"error",error:{type,message}}`, and a 400 like the real
 * API's when `anthropic-version` or `max_tokens` is missing). Each request
 * takes the next scripted reply from a queue and gets it rendered in the
 * format of the path it hit, so one script serves every provider.
 *
 *   import { reply, startFakeModel } from "./model-server.ts";
 *
 *   await using fake = await startFakeModel();          // 127.0.0.1, a free port
 *   fake.reply(
 *     reply.toolCall("react", { emoji: "👍" }),          // first request: a tool call
 *     reply.text("Hel", "lo ", "there"),                 // second: text in three chunks
 *   );
 *   // point a provider (or a daemon's config.toml) at it:
 *   //   base_url = fake.url   (it ends in /v1)   api = "responses" | "chat" | "anthropic"
 *   …
 *   expect(fake.requests[1].body.input).toContainEqual(expect.objectContaining({ type: "function_call_output" }));
 *   expect(fake.requests[0].headers.authorization).toBeUndefined();
 *
 * Replies (see `reply` below): text, reasoning then text, tool calls (arguments
 * streamed in pieces), empty, any HTTP status (429 with Retry-After, 500…), a
 * connection dropped mid-stream, a hang that lasts until the client gives up
 * (`await fake.requests[0].untilAborted` tells the test it did), a stall before
 * the headers, an `error` event, an incomplete response, slow chunks. A plain
 * string is short for `reply.text(string)`, and a function `(request) => Reply`
 * decides from the request (e.g. echo the user's text with `userText`).
 * When the queue is empty, `fallback` answers (default: HTTP 400 "no scripted
 * reply", which is not retried, so a missing script fails fast and visibly).
 *
 * `requireKey(key)` makes it refuse (401, in the path's dialect) any request
 * without that key, model lists and Anthropic's model lookup
 * (`GET …/models/{id}`) included.
 *
 * Every request is recorded in `fake.requests` (path, lower-case headers,
 * parsed JSON body, when it arrived and when its reply was over, so a test
 * can tell whether requests overlapped); `await fake.waitForRequests(n)`
 * waits for them.
 */
import type { Server } from "bun";

/** A request the fake received. */
export interface RecordedRequest {
  index: number;
  method: string;
  /** e.g. "/v1/responses". */
  path: string;
  api: "responses" | "chat" | "anthropic" | "other";
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The parsed JSON body ({} when it was not a JSON object: `text` has what came). */
  body: ModelRequestBody;
  /** The body as it came. */
  text: string;
  /** The client closed the connection before the reply was finished. */
  aborted: boolean;
  /** Resolves when the client closes the connection early (never, for a request that completed). */
  untilAborted: Promise<void>;
  /** Epoch ms when the request arrived. */
  receivedAt: number;
  /** Epoch ms when its reply was over (sent whole, cut, or aborted by the client); undefined while it runs. */
  finishedAt?: number;
  /** performance.now() when the request arrived and when its reply was written whole: for sub-millisecond latency figures (bench/turn.ts). */
  arrivedPerf: number;
  writtenPerf?: number;
}

/**
 * A request body in any of the wire formats: Responses (`instructions`,
 * `input`), chat completions (`messages`) or Anthropic's Messages (`system`,
 * `messages` of blocks, `max_tokens`). The fake does not validate it (beyond
 * a `model`, and what Anthropic's API requires): these are the fields Fermix
 * sends, for tests to assert on.
 */
export interface ModelRequestBody {
  model?: string;
  instructions?: string;
  input?: WireItem[];
  messages?: WireItem[];
  tools?: WireTool[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_output_tokens?: number;
  /** Chat completions and Anthropic. */
  max_tokens?: number;
  /** Anthropic: the system prompt as text blocks. */
  system?: string | WirePart[];
  /** Anthropic: extended thinking. */
  thinking?: { type: string; budget_tokens?: number };
}

/** A Responses `input` item or a chat message; which fields it has depends on its type and role. */
export interface WireItem {
  /** Responses: "message", "function_call", "function_call_output", "computer_call" or "computer_call_output". */
  type?: string;
  role?: string;
  /** A user's parts in Responses; plain text from an assistant, and in chat messages. */
  content?: string | WirePart[] | null;
  call_id?: string;
  name?: string;
  arguments?: string;
  /** A tool's text (with images it is content parts, and a computer call's is its screenshot: see toolImages). */
  output?: string;
  /** A computer call's actions, as the model sent them (given back in the next request). */
  actions?: Array<Record<string, unknown>>;
  /** computer_call_output: the safety checks acknowledged. */
  acknowledged_safety_checks?: Array<{ id: string; code?: string; message?: string }>;
  /** Chat: an assistant's calls, and the call a tool message answers. */
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/**
 * A part of a message: `input_text`/`input_image` (Responses), `text`/`image_url`
 * (chat), or an Anthropic block (`text`, `image`, `tool_use`, `tool_result`, `thinking`).
 */
export interface WirePart {
  type: string;
  text?: string;
  image_url?: string | { url: string };
  /** Anthropic `image`. */
  source?: { type: string; media_type: string; data: string };
  /** Anthropic: a block marked for prompt caching. */
  cache_control?: { type: string };
  /** Anthropic `tool_use`. */
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  /** Anthropic `tool_result`. */
  tool_use_id?: string;
  content?: string | WirePart[];
  /** Anthropic `thinking` / `redacted_thinking`. */
  thinking?: string;
  signature?: string;
  data?: string;
}

/** A tool offered: its name at the top (Responses, Anthropic) or under `function` (chat). */
export interface WireTool {
  type?: string;
  name?: string;
  description?: string;
  parameters?: WireSchema;
  function?: { name: string; description?: string; parameters?: WireSchema };
  /** Anthropic: the arguments' schema. */
  input_schema?: WireSchema;
  cache_control?: { type: string };
}

/** A tool's JSON Schema, as far as tests look into it. */
export interface WireSchema {
  type?: string;
  properties?: Record<string, WireSchema & { enum?: string[]; description?: string }>;
  required?: string[];
}

export interface ToolCallSpec {
  name: string;
  /** An object is sent as its JSON. */
  arguments: string | Record<string, unknown>;
  callId?: string;
  /** The arguments are streamed in this many pieces (default 3). */
  pieces?: number;
}

/** A streamed reply. Everything is optional: `{}` is an empty completion. */
export interface StreamSpec {
  /** Reasoning summary chunks (Responses) / reasoning deltas (chat), sent before the text. */
  reasoning?: string[];
  /** Assistant text chunks. */
  text?: string[];
  toolCalls?: ToolCallSpec[];
  /** Token usage reported at the end (default input 10, output 5); null sends none. */
  usage?: { input: number; output: number } | null;
  /**
   * How it ends: "complete" (default); "drop" the connection; "hang" until the
   * client aborts; "incomplete" (Responses response.incomplete / chat finish_reason
   * "length"); "error" (Responses `error` event / chat error chunk); "failed"
   * (Responses response.failed / chat error chunk).
   */
  end?: "complete" | "drop" | "hang" | "incomplete" | "error" | "failed";
  /** For end "error"/"failed". */
  error?: { message: string; code?: string };
  /** For end "incomplete": "max_output_tokens" (default) or "content_filter". */
  incompleteReason?: "max_output_tokens" | "content_filter";
  /** Pause between writes, in ms (a slow model). */
  delayMs?: number;
  /** After the write that carries the text chunk `after`, a pause of `ms` before the next write (a model that stalls mid-answer). */
  stall?: { after: string; ms: number };
  /** Re-cut the body into writes of this many bytes, ignoring frame (and UTF-8) boundaries. */
  byteChunks?: number;
  /** Send the response headers, then not one byte until the client gives up: a model that never starts answering. */
  silent?: boolean;
  /** Chat only: the delta field that carries reasoning (default "reasoning_content"; Ollama/OpenRouter use "reasoning"). */
  reasoningField?: "reasoning_content" | "reasoning";
  /** Responses only: native computer calls (OpenAI's `computer` tool), after any function calls. */
  computerCalls?: ComputerCallSpec[];
}

/**
 * A native computer call as the Responses API sends it: a `computer_call` item with an ordered
 * `actions` list (`{type: "click", button, x, y}`, `{type: "type", text}`, `{type: "keypress", keys}`…)
 * or, as the preview model did, one `action`; and the safety checks it raises.
 */
export interface ComputerCallSpec {
  actions?: Array<Record<string, unknown>>;
  /** The preview's single action (sent instead of `actions`). */
  action?: Record<string, unknown>;
  callId?: string;
  safetyChecks?: Array<{ id: string; code: string; message: string }>;
}

/**
 * What `reply.*` builds. A status reply's body is written in the dialect of
 * the path it answers: `{error:{message,type,code}}` for OpenAI's formats,
 * `{type:"error",error:{type,message}}` for Anthropic's, whose `type` is
 * `code` when given, else the one its documentation gives the status.
 */
export type ScriptedReply =
  | { kind: "stream"; spec: StreamSpec }
  | { kind: "status"; status: number; message: string; code?: string; headers?: Record<string, string> }
  | { kind: "stall" }
  | { kind: "after"; until: Promise<unknown>; then: Reply };

/** A scripted reply, a string (its text), or a function that picks the reply from the request. */
export type Reply = ScriptedReply | string | ((request: RecordedRequest) => Reply);

/** Builders for scripted replies. */
export const reply = {
  /** Assistant text, one chunk per argument. */
  text: (...chunks: string[]): ScriptedReply => ({ kind: "stream", spec: { text: chunks } }),
  /** A reasoning summary (its chunks), then text. */
  reasoning: (summary: string | string[], ...text: string[]): ScriptedReply => ({
    kind: "stream",
    spec: { reasoning: typeof summary === "string" ? [summary] : summary, text },
  }),
  /** One tool call, with its arguments streamed in pieces; optional text before it. */
  toolCall: (name: string, args: ToolCallSpec["arguments"], options: Omit<ToolCallSpec, "name" | "arguments"> & { text?: string[] } = {}): ScriptedReply => ({
    kind: "stream",
    spec: { text: options.text, toolCalls: [{ name, arguments: args, callId: options.callId, pieces: options.pieces }] },
  }),
  /** Several tool calls in one response. */
  toolCalls: (...calls: ToolCallSpec[]): ScriptedReply => ({ kind: "stream", spec: { toolCalls: calls } }),
  /** A completed response with no output at all. */
  empty: (): ScriptedReply => ({ kind: "stream", spec: {} }),
  /** Anything: see StreamSpec. */
  stream: (spec: StreamSpec): ScriptedReply => ({ kind: "stream", spec }),
  /** Text chunks with a pause before each. */
  slow: (delayMs: number, ...chunks: string[]): ScriptedReply => ({ kind: "stream", spec: { text: chunks, delayMs } }),
  /** A first text chunk at once, then `pauseMs` of silence, then the rest: a model that stalls after its first words. */
  stutter: (first: string, pauseMs: number, ...rest: string[]): ScriptedReply => ({
    kind: "stream",
    spec: { text: [first, ...rest], stall: { after: first, ms: pauseMs } },
  }),
  /** An HTTP error, its body in the dialect of the path it answers (see ScriptedReply). */
  status: (status: number, message = `fake model: HTTP ${status}`, headers?: Record<string, string>, code?: string): ScriptedReply => ({
    kind: "status",
    status,
    message,
    ...(code !== undefined ? { code } : {}),
    ...(headers ? { headers } : {}),
  }),
  /** 429 with a Retry-After header (seconds or an HTTP date); none when omitted. */
  rateLimited: (retryAfter?: number | string, message = "Rate limit reached (fake)"): ScriptedReply =>
    reply.status(429, message, retryAfter === undefined ? undefined : { "retry-after": String(retryAfter) }),
  /** Anthropic's 529: the API is overloaded (OpenAI's formats get the same status with a server_error body). */
  overloaded: (message = "Overloaded (fake)"): ScriptedReply => reply.status(529, message),
  /** A 5xx. */
  serverError: (status = 500, message = "The server had an error (fake)"): ScriptedReply => reply.status(status, message),
  /** These text chunks, then the connection is cut without finishing the response. */
  drop: (...text: string[]): ScriptedReply => ({ kind: "stream", spec: { text, end: "drop" } }),
  /** These text chunks, then silence until the client aborts (see RecordedRequest.untilAborted). */
  hang: (...text: string[]): ScriptedReply => ({ kind: "stream", spec: { text, end: "hang" } }),
  /** Headers, then silence until the client gives up (its first-byte timeout). */
  silent: (): ScriptedReply => ({ kind: "stream", spec: { silent: true, end: "hang" } }),
  /** No response headers at all until the client aborts. */
  stall: (): ScriptedReply => ({ kind: "stall" }),
  /** These text chunks, then an `error` event (chat: an error chunk). */
  error: (message: string, code?: string, ...text: string[]): ScriptedReply => ({
    kind: "stream",
    spec: { text, end: "error", error: { message, code } },
  }),
  /** These text chunks, then the response ends incomplete (max_output_tokens). */
  incomplete: (...text: string[]): ScriptedReply => ({ kind: "stream", spec: { text, end: "incomplete" } }),
  /** Responses: one native computer call (OpenAI's `computer` tool); optional text before it. */
  computerCall: (call: ComputerCallSpec, text?: string[]): ScriptedReply => ({ kind: "stream", spec: { text, computerCalls: [call] } }),
  /** Nothing at all (no headers) until `until` settles, then `then`: a model that answers when the test says so. */
  after: (until: Promise<unknown>, then: Reply): ScriptedReply => ({ kind: "after", until, then }),
};

export interface FakeModel {
  /** The base_url to configure: `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Scripted replies not yet used. */
  readonly pending: number;
  /** Queue replies; each request takes the next one. */
  reply(...replies: Reply[]): FakeModel;
  /** The reply when the queue is empty (undefined: HTTP 400 "no scripted reply"). */
  fallback(reply: Reply | undefined): FakeModel;
  /**
   * From now on, every request (model lists too) must carry this key, as a
   * Bearer token or in x-api-key, or it is answered 401 in its path's dialect
   * (undefined: any key, or none, is taken).
   */
  requireKey(key: string | undefined): FakeModel;
  /** Anthropic's model lookup (`GET …/models/{id}`) answers 404 for these. */
  forgetModels(...ids: string[]): FakeModel;
  /** Resolves with the requests once there are at least `count` (rejects after timeoutMs). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Forget queued replies and recorded requests. */
  reset(): void;
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The output the model was handed for the latest tool call in a Responses request ("" when none). */
export function lastToolOutput(request: RecordedRequest): string {
  const items = request.body.input ?? [];
  return items.filter((i) => i.type === "function_call_output").at(-1)?.output ?? "";
}

/**
 * The images a Responses request gave the model as tool answers, in order, as data URLs: a function
 * call's output parts (`input_image`) and a native computer call's screenshot (`computer_call_output`).
 */
export function toolImages(request: RecordedRequest): Array<{ callId: string; url: string; native: boolean }> {
  const images: Array<{ callId: string; url: string; native: boolean }> = [];
  for (const item of request.body.input ?? []) {
    const output = item.output as unknown;
    if (item.type === "computer_call_output" && output && typeof output === "object" && "image_url" in output)
      images.push({ callId: item.call_id ?? "", url: String(output.image_url), native: true });
    if (item.type === "function_call_output" && Array.isArray(output))
      for (const part of output as WirePart[])
        if (part.type === "input_image") images.push({ callId: item.call_id ?? "", url: String(part.image_url), native: false });
  }
  return images;
}

/** The text of a function call's output in a Responses request, whether plain or in parts. */
export function toolOutputText(item: WireItem): string {
  const output = item.output as unknown;
  if (typeof output === "string") return output;
  return Array.isArray(output) ? (output as WirePart[]).map((p) => p.text ?? "").join("") : "";
}

/** The text of the last user message of a recorded request, in either wire format. */
export function userText(request: RecordedRequest): string {
  const items = request.body.input ?? request.body.messages ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.role === "user") return textOf(item.content);
  }
  return "";
}

/** The text of every user message in a Responses request's input, in order. */
export function userTexts(request: RecordedRequest): string[] {
  return (request.body.input ?? []).filter((i) => i.role === "user").map((i) => textOf(i.content));
}

/** The parts of the latest item of a Responses request's input (the user's message: texts and images); [] when it has none. */
export function lastInputParts(request: RecordedRequest): WirePart[] {
  const content = request.body.input?.at(-1)?.content;
  return Array.isArray(content) ? content : [];
}

function textOf(content: WireItem["content"]): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => p.text ?? "").join("");
}

/** Start a fake model server on 127.0.0.1 and a free port (or `port`: a server coming back where one stopped). */
export async function startFakeModel(options: { port?: number } = {}): Promise<FakeModel> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const releases = new Set<() => void>();
  let fallback: Reply | undefined;
  let requiredKey: string | undefined;
  const unknownModels = new Set<string>();
  let ids = 0;
  const nextId = () => ++ids;

  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    idleTimeout: 0, // a slow or hanging reply must not be cut by Bun's 10 s default
    async fetch(req) {
      const arrivedPerf = performance.now();
      const url = new URL(req.url);
      const refused = reply.status(401, "invalid api key (fake)") as StatusReply;
      if (req.method === "GET" && requiredKey !== undefined && keyOf(req) !== requiredKey) {
        return statusResponse({ api: url.pathname.includes("/models/") || req.headers.has("anthropic-version") ? "anthropic" : "responses" }, refused);
      }
      if (req.method === "GET" && url.pathname.endsWith("/models")) {
        return Response.json({ object: "list", data: [{ id: "fake-model", object: "model", owned_by: "fermix-test" }] });
      }
      // Anthropic's model lookup: it knows whatever model is asked for (the fake answers any name), unless told to forget one.
      const lookup = /\/models\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && lookup) {
        const id = decodeURIComponent(lookup[1]!);
        if (unknownModels.has(id)) return statusResponse({ api: "anthropic" }, reply.status(404, `model: ${id}`) as StatusReply);
        return Response.json({ type: "model", id, display_name: id, created_at: "2030-01-01T00:00:00Z" });
      }
      const [recorded, markAborted] = await record(req, url, requests.length, arrivedPerf);
      requests.push(recorded);
      for (const wake of waiters) wake();
      if (recorded.api === "other") return Response.json({ error: { message: `fake model: no route ${req.method} ${url.pathname}` } }, { status: 404 });
      if (requiredKey !== undefined && keyOf(req) !== requiredKey) return statusResponse(recorded, refused);
      const invalid = requestProblem(recorded);
      if (invalid) return statusResponse(recorded, reply.status(400, invalid, undefined, "invalid_request_error") as StatusReply);
      let next = resolve(queue.shift() ?? fallback ?? reply.status(400, `fake model: no scripted reply for request #${recorded.index}`), recorded);
      while (next.kind === "after") {
        const { until, then } = next;
        await until.catch(() => undefined);
        next = resolve(then, recorded);
      }
      if (next.kind === "status") {
        recorded.finishedAt = Date.now();
        return statusResponse(recorded, next);
      }
      if (next.kind === "stall") {
        return new Promise<Response>((resolve) => {
          const release = () => resolve(new Response(null, { status: 499 }));
          releases.add(release);
          req.signal.addEventListener("abort", release, { once: true });
        });
      }
      const writes =
        recorded.api === "responses"
          ? responsesWrites(next.spec, recorded.body, nextId)
          : recorded.api === "anthropic"
            ? anthropicWrites(next.spec, recorded.body, nextId)
            : chatWrites(next.spec, recorded.body, nextId);
      return sseResponse(writes, next.spec, recorded, markAborted, releases);
    },
  });

  const fake: FakeModel = {
    url: `http://127.0.0.1:${server.port}/v1`,
    port: server.port ?? 0,
    requests,
    get pending() {
      return queue.length;
    },
    reply(...replies) {
      queue.push(...replies);
      return fake;
    },
    fallback(value) {
      fallback = value;
      return fake;
    },
    requireKey(key) {
      requiredKey = key;
      return fake;
    },
    forgetModels(...names) {
      for (const name of names) unknownModels.add(name);
      return fake;
    },
    waitForRequests(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests.slice());
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`fake model: ${requests.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    async stop() {
      for (const release of releases) release();
      releases.clear();
      await server.stop(true);
    },
    [Symbol.asyncDispose]: () => fake.stop(),
  };
  return fake;
}

type StatusReply = Extract<ScriptedReply, { kind: "status" }>;

/** The key a request carries, as a Bearer token or in x-api-key. */
function keyOf(req: Request): string | undefined {
  const bearer = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "");
  return bearer?.[1] ?? req.headers.get("x-api-key") ?? undefined;
}

/** What the real API would refuse with a 400 before answering: no model; for Anthropic, no version header or no max_tokens. */
function requestProblem(request: RecordedRequest): string | undefined {
  if (typeof request.body.model !== "string") return "fake model: the body has no model";
  if (request.api !== "anthropic") return undefined;
  if (!request.headers["anthropic-version"]) return "anthropic-version: header is required";
  if (typeof request.body.max_tokens !== "number") return "max_tokens: Field required";
  return undefined;
}

/** Anthropic's error type for a status, as its documentation lists them. */
const ANTHROPIC_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** A status reply in the dialect of the request's path. */
function statusResponse(request: Pick<RecordedRequest, "api">, next: StatusReply): Response {
  const init = { status: next.status, ...(next.headers ? { headers: next.headers } : {}) };
  if (request.api === "anthropic") {
    const type = next.code ?? ANTHROPIC_ERROR_TYPES[next.status] ?? (next.status >= 500 ? "api_error" : "invalid_request_error");
    return Response.json({ type: "error", error: { type, message: next.message } }, init);
  }
  const code = next.code ?? (next.status === 429 ? "rate_limit_exceeded" : null);
  return Response.json({ error: { message: next.message, type: next.status === 429 ? "rate_limit_error" : "server_error", code } }, init);
}

function resolve(value: Reply, request: RecordedRequest): ScriptedReply {
  if (typeof value === "function") return resolve(value(request), request);
  return typeof value === "string" ? { kind: "stream", spec: { text: [value] } } : value;
}

/** The request as recorded, and the function that marks it aborted. */
async function record(req: Request, url: URL, index: number, arrivedPerf: number): Promise<[RecordedRequest, () => void]> {
  const text = await req.text();
  const body = parseBody(text);
  const api = url.pathname.endsWith("/responses")
    ? "responses"
    : url.pathname.endsWith("/chat/completions")
      ? "chat"
      : url.pathname.endsWith("/messages")
        ? "anthropic"
        : "other";
  let markAborted = () => {};
  const untilAborted = new Promise<void>((resolve) => {
    markAborted = () => {
      recorded.aborted = true;
      recorded.finishedAt ??= Date.now();
      resolve();
    };
  });
  const recorded: RecordedRequest = {
    index,
    method: req.method,
    path: url.pathname,
    api,
    headers: Object.fromEntries(req.headers),
    body,
    text,
    aborted: false,
    untilAborted,
    receivedAt: Date.now(),
    arrivedPerf,
  };
  req.signal.addEventListener("abort", markAborted, { once: true });
  return [recorded, markAborted];
}

/** The JSON object a client sent, taken as the wire format says (unchecked: tests assert on it); {} for anything else. */
function parseBody(text: string): ModelRequestBody {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as ModelRequestBody;
  } catch {
    // not JSON: `text` keeps it
  }
  return {};
}

/** Stream the writes, then finish as the spec says: close, drop, or hang until the client goes away. */
function sseResponse(writes: string[], spec: StreamSpec, recorded: RecordedRequest, markAborted: () => void, releases: Set<() => void>): Response {
  const encoder = new TextEncoder();
  let pieces: Uint8Array[] = spec.silent ? [] : writes.map((w) => encoder.encode(w));
  if (spec.byteChunks && spec.byteChunks > 0) pieces = recut(pieces, spec.byteChunks);
  const run = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const stallAt = spec.stall ? JSON.stringify(spec.stall.after).slice(1, -1) : undefined;
    let stalled = false;
    for (const piece of pieces) {
      if (spec.delayMs) await Bun.sleep(spec.delayMs);
      if (recorded.aborted) return;
      controller.enqueue(piece);
      if (stallAt !== undefined && !stalled && new TextDecoder().decode(piece).includes(stallAt)) {
        stalled = true;
        await Bun.sleep(spec.stall!.ms);
      }
    }
    if (spec.end === "drop") {
      await Bun.sleep(5); // let the last chunk leave before the cut
      controller.error(undefined); // Bun resets the connection; `undefined` keeps its console quiet
    } else if (spec.end === "hang") {
      // Until the client aborts, or the server stops (which closes it).
      await new Promise<void>((resolve) => {
        releases.add(resolve);
        // untilAborted never rejects: it resolves when the client aborts, or not at all.
        void recorded.untilAborted.then(resolve);
      });
    } else {
      controller.close();
      recorded.writtenPerf = performance.now();
    }
    recorded.finishedAt ??= Date.now();
  };
  const stream = new ReadableStream<Uint8Array>({
    // Not awaited: the headers must go out while the body is still being written.
    start: (controller) => void run(controller).catch(() => {}),
    // The client went away: count it as aborted even if Bun did not fire the request's signal.
    cancel: () => markAborted(),
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

function recut(pieces: Uint8Array[], size: number): Uint8Array[] {
  const all = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of pieces) {
    all.set(p, offset);
    offset += p.byteLength;
  }
  const out: Uint8Array[] = [];
  for (let i = 0; i < all.byteLength; i += size) out.push(all.subarray(i, i + size));
  return out;
}

/** Split a string into n nearly equal pieces (some may be empty when it is short). */
function split(text: string, n: number): string[] {
  const size = Math.ceil(text.length / Math.max(1, n));
  return Array.from({ length: Math.max(1, n) }, (_, i) => text.slice(i * size, (i + 1) * size));
}

function argumentsOf(call: ToolCallSpec): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

const DEFAULT_USAGE = { input: 10, output: 5 };

/** The Responses API event stream for a spec. */
function responsesWrites(spec: StreamSpec, body: ModelRequestBody, nextId: () => number): string[] {
  const writes: string[] = [];
  let sequence = 0;
  const emit = (type: string, data: Record<string, unknown>) =>
    writes.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const response = { id: `resp_${nextId()}`, object: "response", created_at: 1_700_000_000, model: body.model, status: "in_progress", output: [] as unknown[] };
  emit("response.created", { response });
  emit("response.in_progress", { response });
  const output: unknown[] = [];
  const add = (item: Record<string, unknown>) => emit("response.output_item.added", { output_index: output.length, item });
  const done = (item: Record<string, unknown>) => {
    emit("response.output_item.done", { output_index: output.length, item });
    output.push(item);
  };

  if (spec.reasoning?.length) {
    const id = `rs_${nextId()}`;
    const full = spec.reasoning.join("");
    const at = { item_id: id, output_index: output.length, summary_index: 0 };
    add({ id, type: "reasoning", summary: [] });
    emit("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
    for (const delta of spec.reasoning) emit("response.reasoning_summary_text.delta", { ...at, delta });
    emit("response.reasoning_summary_text.done", { ...at, text: full });
    emit("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text: full } });
    done({ id, type: "reasoning", summary: [{ type: "summary_text", text: full }] });
  }
  if (spec.text?.length) {
    const id = `msg_${nextId()}`;
    const full = spec.text.join("");
    const at = { item_id: id, output_index: output.length, content_index: 0 };
    add({ id, type: "message", status: "in_progress", role: "assistant", content: [] });
    emit("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } });
    for (const delta of spec.text) emit("response.output_text.delta", { ...at, delta, logprobs: [] });
    if (spec.end === "drop" || spec.end === "hang") return writes; // cut off mid-message
    emit("response.output_text.done", { ...at, text: full, logprobs: [] });
    emit("response.content_part.done", { ...at, part: { type: "output_text", text: full, annotations: [] } });
    done({ id, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: full, annotations: [] }] });
  }
  for (const call of spec.toolCalls ?? []) {
    const id = `fc_${nextId()}`;
    const args = argumentsOf(call);
    const item = { id, type: "function_call", status: "in_progress", call_id: call.callId ?? `call_${nextId()}`, name: call.name, arguments: "" };
    add(item);
    for (const delta of split(args, call.pieces ?? 3)) {
      emit("response.function_call_arguments.delta", { item_id: id, output_index: output.length, delta });
    }
    emit("response.function_call_arguments.done", { item_id: id, output_index: output.length, arguments: args });
    done({ ...item, status: "completed", arguments: args });
  }
  for (const call of spec.computerCalls ?? []) {
    const id = `cu_${nextId()}`;
    const item = {
      id,
      type: "computer_call",
      call_id: call.callId ?? `call_${nextId()}`,
      ...(call.action ? { action: call.action } : { actions: call.actions ?? [] }),
      pending_safety_checks: call.safetyChecks ?? [],
      status: "in_progress",
    };
    add(item);
    done({ ...item, status: "completed" });
  }
  const usage = spec.usage === null ? null : usageOf(spec.usage ?? DEFAULT_USAGE);
  const end = spec.end ?? "complete";
  if (end === "complete") emit("response.completed", { response: { ...response, status: "completed", output, usage } });
  if (end === "incomplete") {
    const reason = spec.incompleteReason ?? "max_output_tokens";
    emit("response.incomplete", { response: { ...response, status: "incomplete", incomplete_details: { reason }, output, usage } });
  }
  if (end === "failed") {
    const error = { code: spec.error?.code ?? "server_error", message: spec.error?.message ?? "failed (fake)" };
    emit("response.failed", { response: { ...response, status: "failed", error, output } });
  }
  if (end === "error") emit("error", { code: spec.error?.code ?? null, message: spec.error?.message ?? "error (fake)", param: null });
  return writes;
}

function usageOf(u: { input: number; output: number }) {
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input + u.output,
  };
}

/** Anthropic's Messages event stream for a spec: one content block per reasoning, text and tool call, in that order. */
function anthropicWrites(spec: StreamSpec, body: ModelRequestBody, nextId: () => number): string[] {
  const writes: string[] = [];
  const emit = (type: string, data: Record<string, unknown>) => writes.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = spec.usage === null ? null : (spec.usage ?? DEFAULT_USAGE);
  const inputUsage = usage ? { input_tokens: usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } : undefined;
  emit("message_start", {
    message: {
      id: `msg_${nextId()}`,
      type: "message",
      role: "assistant",
      content: [],
      model: body.model,
      stop_reason: null,
      stop_sequence: null,
      ...(inputUsage ? { usage: inputUsage } : {}),
    },
  });
  emit("ping", {});
  let index = 0;
  if (spec.reasoning?.length) {
    emit("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    for (const thinking of spec.reasoning) emit("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
    emit("content_block_delta", { index, delta: { type: "signature_delta", signature: `sig-fake-${nextId()}` } });
    emit("content_block_stop", { index });
    index++;
  }
  const end = spec.end ?? "complete";
  if (spec.text?.length) {
    emit("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const text of spec.text) emit("content_block_delta", { index, delta: { type: "text_delta", text } });
    if (end === "drop" || end === "hang" || end === "error" || end === "failed")
      return end === "drop" || end === "hang" ? writes : withError(writes, emit, spec);
    emit("content_block_stop", { index });
    index++;
  } else if (end === "drop" || end === "hang") return writes;
  for (const call of spec.toolCalls ?? []) {
    emit("content_block_start", { index, content_block: { type: "tool_use", id: call.callId ?? `toolu_${nextId()}`, name: call.name, input: {} } });
    // The real API opens a tool's input with an empty piece.
    emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
    for (const partial_json of split(argumentsOf(call), call.pieces ?? 3))
      emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
    emit("content_block_stop", { index });
    index++;
  }
  if (end === "error" || end === "failed") return withError(writes, emit, spec);
  const stop_reason =
    end === "incomplete" ? (spec.incompleteReason === "content_filter" ? "refusal" : "max_tokens") : spec.toolCalls?.length ? "tool_use" : "end_turn";
  emit("message_delta", { delta: { stop_reason, stop_sequence: null }, ...(usage ? { usage: { output_tokens: usage.output } } : {}) });
  emit("message_stop", {});
  return writes;
}

/** The stream ends in an `error` event: its type is the scripted code, else overloaded. */
function withError(writes: string[], emit: (type: string, data: Record<string, unknown>) => void, spec: StreamSpec): string[] {
  emit("error", { error: { type: spec.error?.code ?? "overloaded_error", message: spec.error?.message ?? "error (fake)" } });
  return writes;
}

/** The chat-completions chunk stream for a spec. */
function chatWrites(spec: StreamSpec, body: ModelRequestBody, nextId: () => number): string[] {
  const id = `chatcmpl-${nextId()}`;
  const writes: string[] = [];
  const send = (data: unknown) => writes.push(`data: ${JSON.stringify(data)}\n\n`);
  const base = { id, object: "chat.completion.chunk", created: 1_700_000_000, model: body.model, system_fingerprint: "fp_fake" };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    send({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });

  chunk({ role: "assistant", content: "" });
  for (const piece of spec.reasoning ?? []) chunk({ [spec.reasoningField ?? "reasoning_content"]: piece });
  for (const piece of spec.text ?? []) chunk({ content: piece });
  const end = spec.end ?? "complete";
  if (end === "drop" || end === "hang") return writes;
  (spec.toolCalls ?? []).forEach((call, index) => {
    const callId = call.callId ?? `call_${nextId()}`;
    chunk({ tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: "" } }] });
    for (const piece of split(argumentsOf(call), call.pieces ?? 3)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  if (end === "error" || end === "failed") {
    send({ error: { message: spec.error?.message ?? "error (fake)", code: spec.error?.code ?? null } });
    return writes;
  }
  const finish =
    end === "incomplete" ? (spec.incompleteReason === "content_filter" ? "content_filter" : "length") : spec.toolCalls?.length ? "tool_calls" : "stop";
  chunk({}, finish);
  const usage = spec.usage === null ? null : (spec.usage ?? DEFAULT_USAGE);
  if (usage && body.stream_options?.include_usage) {
    send({ ...base, choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } });
  }
  writes.push("data: [DONE]\n\n");
  return writes;
}
