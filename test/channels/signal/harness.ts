/**
 * What the Signal adapter tests share: a config pointing at a fake signal-cli,
 * a logger whose lines are captured (without redaction of its own, so what
 * the adapter lets through shows), and an AdapterContext wired like the
 * daemon's: a real SQLite database, the real inbox and Dispatcher (test/helpers/adapter-context.ts), and a
 * gateway stand-in that records what reached it.
 */
import { SignalAdapter, type SignalAdapterOptions } from "../../../src/channels/signal/index.ts";
import type { AdapterContext } from "../../../src/channels/types.ts";
import type { Config } from "../../../src/config/schema.ts";
import type { InboundMessage, Submission, SubmitResult } from "../../../src/message/index.ts";
import type { Inbox } from "../../../src/store/inbox.ts";
import { waitFor } from "../../fakes/recorder.ts";
import { SIGNAL_ALICE, type SignalFake, startSignalFake } from "../../fakes/signal.ts";
import { adapterTestBase } from "../../helpers/adapter-context.ts";
import { ACP_OFF, signalToml, TELEGRAM_OFF } from "../../helpers/config.ts";
import { loadedFrom } from "../../helpers/loaded.ts";
import { until } from "../../helpers/wait.ts";

/** A config whose Signal channel runs the fake, with Alice (by UUID) as the owner. */
export function configFor(fake: SignalFake, extra: { cliPath?: string; ownerUserId?: string } = {}): Config {
  return loadedFrom(
    signalToml({
      account: fake.account,
      cliPath: extra.cliPath ?? fake.cliPath,
      attachmentsDir: fake.attachmentsDir,
      ownerUserId: extra.ownerUserId ?? SIGNAL_ALICE.uuid,
    }) +
      TELEGRAM_OFF +
      ACP_OFF,
  ).config;
}

export interface SignalTestContext {
  context: AdapterContext;
  inbox: Inbox;
  /** Every message the gateway stand-in received. */
  ingested: InboundMessage[];
  /** Every item handed to submit, in order. */
  submitted: Submission[];
  lines: string[];
  /** Values the adapter asked the logger to redact. */
  redacted: string[];
  /** Make the next `count` submits fail with `error` (as the dispatcher does at capacity). */
  failSubmits(error: Error, count?: number): void;
  close(): void;
}

export function makeContext(config: Config): SignalTestContext {
  const base = adapterTestBase("signal");
  let failures: Error[] = [];
  const context = base.contextFor(config, async (items): Promise<SubmitResult> => {
    const failure = failures.shift();
    if (failure) throw failure;
    return base.handOn(items);
  });
  const failSubmits = (error: Error, count = 1) => {
    failures = Array.from({ length: count }, () => error);
  };
  return { ...base, context, failSubmits };
}

/** Fast restarts and short timeouts for tests; everything else as in production. */
export const FAST: SignalAdapterOptions = {
  backoff: { initialMs: 20, maxMs: 200 },
  submitBackoff: { initialMs: 10, maxMs: 50 },
  probeTimeoutMs: 10_000,
};

/** A fake, an adapter on it, started in a context, ready to send. */
export async function startAdapter(options: SignalAdapterOptions = {}, fake = startSignalFake()) {
  const config = configFor(fake);
  const ctx = makeContext(config);
  const adapter = new SignalAdapter(config, { ...FAST, ...options });
  await adapter.start(ctx.context);
  await waitReady(adapter);
  return {
    fake,
    adapter,
    ctx,
    async close() {
      await adapter.stop();
      ctx.close();
      await fake.stop();
    },
  };
}

/** Wait until the adapter says its child is ready. */
export async function waitReady(adapter: SignalAdapter, timeoutMs = 10_000): Promise<void> {
  await until("the signal adapter to be ready", () => adapter.state().status === "ready", timeoutMs).catch(() => {
    throw new Error(`signal adapter not ready: ${JSON.stringify(adapter.state())}`);
  });
}

/** Poll until `probe` is truthy. */
export const eventually = <T>(probe: () => T | undefined | null | false, timeoutMs = 10_000, what = "condition"): Promise<T> =>
  waitFor(probe, { timeoutMs, what });
