/**
 * What the channel adapter tests share: a logger whose lines are captured
 * (and which does NOT redact, so a token that reaches it is caught), and the
 * daemon's wiring behind an AdapterContext — a real SQLite database in a temp
 * dir, the real inbox and Dispatcher, and a gateway stand-in that records
 * what reached it. Each adapter's harness adds its own way of failing a
 * submit on top (`handOn` is what a submit that succeeds does).
 */
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import type { AdapterContext } from "../../src/channels/types.ts";
import { pathsFor } from "../../src/config/paths.ts";
import type { ChannelName, Config } from "../../src/config/schema.ts";
import { Dispatcher } from "../../src/gateway/dispatch.ts";
import type { Gateway } from "../../src/gateway/ingest.ts";
import { TaskSupervisor } from "../../src/gateway/supervisor.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import type { InboundMessage, Submission, SubmitResult } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { IdempotencyStore } from "../../src/store/idempotency.ts";
import { Inbox } from "../../src/store/inbox.ts";

/** A redactor that remembers what it was told but redacts nothing: whatever the adapter lets through shows up in the lines. */
export class RecordingRedactor extends Redactor {
  readonly told: string[] = [];
  override add(...values: Array<string | undefined>): void {
    for (const v of values) if (v) this.told.push(v);
  }
}

/** A logger writing into an array, redacting nothing. */
export function captureLog(): { log: Logger; lines: string[]; redactor: RecordingRedactor } {
  const lines: string[] = [];
  const redactor = new RecordingRedactor();
  return { log: new Logger({ write: (l) => void lines.push(l) }, "debug", redactor), lines, redactor };
}

export interface AdapterTestBase {
  dir: string;
  db: Database;
  inbox: Inbox;
  /** Every message the gateway stand-in received (albums arrive merged). */
  ingested: InboundMessage[];
  /** Every item handed on by a submit, in order. */
  submitted: Submission[];
  lines: string[];
  /** Values the adapter asked the logger to redact. */
  redacted: string[];
  /** What a submit that succeeds does: record the items and hand them to the Dispatcher. */
  handOn(items: Submission[], commit?: () => void): Promise<SubmitResult>;
  /** The AdapterContext for `config`, whose submit is `submit`. */
  contextFor(config: Config, submit: AdapterContext["submit"]): AdapterContext;
  close(): void;
}

/** A fresh database in a temp dir (or `dir`, to reopen one after a "restart"), wired as the daemon wires it for `channel`. */
export function adapterTestBase(channel: ChannelName, opts: { dir?: string; albumDebounceMs?: number } = {}): AdapterTestBase {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), `fermix-${channel}-`));
  const db = openDatabase(join(dir, "fermix.db"));
  const inbox = new Inbox(db, new IdempotencyStore(db));
  const { log, lines, redactor } = captureLog();
  const ingested: InboundMessage[] = [];
  const submitted: Submission[] = [];
  const gateway = {
    ingest: async (message: InboundMessage, options: { inboxIds?: number[] } = {}) => {
      ingested.push(message);
      inbox.complete(options.inboxIds ?? []);
      return "answered" as const;
    },
  } as unknown as Gateway;
  const telemetry = new Telemetry();
  const dispatcher = new Dispatcher({
    db,
    inbox,
    supervisor: new TaskSupervisor(64, log),
    gateway,
    albumDebounceMs: opts.albumDebounceMs !== undefined ? { [channel]: opts.albumDebounceMs } : {},
    viaWebhook: (name) => profileOf(name).mode === "webhook",
    telemetry,
    log,
  });
  return {
    dir,
    db,
    inbox,
    ingested,
    submitted,
    lines,
    redacted: redactor.told,
    handOn(items, commit) {
      submitted.push(...items);
      return dispatcher.submit(channel, items, commit);
    },
    contextFor: (config, submit) => ({
      config,
      paths: pathsFor(dir),
      db,
      log: log.child({ component: channel }),
      telemetry,
      submit,
      ingest: async () => "dropped",
      stopConversation: () => {},
    }),
    close() {
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
