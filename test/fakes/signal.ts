/**
 * The test side of the fake signal-cli (signal-cli.ts beside this file): a
 * private folder with an executable wrapper to configure as `cli_path`, the
 * attachment store to configure as `attachments_dir`, builders of the
 * envelopes signal-cli prints, and readers of what the fake recorded. The
 * child itself is started by whoever runs `cli_path` (the adapter, or the
 * compiled daemon), so everything here works across processes.
 *
 *   const fake = startSignalFake();
 *   // config: account = fake.account, cli_path = fake.cliPath, attachments_dir = fake.attachmentsDir
 *   await fake.waitForStarts(1);
 *   await fake.receive(fake.envelope.text("hello", { from: SIGNAL_ALICE }));
 *   await fake.waitForCall("send");
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { waitFor } from "./recorder.ts";

export interface SignalPerson {
  uuid: string;
  number: string;
  name: string;
}

export const SIGNAL_ACCOUNT = "+15550001111";
export const SIGNAL_ALICE: SignalPerson = { uuid: "a11ce000-0000-4000-8000-00000000a11c", number: "+15550002222", name: "Alice" };
export const SIGNAL_BOB: SignalPerson = { uuid: "b0b00000-0000-4000-8000-000000000b0b", number: "+15550003333", name: "Bob" };
/** A group both are in (signal-cli prints group ids in base64). */
export const SIGNAL_GROUP = "Pmpi+EfPWmsxiomLe9Nx2XF9HOE483p6iKiFj65iMwI=";

const SCRIPT = resolve(import.meta.dir, "signal-cli.ts");

/** A request's params as Fermix sends them (src/channels/signal/outbound.ts), read back from the fake's record. */
export interface SignalCallParams {
  /** A person's UUID or number, or several. */
  recipient?: string | string[];
  groupId?: string;
  message?: string;
  attachment?: string;
  attachments?: string[];
  /** Sent (true) for a message that should not notify. */
  noUrgent?: boolean;
  emoji?: string;
  remove?: boolean;
  targetAuthor?: string;
  targetTimestamp?: number;
}

/** signal-cli's result: `send`, `sendReaction`, `remoteDelete` give { timestamp, results }, `version` { version }, `sendTyping` {}. */
export interface SignalResult {
  timestamp?: number;
  results?: Array<{ recipientAddress: { number: string | null; uuid: string | null }; type: string }>;
  version?: string;
}

export interface RecordedSignalCall {
  pid: number;
  at: number;
  /** As Fermix sent it (the fake records only requests that name a method). */
  request: { jsonrpc: string; method: string; params?: SignalCallParams; id?: number | string };
  /** What the fake answered; null when it was told to hold the request. */
  response: { result?: SignalResult; error?: { code: number; message: string } } | null;
  files?: Array<{ path: string; name: string; size: number }>;
}

export interface SignalAttachment {
  contentType: string;
  filename: string | null;
  id: string;
  size: number;
}

export interface EnvelopeOptions {
  from?: SignalPerson;
  /** A group message when set. */
  groupId?: string;
  attachments?: SignalAttachment[];
  /** The sender's timestamp (default: now, unique). */
  timestamp?: number;
  /** Leave the UUID out, as for a sender signal-cli knows only by number. */
  noUuid?: boolean;
}

/** A message the bot sent, as the user's phone would show it. */
export interface SignalVisible {
  timestamp: number;
  text: string;
  /** False when sent with noUrgent (no push notification). */
  notified: boolean;
  files: Array<{ name: string; size: number }>;
}

let lastTimestamp = 0;
const uniqueTimestamp = () => (lastTimestamp = Math.max(Date.now(), lastTimestamp + 1));

