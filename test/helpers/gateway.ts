/**
 * The core (database, gateway, agent) built in this process against the fake
 * model server, with channels whose reply ports record what a user would see
 * and whose media fetcher counts downloads. For tests of the gateway pipeline,
 * the commands and the agent without the compiled binary.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCore, type Core } from "../../src/daemon/core.ts";
import type { IngestOutcome } from "../../src/gateway/ingest.ts";
import { createLogger } from "../../src/kernel/log.ts";
import type { TelemetryEvent, TelemetryName } from "../../src/kernel/telemetry.ts";
import type {
  FetchedMedia,
  GatewayChannel,
  InboundMedia,
  InboundMessage,
  OutboundMedia,
  ReplyButton,
  ReplyCapabilities,
  ReplyPort,
  ReplyTarget,
} from "../../src/message/index.ts";
import { type FakeModel, startFakeModel } from "../fakes/model-server.ts";
import { loadedFrom } from "./loaded.ts";
import { until as untilHolds, within } from "./wait.ts";

/** One thing a reply port was asked to do, with the conversation it was for. */
export type PortAction =
  | { kind: "text"; target: ReplyTarget; text: string; buttons?: ReplyButton[] }
  | { kind: "media"; target: ReplyTarget; media: OutboundMedia }
  | { kind: "react"; target: ReplyTarget; messageId: string; emoji: string }
  | { kind: "edit" | "delete" | "typing"; target: ReplyTarget };

export const TELEGRAM_LIKE: ReplyCapabilities = {
  edit: true,
  delete: true,
  react: ["👍", "❤", "🔥", "👌"],
  media: true,
  typing: true,
};
export const NO_REACTIONS: ReplyCapabilities = { edit: false, delete: false, react: false, media: true, typing: false };

/** A channel as the gateway reaches it: ports that record, a media fetcher that counts. */
export class RecordingChannel {
  readonly actions: PortAction[] = [];
  readonly fetched: InboundMedia[] = [];
  private waiters = new Set<() => void>();
  private nextId = 1;
  /** While set, downloads wait for it: a slow platform. */
  fetchGate: Promise<void> | null = null;

  constructor(
    public capabilities: ReplyCapabilities = TELEGRAM_LIKE,
    readonly mediaBytes: Uint8Array = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]),
  ) {}

  port(target: ReplyTarget): ReplyPort {
    const record = (action: PortAction) => {
      this.actions.push(action);
      for (const wake of this.waiters) wake();
    };
    return {
      capabilities: this.capabilities,
      sendText: async (message) => {
        record({ kind: "text", target, text: message.text, ...(message.buttons ? { buttons: message.buttons } : {}) });
        return { id: `m${this.nextId++}` };
      },
      sendMedia: async (media) => {
        record({ kind: "media", target, media });
        return { id: `m${this.nextId++}` };
      },
      editText: async () => record({ kind: "edit", target }),
      deleteMessage: async () => record({ kind: "delete", target }),
      react: async (messageId, emoji) => record({ kind: "react", target, messageId, emoji }),
      typing: async () => record({ kind: "typing", target }),
    };
  }

  async fetchMedia(media: InboundMedia, signal?: AbortSignal): Promise<FetchedMedia> {
    this.fetched.push(media);
    if (this.fetchGate) {
      await Promise.race([
        this.fetchGate,
        new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), { once: true })),
      ]);
    }
    return { bytes: this.mediaBytes, mime: media.mime ?? "image/jpeg" };
  }

  /** Texts sent (to one chat, when given), in order. */
  texts(chatId?: string): string[] {
    return this.actions.flatMap((a) => (a.kind === "text" && (chatId === undefined || a.target.chatId === chatId) ? [a.text] : []));
  }

  /** Everything but typing indicators: what a user would notice in the chat. */
  visible(): PortAction[] {
    return this.actions.filter((a) => a.kind !== "typing");
  }

  /** Resolves once a sent text matches; rejects after the timeout with what was sent. */
  waitForText(match: (text: string) => boolean, timeoutMs = 5000): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.texts().find(match);
        if (found === undefined) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no matching text within ${timeoutMs} ms; sent: ${JSON.stringify(this.texts())}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
}

export interface HarnessOptions {
  /** Extra lines for the fake provider's table (e.g. `vision = false`, `context_window = 100`). */
  provider?: string;
  /** TOML for channels and the rest, appended after the provider. */
  toml?: string;
  env?: Record<string, string>;
  /** Channels to make reachable (default: telegram, telegram-like capabilities). */
  channels?: Partial<Record<GatewayChannel, RecordingChannel>>;
  api?: "responses" | "chat";
  /** The OS sandbox for run_command: null for a machine without one (default: detected). */
  sandboxBackend?: null;
}

