#!/usr/bin/env bun
/**
 * A fake `signal-cli` executable for tests: `signal-cli [--fake-dir DIR] -a ACCOUNT jsonRpc`
 * speaks JSON-RPC 2.0 over stdin/stdout, one object per line, the way
 * signal-cli-jsonrpc(5) describes: requests in, responses and `receive`
 * notifications out, its log on stderr. The test drives it from
 * test/fakes/signal.ts (which writes a wrapper script passing --fake-dir).
 *
 * In DIR it reads `config.json` ({ account, startFailure? }) at start and
 * keeps:
 * - `starts.jsonl`: one line per start ({ pid, argv, at });
 * - `requests.jsonl`: one line per request answered ({ pid, at, request,
 *   response, files? }: files are the attachments as read at that moment);
 * - `control.json`: { pid, port } of a loopback HTTP control server that
 *   takes POST /notify { params } (write a `receive` notification), /raw
 *   { line } (write any stdout line), /fail { method, error, times?,
 *   attachments? } (answer the next such requests — with `attachments: true`
 *   only those that name files — with that JSON-RPC error), /hold { method } (never
 *   answer the next such request), /exit { code, stderr? } (die now).
 *
 * Results are shaped like signal-cli's: `send`, `sendReaction` and
 * `remoteDelete` return { timestamp, results }, `sendTyping` returns {},
 * `version` returns { version }; errors use its codes (-1 user error,
 * -32601 unknown method, -32600 invalid request).
 */
import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { basename, join } from "node:path";

interface FakeConfig {
  account: string;
  /** Exit at once with this code and stderr line, as signal-cli does for an unregistered account. */
  startFailure?: { code: number; stderr: string };
}

const argv = process.argv.slice(2);
const stdoutLine = (value: unknown) => writeSync(1, `${typeof value === "string" ? value : JSON.stringify(value)}\n`);
const stderrLine = (text: string) => writeSync(2, `${text}\n`);

function option(name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

const dir = option("--fake-dir") ?? process.env.FAKE_SIGNAL_DIR;
if (!dir) {
  stderrLine("fake signal-cli: no --fake-dir");
  process.exit(2);
}
const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as FakeConfig;
appendFileSync(join(dir, "starts.jsonl"), `${JSON.stringify({ pid: process.pid, argv, at: Date.now() })}\n`);

const account = option("-a") ?? option("--account");
if (!argv.includes("jsonRpc")) {
  stderrLine("usage: signal-cli [-a ACCOUNT] jsonRpc (the fake knows no other command)");
  process.exit(1);
}
if (config.startFailure) {
  stderrLine(config.startFailure.stderr);
  process.exit(config.startFailure.code);
}
if (account !== config.account) {
  stderrLine(`User ${account ?? "(none)"} is not registered.`);
  process.exit(1);
}
stderrLine(`INFO  fake signal-cli started for ${account}`);

type RpcError = { code: number; message: string };
/** What test/fakes/signal.ts posts to the control server (each path reads its own fields). */
interface ControlBody {
  params?: unknown;
  line?: string;
  method?: string;
  error?: RpcError;
  times?: number;
  /** With /fail: only requests that name attachments fail. */
  attachments?: boolean;
  code?: number;
  stderr?: string;
}
/** A JSON-RPC request or its params: any JSON object (Fermix's, or a test's deliberately broken one). */
type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);
const failures = new Map<string, RpcError[]>();
const held = new Map<string, number>();
let lastTimestamp = 0;
const nextTimestamp = () => (lastTimestamp = Math.max(Date.now(), lastTimestamp + 1));

const controlServer = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    const body = req.method === "POST" ? ((await req.json()) as ControlBody) : {};
    switch (path) {
      case "/ping":
        return Response.json({ pid: process.pid });
      case "/notify":
        stdoutLine({ jsonrpc: "2.0", method: "receive", params: body.params });
        return Response.json({ ok: true });
      case "/raw":
        stdoutLine(String(body.line));
        return Response.json({ ok: true });
      case "/fail": {
        const method = body.attachments ? `${String(body.method)}+attachments` : String(body.method);
        const list = failures.get(method) ?? [];
        for (let i = 0; i < (body.times ?? 1); i++) list.push(body.error!);
        failures.set(method, list);
        return Response.json({ ok: true });
      }
      case "/hold": {
        const method = String(body.method);
        held.set(method, (held.get(method) ?? 0) + 1);
        return Response.json({ ok: true });
      }
      case "/exit":
        if (body.stderr) stderrLine(String(body.stderr));
        forgetControl();
        setTimeout(() => process.exit(Number(body.code ?? 1)), 0);
        return Response.json({ ok: true });
    }
    return new Response("not found", { status: 404 });
  },
});

// Announce the control port atomically: the test never reads a half-written file.
const controlFile = join(dir, "control.json");
writeFileSync(`${controlFile}.${process.pid}`, JSON.stringify({ pid: process.pid, port: controlServer.port }));
renameSync(`${controlFile}.${process.pid}`, controlFile);

