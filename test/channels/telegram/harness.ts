/**
 * What the Telegram adapter tests share: a config pointing at the fake, a
 * logger whose lines are captured (and which does NOT redact, so a token
 * that reaches it is caught), and an AdapterContext wired like the daemon's:
 * a real SQLite database in a temp dir, the real inbox and Dispatcher (test/helpers/adapter-context.ts), and a
 * gateway stand-in that records what reached it.
 */
import type { Database } from "bun:sqlite";
import type { AdapterContext } from "../../../src/channels/types.ts";
import type { Config } from "../../../src/config/schema.ts";
import type { InboundMessage, Submission, SubmitResult } from "../../../src/message/index.ts";
import type { Inbox } from "../../../src/store/inbox.ts";
import { waitFor } from "../../fakes/recorder.ts";
import { ALICE, type TelegramFake } from "../../fakes/telegram.ts";
import { adapterTestBase } from "../../helpers/adapter-context.ts";
import { ACP_OFF, telegramToml } from "../../helpers/config.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

/** A config whose Telegram channel talks to the fake. */
export function configFor(fake: Pick<TelegramFake, "token" | "url">, token = fake.token): Config {
  return loadedFrom(telegramToml({ botToken: token, apiRoot: fake.url, ownerUserId: String(ALICE.id) }) + ACP_OFF).config;
}

export { captureLog } from "../../helpers/adapter-context.ts";

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
  const base = adapterTestBase("telegram", { ...(opts.dir ? { dir: opts.dir } : {}), albumDebounceMs: opts.albumDebounceMs ?? 50 });
  let failure: Error | undefined;
  const context = base.contextFor(config, async (items, commit): Promise<SubmitResult> => {
    if (failure) {
      const error = failure;
      failure = undefined;
      // As the dispatcher at capacity: the transaction (cursor included) commits, then the hand-off fails.
      base.db.transaction(() => commit?.())();
      throw error;
    }
    return base.handOn(items, commit);
  });
  const failNextSubmit = (error: Error) => {
    failure = error;
  };
  return { ...base, context, failNextSubmit };
}

/** Poll until `probe` is truthy (the adapter runs its loop in the background). */
export const eventually = <T>(probe: () => T | undefined | null | false, timeoutMs = 5000, what = "condition"): Promise<T> =>
  waitFor(probe, { timeoutMs, what });