export interface SignalFake {
  readonly dir: string;
  readonly account: string;
  /** The executable to configure as `cli_path`. */
  readonly cliPath: string;
  readonly attachmentsDir: string;
  /** Builders of signal-cli `receive` params. */
  readonly envelope: {
    text(text: string, options?: EnvelopeOptions): Record<string, unknown>;
    receipt(from?: SignalPerson): Record<string, unknown>;
    typing(from?: SignalPerson): Record<string, unknown>;
    sync(from?: SignalPerson): Record<string, unknown>;
    story(from?: SignalPerson): Record<string, unknown>;
  };
  /** Make the next starts fail like an unregistered account (or clear that with undefined). */
  failStarts(failure: { code: number; stderr: string } | undefined): void;
  /** Put a file in the attachment store, as signal-cli does when it receives one. */
  addAttachment(bytes: Uint8Array, contentType: string, filename: string | null): SignalAttachment;
  /** Write a `receive` notification with these params to the running fake's stdout. */
  receive(params: Record<string, unknown>): Promise<void>;
  /** Write any line to stdout. */
  raw(line: string): Promise<void>;
  /** Answer the next `times` requests of `method` with this JSON-RPC error. */
  fail(method: string, error: { code: number; message: string }, times?: number): Promise<void>;
  /** Answer the next `times` `send` requests that name attachments with this JSON-RPC error; text-only sends go through. */
  failAttachmentSends(error: { code: number; message: string }, times?: number): Promise<void>;
  /** Never answer the next request of `method`. */
  hold(method: string): Promise<void>;
  /** Kill the running fake (it exits with `code`, after writing `stderr`). */
  exit(code: number, stderr?: string): Promise<void>;
  starts(): Array<{ pid: number; argv: string[]; at: number }>;
  waitForStarts(count: number, timeoutMs?: number): Promise<Array<{ pid: number; argv: string[]; at: number }>>;
  requests(): RecordedSignalCall[];
  calls(method: string): RecordedSignalCall[];
  waitForCall(method: string, match?: (call: RecordedSignalCall) => boolean, timeoutMs?: number): Promise<RecordedSignalCall>;
  /** The bot's messages in a conversation (a person's UUID or number, or `group:<id>`), deleted ones gone. */
  visible(chatId: string): SignalVisible[];
  /** Reactions sent, oldest first. */
  reactions(): Array<{ emoji: string; targetAuthor: string; targetTimestamp: number; to: string }>;
  stop(): Promise<void>;
}

