/**
 * What the Discord adapter tests share: a config pointing at the fake, a
 * logger whose lines are captured (without redaction, so a token that
 * reaches it is caught), waits that are recorded and cut short, an
 * AdapterContext wired like the daemon's (a real SQLite database, the real
 * inbox and Dispatcher, a gateway stand-in that records what reached it),
 * and a bare GatewayClient for the connection tests.
 */
import type { Database } from "bun:sqlite";
import { DiscordApi } from "../../../src/channels/discord/api.ts";
import { type DispatchHandler, GatewayClient, type GatewayClientOptions } from "../../../src/channels/discord/gateway.ts";
import type { AdapterContext } from "../../../src/channels/types.ts";
import type { Config } from "../../../src/config/schema.ts";
import { type Sleep, sleep } from "../../../src/kernel/wait.ts";
import type { InboundMessage, Submission, SubmitResult } from "../../../src/message/index.ts";
import type { Inbox } from "../../../src/store/inbox.ts";
import { DISCORD_ALICE, type DiscordFake } from "../../fakes/discord.ts";
import { waitFor } from "../../fakes/recorder.ts";
import { adapterTestBase, captureLog } from "../../helpers/adapter-context.ts";
import { ACP_OFF, TELEGRAM_OFF, tomlTable } from "../../helpers/config.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

/** A config whose Discord channel talks to the fake, owned by Alice. */
export function configFor(fake: Pick<DiscordFake, "token" | "apiBase">, extra: Record<string, string> = {}): Config {
  return loadedFrom(
    tomlTable("fermix_channels.discord", { enabled: true, bot_token: fake.token, owner_user_id: DISCORD_ALICE.id, api_base: fake.apiBase, ...extra }) +
      TELEGRAM_OFF +
      ACP_OFF,
  ).config;
}

export { captureLog };

/** A sleep that records what it was asked to wait and waits at most `capMs` of real time. */
export function recordingSleep(capMs = 5): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms, signal) => {
      waits.push(ms);
      await sleep(Math.min(ms, capMs), signal);
    },
  };
}

/** A clock that moves only when something sleeps on it: waits are recorded and pass at once. */
export function virtualClock(start = Date.now()): { now: () => number; sleep: Sleep; waits: number[] } {
  let t = start;
  const waits: number[] = [];
  return {
    waits,
    now: () => t,
    sleep: async (ms, signal) => {
      waits.push(ms);
      t += ms;
      await sleep(0, signal);
    },
  };
}

export interface TestContext {
  context: AdapterContext;
  db: Database;
  inbox: Inbox;
  /** Every message the gateway stand-in received. */
  ingested: InboundMessage[];
  submitted: Submission[];
  lines: string[];
  /** Make the next `count` submits fail as the dispatcher does at capacity (nothing written). */
  failSubmits(error: Error, count?: number): void;
  close(): void;
}

/** A context over a fresh database in a temp dir (or `dir`, to reopen one after a "restart"). */
export function makeContext(config: Config, opts: { dir?: string } = {}): TestContext & { dir: string } {
  const base = adapterTestBase("discord", opts);
  let failures: { error: Error; left: number } | undefined;
  const context = base.contextFor(config, async (items, commit): Promise<SubmitResult> => {
    if (failures && failures.left > 0) {
      failures.left--;
      throw failures.error;
    }
    return base.handOn(items, commit);
  });
  const failSubmits = (error: Error, count = 1) => {
    failures = { error, left: count };
  };
  return { ...base, context, failSubmits };
}

/** One dispatch a bare client's handler saw. */
export interface SeenEvent {
  t: string;
  d: unknown;
  seq: number | null;
}

/** A GatewayClient against the fake, recording every dispatch it hands to its handlers and every wait. */
export function gatewayClient(fake: DiscordFake, opts: Partial<GatewayClientOptions> & { handle?: (t: string, d: unknown) => void } = {}) {
  const { log, lines } = captureLog();
  const { sleep: recorded, waits } = recordingSleep();
  const seen: SeenEvent[] = [];
  const handler =
    (t: string): DispatchHandler =>
    (d, event) => {
      opts.handle?.(t, d);
      seen.push({ t, d, seq: event.seq });
    };
  const handlers = new Map<string, DispatchHandler>(["READY", "GUILD_CREATE", "MESSAGE_CREATE", "RESUMED"].map((t) => [t, handler(t)]));
  const api = new DiscordApi({ token: fake.token, apiBase: fake.apiBase });
  const client = new GatewayClient({ token: fake.token, api, handlers, log, random: () => 0.5, sleep: recorded, closeGraceMs: 500, ...opts });
  return { client, seen, waits, lines };
}

/** Poll until `probe` is truthy (the client runs in the background). */
export const eventually = <T>(probe: () => T | undefined | null | false, timeoutMs = 5000, what = "condition"): Promise<T> =>
  waitFor(probe, { timeoutMs, what });
