/**
 * What the Telegram adapter tests share: a config pointing at the fake, a
 * logger whose lines are captured (and which does NOT redact, so a token
 * that reaches it is caught), and an AdapterContext wired like the daemon's:
 * a real SQLite database in a temp dir, the real inbox and Dispatcher, and a
 * gateway stand-in that records what reached it.
 */
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AdapterContext } from "../../../src/channels/types.ts";
import type { Submission, SubmitResult } from "../../../src/message/index.ts";
import type { Config } from "../../../src/config/schema.ts";
import { pathsFor } from "../../../src/config/paths.ts";
import { Logger, Redactor } from "../../../src/kernel/log.ts";
import { Telemetry } from "../../../src/kernel/telemetry.ts";
import { Dispatcher } from "../../../src/gateway/dispatch.ts";
import type { Gateway } from "../../../src/gateway/ingest.ts";
import type { InboundMessage } from "../../../src/message/index.ts";
import { TaskSupervisor } from "../../../src/gateway/supervisor.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { IdempotencyStore } from "../../../src/store/idempotency.ts";
import { Inbox } from "../../../src/store/inbox.ts";
import { ALICE, type TelegramFake } from "../../fakes/telegram.ts";
import { ACP_OFF, telegramToml } from "../../helpers/config.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

/** A config whose Telegram channel talks to the fake. */
export function configFor(fake: Pick<TelegramFake, "token" | "url">, token = fake.token): Config {
  return loadedFrom(telegramToml({ botToken: token, apiRoot: fake.url, ownerUserId: String(ALICE.id) }) + ACP_OFF).config;
}

/** A redactor that knows no secrets: whatever the adapter lets through shows up in the lines. */
class NoRedaction extends Redactor {
  override add(): void {}
}

/** A logger writing into an array. */
export function captureLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new Logger({ write: (l) => lines.push(l) }, "debug", new NoRedaction()), lines };
}

export interface TestContext {
  context: AdapterContext;
  db: Database;
  inbox: Inbox;
  /** Every message the gateway stand-in received (albums arrive merged). */
  ingested: InboundMessage[];
  /** Every item handed to submit, in order, across adapters sharing this context. */
  submitted: Submission[];
  lines: string[];
  /** Make the next submit fail the way the dispatcher does at capacity (after its transaction). */
  failNextSubmit(error: Error): void;
  close(): void;
}

/** A context over a fresh database in a temp dir (or `dir`, to reopen one after a "restart"). */
export function makeContext(config: Config, opts: { dir?: string; albumDebounceMs?: number } = {}): TestContext & { dir: string } {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "fermix-tg-"));
  const db = openDatabase(join(dir, "fermix.db"));
  const idempotency = new IdempotencyStore(db);
  const inbox = new Inbox(db, idempotency);
  const { log, lines } = captureLog();
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
    albumDebounceMs: { telegram: opts.albumDebounceMs ?? 50 },
    telemetry,
    log,
  });
  let failure: Error | undefined;
  const context: AdapterContext = {
    config,
    paths: pathsFor(dir),
    db,
    log: log.child({ component: "telegram" }),
    telemetry,
    async submit(items, commit): Promise<SubmitResult> {
      if (failure) {
        const error = failure;
        failure = undefined;
        // As the dispatcher at capacity: the transaction (cursor included) commits, then the hand-off fails.
        db.transaction(() => commit?.())();
        throw error;
      }
      submitted.push(...items);
      return dispatcher.submit("telegram", items, commit);
    },
    ingest: async () => "dropped",
    stopConversation: () => {},
  };
  return {
    dir,
    context,
    db,
    inbox,
    ingested,
    submitted,
    lines,
    failNextSubmit: (error) => void (failure = error),
    close() {
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Poll until `probe` is truthy (the adapter runs its loop in the background). */
export async function eventually<T>(probe: () => T | undefined | null | false, timeoutMs = 5000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}