function forgetControl(): void {
  try {
    const current = JSON.parse(readFileSync(controlFile, "utf8")) as { pid: number };
    if (current.pid === process.pid) rmSync(controlFile, { force: true });
  } catch {
    // Already gone or replaced by a newer fake.
  }
}
process.on("exit", forgetControl);
process.on("SIGTERM", () => process.exit(143));

const results = (recipients: unknown) => {
  const list = Array.isArray(recipients) ? recipients : recipients === undefined ? [] : [recipients];
  return list.map((r) => ({ recipientAddress: { number: String(r).startsWith("+") ? r : null, uuid: String(r).startsWith("+") ? null : r }, type: "SUCCESS" }));
};

/** The files a request names: `attachments` (a list) or `attachment` (one). */
function attachmentPaths(params: JsonObject): string[] {
  if (Array.isArray(params.attachments)) return params.attachments.map(String);
  return params.attachment ? [String(params.attachment)] : [];
}

/** The answer signal-cli would give, or an error. */
function answer(method: string, params: JsonObject): { result: unknown } | { error: RpcError } {
  const hasTarget = params.recipient !== undefined || params.groupId !== undefined;
  switch (method) {
    case "version":
      return { result: { version: "0.14.7-fake" } };
    case "send": {
      if (!hasTarget) return { error: { code: -1, message: "No recipients given" } };
      const attachments = attachmentPaths(params);
      for (const path of attachments) {
        if (!existsSync(path))
          return { error: { code: -32603, message: `Failed to send message: ${path} (No such file or directory) (AttachmentInvalidException)` } };
      }
      if (!params.message && attachments.length === 0) {
        return { error: { code: -1, message: "Sending empty message is not allowed, either a message, attachment or sticker must be given." } };
      }
      return { result: { timestamp: nextTimestamp(), results: results(params.recipient ?? params.groupId) } };
    }
    case "sendReaction":
      if (!hasTarget) return { error: { code: -1, message: "No recipients given" } };
      if (!params.emoji || !params.targetAuthor || typeof params.targetTimestamp !== "number") {
        return { error: { code: -32600, message: "emoji, targetAuthor and targetTimestamp are required" } };
      }
      return { result: { timestamp: nextTimestamp(), results: results(params.recipient ?? params.groupId) } };
    case "remoteDelete":
      if (!hasTarget) return { error: { code: -1, message: "No recipients given" } };
      if (typeof params.targetTimestamp !== "number") return { error: { code: -32600, message: "targetTimestamp is required" } };
      return { result: { timestamp: nextTimestamp(), results: results(params.recipient ?? params.groupId) } };
    case "sendTyping":
      if (!hasTarget) return { error: { code: -1, message: "No recipients given" } };
      return { result: {} };
  }
  return { error: { code: -32601, message: "Method not implemented" } };
}

function handle(line: string): void {
  let request: JsonObject;
  try {
    const parsed: unknown = JSON.parse(line);
    // JSON that is not an object names no method either: answered below as signal-cli answers that.
    request = isObject(parsed) ? parsed : {};
  } catch {
    stdoutLine({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null });
    return;
  }
  const record = (response: unknown, files?: unknown) =>
    appendFileSync(join(dir!, "requests.jsonl"), `${JSON.stringify({ pid: process.pid, at: Date.now(), request, response, ...(files ? { files } : {}) })}\n`);
  if (typeof request.method !== "string") {
    const response = { jsonrpc: "2.0", error: { code: -32600, message: "method field must be set", data: null }, id: request.id ?? null };
    record(response);
    stdoutLine(response);
    return;
  }
  const method = request.method;
  const hold = held.get(method) ?? 0;
  if (hold > 0) {
    held.set(method, hold - 1);
    record(null);
    return;
  }
  const params = isObject(request.params) ? request.params : {};
  // The files as signal-cli would read them now: name and size of what each path points at.
  const paths = attachmentPaths(params);
  const files = paths.length ? paths.map((path) => ({ path, name: basename(path), size: existsSync(path) ? statSync(path).size : -1 })) : undefined;
  const injected = (paths.length > 0 ? failures.get(`${method}+attachments`)?.shift() : undefined) ?? failures.get(method)?.shift();
  const outcome = injected ? { error: injected } : answer(method, params);
  const response = { jsonrpc: "2.0", ...outcome, id: request.id };
  record(response, files);
  if (request.id !== undefined) stdoutLine(response);
}

// Requests, one per line, until stdin ends: then signal-cli's jsonRpc exits too.
const decoder = new TextDecoder();
let buffer = "";
for await (const chunk of Bun.stdin.stream()) {
  buffer += decoder.decode(chunk, { stream: true });
  let newline = buffer.indexOf("\n");
  while (newline >= 0) {
    const line = buffer.slice(0, newline).trim();
    buffer = buffer.slice(newline + 1);
    if (line) handle(line);
    newline = buffer.indexOf("\n");
  }
}
controlServer.stop(true);
process.exit(0);