/** Telegram with an owner and one more allowed user: the trust setup most tests want. */
export const TELEGRAM_OWNER = "1001";
export const TELEGRAM_FRIEND = "2002";
export const TELEGRAM_STRANGER = "6666";
export const DEFAULT_CHANNELS_TOML = `
[fermix_channels.telegram]
enabled = true
bot_token = "123456:test-token"
owner_user_id = "${TELEGRAM_OWNER}"
allowed_user_ids = ["${TELEGRAM_FRIEND}"]

[fermix_channels.acp]
enabled = false
`;

export interface Harness {
  core: Core;
  fake: FakeModel;
  home: string;
  telegram: RecordingChannel;
  channels: Partial<Record<GatewayChannel, RecordingChannel>>;
  events: TelemetryEvent[];
  eventsNamed<K extends TelemetryName>(name: K): TelemetryEvent<K>[];
  /** An inbound message (telegram, from the owner, in chat "c1" unless overridden). */
  message(overrides?: Partial<InboundMessage>): InboundMessage;
  ingest(overrides?: Partial<InboundMessage>): Promise<IngestOutcome>;
  /** A config reload, as the daemon applies one: the same provider, `toml` for the rest. */
  reconfigure(toml: string): void;
  close(): Promise<void>;
}

let sequence = 0;

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const fake = await startFakeModel();
  const root = mkdtempSync(join(tmpdir(), "fermix-gw-"));
  const home = join(root, ".fermix");
  const tomlWith = (channels: string) => `
[fermix_core.providers.fake]
api = "${options.api ?? "responses"}"
base_url = "${fake.url}"
model = "fake-model"
api_key = "sk-fake-key-0000"
${options.provider ?? ""}

${channels}
`;
  const loaded = loadedFrom(tomlWith(options.toml ?? DEFAULT_CHANNELS_TOML), options.env ?? {}, home);
  const log = createLogger({ FERMIX_LOG_LEVEL: "error" });
  // No retries: a scripted failure is the answer at once instead of after backoff.
  const core = buildCore({
    loaded,
    log,
    providerDeps: { limits: { maxRetries: 0 } },
    ...(options.sandboxBackend !== undefined ? { sandboxBackend: options.sandboxBackend } : {}),
  });
  const channels = options.channels ?? { telegram: new RecordingChannel() };
  for (const [name, channel] of Object.entries(channels) as Array<[GatewayChannel, RecordingChannel]>) {
    core.channels.set(name, {
      port: (target) => channel.port(target),
      fetchMedia: (media, signal) => channel.fetchMedia(media, signal),
      inboundMediaCap: 20 * 1024 * 1024,
    });
  }
  const events: TelemetryEvent[] = [];
  core.telemetry.onAny((event) => events.push(event));
  const message = (overrides: Partial<InboundMessage> = {}): InboundMessage => ({
    channel: "telegram",
    chatId: "c1",
    senderId: TELEGRAM_OWNER,
    // A direct chat unless a test says otherwise (direct: false for a group).
    direct: true,
    messageId: `msg-${++sequence}`,
    text: "hello",
    media: [],
    receivedAt: Date.now(),
    ...overrides,
  });
  return {
    core,
    fake,
    home,
    telegram: channels.telegram ?? new RecordingChannel(),
    channels,
    events,
    eventsNamed: <K extends TelemetryName>(name: K) => events.filter((e) => e.name === name) as unknown as TelemetryEvent<K>[],
    message,
    ingest: (overrides) => core.gateway.ingest(message(overrides)),
    reconfigure: (toml) => core.reconfigure(loadedFrom(tomlWith(toml), options.env ?? {}, home)),
    async close() {
      core.background.stop();
      core.queue.stopAll(new Error("test over"));
      await core.close(50);
      await fake.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The names of the tools offered in a recorded model request. */
export function toolNames(body: { tools?: Array<{ name?: string; function?: { name?: string } }> }): string[] {
  return (body.tools ?? []).map((t) => t.name ?? t.function?.name ?? "?");
}

/** Poll until `check` is true (events, not sleeps-as-assertions); rejects after the timeout. */
export const until = (check: () => boolean, what: string, timeoutMs = 5000): Promise<void> => untilHolds(what, check, timeoutMs);

export { within };