/** Make a fresh fake: its folder, wrapper and attachment store. Nothing runs until `cliPath` is started. */
export function startSignalFake(options: { account?: string } = {}): SignalFake {
  const dir = mkdtempSync(join(tmpdir(), "fermix-signal-fake-"));
  const account = options.account ?? SIGNAL_ACCOUNT;
  const attachmentsDir = join(dir, "attachments");
  mkdirSync(attachmentsDir);
  const config: { account: string; startFailure?: { code: number; stderr: string } } = { account };
  const writeConfig = () => writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  writeConfig();
  const cliPath = join(dir, "signal-cli");
  // A tiny wrapper, so the fake knows its folder whoever starts it and whatever environment it gets.
  writeFileSync(cliPath, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(SCRIPT)} --fake-dir ${JSON.stringify(dir)} "$@"\n`);
  chmodSync(cliPath, 0o755);

  const readJsonl = <T>(name: string): T[] => {
    const path = join(dir, name);
    if (!existsSync(path)) return [];
    return readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as T);
  };

  /** POST to the running fake's control server, waiting for one to be up (it may be restarting). */
  const control = async (path: string, body: unknown, timeoutMs = 10_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const { port } = JSON.parse(readFileSync(join(dir, "control.json"), "utf8")) as { port: number };
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { "content-type": "application/json" },
        });
        if (res.ok) return;
      } catch {
        // No fake running yet, or the one named there just died.
      }
      if (Date.now() > deadline) throw new Error(`no fake signal-cli answered ${path} within ${timeoutMs} ms`);
      await Bun.sleep(20);
    }
  };

  const envelopeBase = (from: SignalPerson, noUuid = false) => ({
    source: noUuid ? from.number : from.uuid,
    sourceNumber: from.number,
    sourceUuid: noUuid ? null : from.uuid,
    sourceName: from.name,
    sourceDevice: 1,
    timestamp: uniqueTimestamp(),
    serverReceivedTimestamp: Date.now(),
    serverDeliveredTimestamp: Date.now(),
  });

  let attachmentCount = 0;
  const requests = () => readJsonl<RecordedSignalCall>("requests.jsonl");
  const toOf = (params: SignalCallParams): string[] => {
    if (params.groupId !== undefined) return [`group:${params.groupId}`];
    const list = Array.isArray(params.recipient) ? params.recipient : [params.recipient];
    return list.map(String);
  };

  return {
    dir,
    account,
    cliPath,
    attachmentsDir,
    envelope: {
      text(text, o = {}) {
        const base = envelopeBase(o.from ?? SIGNAL_ALICE, o.noUuid);
        const timestamp = o.timestamp ?? base.timestamp;
        const dataMessage: Record<string, unknown> = {
          timestamp,
          message: text,
          expiresInSeconds: 0,
          isExpirationUpdate: false,
          viewOnce: false,
          ...(o.attachments ? { attachments: o.attachments } : {}),
          ...(o.groupId ? { groupInfo: { groupId: o.groupId, groupName: "Test group", revision: 3, type: "DELIVER" } } : {}),
        };
        return { envelope: { ...base, timestamp, dataMessage }, account };
      },
      receipt: (from = SIGNAL_ALICE) => ({
        envelope: { ...envelopeBase(from), receiptMessage: { when: Date.now(), isDelivery: true, isRead: false, isViewed: false, timestamps: [1] } },
        account,
      }),
      typing: (from = SIGNAL_ALICE) => ({ envelope: { ...envelopeBase(from), typingMessage: { action: "STARTED", timestamp: Date.now() } }, account }),
      sync: (from = SIGNAL_ALICE) => ({
        envelope: {
          ...envelopeBase(from),
          syncMessage: {
            sentMessage: { destination: SIGNAL_BOB.number, destinationUuid: SIGNAL_BOB.uuid, timestamp: Date.now(), message: "sent from my phone" },
          },
        },
        account,
      }),
      story: (from = SIGNAL_ALICE) => ({
        envelope: { ...envelopeBase(from), storyMessage: { allowsReplies: true, textAttachment: { text: "a story" } } },
        account,
      }),
    },
    failStarts(failure) {
      if (failure) config.startFailure = failure;
      else delete config.startFailure;
      writeConfig();
    },
    addAttachment(bytes, contentType, filename) {
      // signal-cli stores the file under its attachment id, with an extension from the name or type.
      const extension = filename?.includes(".") ? filename.slice(filename.lastIndexOf(".")) : `.${contentType.split("/")[1] ?? "bin"}`;
      const id = `Att${++attachmentCount}_${Math.random().toString(36).slice(2, 10)}${extension}`;
      writeFileSync(join(attachmentsDir, id), bytes);
      return { contentType, filename, id, size: bytes.byteLength };
    },
    receive: (params) => control("/notify", { params }),
    raw: (line) => control("/raw", { line }),
    fail: (method, error, times = 1) => control("/fail", { method, error, times }),
    failAttachmentSends: (error, times = 1) => control("/fail", { method: "send", error, times, attachments: true }),
    hold: (method) => control("/hold", { method }),
    exit: (code, stderr) => control("/exit", { code, stderr }),
    starts: () => readJsonl("starts.jsonl"),
    waitForStarts(count, timeoutMs = 10_000) {
      return waitFor(
        () => {
          const all = readJsonl<{ pid: number; argv: string[]; at: number }>("starts.jsonl");
          return all.length >= count ? all : undefined;
        },
        { timeoutMs, what: `${count} start(s) of the fake signal-cli` },
      );
    },
    requests,
    calls: (method) => requests().filter((c) => c.request.method === method),
    waitForCall(method, match = () => true, timeoutMs = 10_000) {
      return waitFor(() => requests().find((c) => c.request.method === method && match(c)), { timeoutMs, what: `a ${method} request` });
    },
    visible(chatId) {
      const all = requests();
      const deleted = new Set(
        all
          .filter((c) => c.request.method === "remoteDelete" && c.response?.result && toOf(c.request.params ?? {}).includes(chatId))
          .map((c) => c.request.params!.targetTimestamp!),
      );
      return all
        .filter((c) => c.request.method === "send" && c.response?.result && toOf(c.request.params ?? {}).includes(chatId))
        .map((c) => ({
          timestamp: c.response!.result!.timestamp!,
          text: String(c.request.params?.message ?? ""),
          notified: c.request.params?.noUrgent !== true,
          files: (c.files ?? []).map((f) => ({ name: f.name, size: f.size })),
        }))
        .filter((m) => !deleted.has(m.timestamp));
    },
    reactions() {
      return requests()
        .filter((c) => c.request.method === "sendReaction" && c.response?.result)
        .map((c) => {
          // The fake answers a reaction only when it names all three (test/fakes/signal-cli.ts).
          const p = c.request.params!;
          return { emoji: p.emoji!, targetAuthor: p.targetAuthor!, targetTimestamp: p.targetTimestamp!, to: toOf(p)[0]! };
        });
    },
    async stop() {
      // The fake's own process is stopped by whoever started it; a leftover one ends when its stdin closes.
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
