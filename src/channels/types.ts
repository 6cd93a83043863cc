/**
 * The one interface every channel adapter implements, what the daemon hands
 * each adapter when it starts, and the profile every channel declares.
 * Adapters turn what their platform delivers into InboundMessages and submit
 * them; they build reply ports on request. Everything else the rest of
 * Fermix knows of a channel is in its profile (src/channels/<name>/profile.ts):
 * pure data and pure functions, cheap to import, read by name from
 * src/channels/registry.ts, and handed to the floors below as the slices
 * they declare (present/'s TextProfile, gateway/'s ChannelFacts, config/'s
 * ChannelRequirements).
 */

import type { Database } from "bun:sqlite";
import type { Env } from "../config/load.ts";
import type { Paths } from "../config/paths.ts";
import type { Config } from "../config/schema.ts";
import type { ChannelFacts } from "../gateway/channel-facts.ts";
import type { IngestOptions, IngestOutcome } from "../gateway/ingest.ts";
import type { ChannelRuntimeState } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type {
  ButtonPress,
  FetchedMedia,
  GatewayChannel,
  InboundMedia,
  InboundMessage,
  PressResult,
  ReplyCapabilities,
  ReplyPort,
  ReplyTarget,
  Submission,
  SubmitResult,
} from "../message/index.ts";
import type { ChannelSetup } from "./setup.ts";
import type { WebhookHandler } from "./webhook.ts";

/** One line of `fermix doctor` a channel adds about itself. */
export interface DoctorFinding {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

/**
 * A channel, described: what the gateway, the presentation layer, config,
 * health, doctor, the webhook server and setup need to know of it, so that
 * none of them names a channel. The adapter itself (index.ts) is imported
 * only when the channel is served.
 */
export interface ChannelProfile extends ChannelFacts {
  /** The channel's name as a heading (the status page, setup): "Telegram", "The editor socket (ACP)". */
  readonly title: string;
  /**
   * What its reply ports can do: edit, delete, the reaction set, buttons,
   * media, typing. The adapter's ports declare exactly this; the streaming
   * default follows from `edit`.
   */
  readonly capabilities: ReplyCapabilities;
  /** Largest inbound attachment it downloads, in bytes. */
  readonly inboundMediaCap: number;
  /** The key of the credential its platform checks at start (health says when it is refused); absent: none. */
  readonly credentialKey?: string;
  /** Its webhook route, where its platform posts to one (src/http/webhooks mounts it). */
  readonly webhook?: WebhookHandler;
  /** Its keys, wizard questions and owner pairing for setup (src/channels/<name>/setup.ts); absent: setup leaves it alone. */
  readonly setup?: ChannelSetup;
  /** What `fermix doctor` checks besides its config (a helper program on PATH); absent: nothing. */
  doctor?(config: Config, env: Env): DoctorFinding[];
}

export interface AdapterContext {
  config: Config;
  /** Where Fermix keeps its files: local-socket channels listen under the home (ACP: `acpSocket`). */
  paths: Paths;
  db: Database;
  log: Logger;
  telemetry: Telemetry;
  /**
   * Hand messages to the gateway: committed to the durable inbox (with their
   * idempotency keys) before this resolves, then processed. `commit` runs in
   * the same transaction — a polling channel stores its new cursor there.
   * Throws HandoffUnavailable when the daemon is at capacity.
   */
  submit(items: Submission[], commit?: () => void): Promise<SubmitResult>;
  /**
   * Run one message straight through the gateway and wait for its turn: for
   * surfaces whose acknowledgement is the end of the turn itself (an ACP
   * prompt's response), with their own port and streaming sink.
   */
  ingest(message: InboundMessage, options: IngestOptions): Promise<IngestOutcome>;
  /**
   * Stop one conversation now, as /stop does: cancel its running turn and drop
   * its queued ones (`key` is conversationKey(message)). For surfaces with no
   * slash commands whose protocol has its own cancel (ACP session/cancel).
   */
  stopConversation(key: string): void;
  /**
   * Someone tapped one of our buttons (ReplyCapabilities.buttons): hand the
   * press over as it came, at once — never through the inbox or behind a
   * turn. Resolves with a short answer for the presser alone and whether the
   * buttons have served (the adapter may then take them off the message).
   * Absent where nothing answers presses.
   *
   * A button channel: sets `capabilities.buttons`, renders OutboundText.buttons
   * under the message with each button's `data` as the platform's callback id,
   * and maps a tap to a ButtonPress whose chatId/threadId are what its
   * messages get (so the conversation key matches), `direct` for a DM.
   * Telegram: callback_query → answerCallbackQuery (src/channels/telegram/).
   * Discord: INTERACTION_CREATE type 3 → a press from (member?.user ?? user).id
   * on message.id with data.custom_id, direct when guild_id is absent, then
   * the interaction callback: type 4 with flags 64 (ephemeral) and content =
   * text, or type 7 with components [] once `done`
   * (src/channels/discord/interaction.ts).
   */
  press?(press: ButtonPress): Promise<PressResult>;
}

export interface ChannelAdapter {
  readonly name: GatewayChannel;
  readonly capabilities: ReplyCapabilities;
  /** Largest inbound attachment this channel downloads, in bytes. */
  readonly inboundMediaCap: number;
  /** Start receiving (a poller, a socket); webhook channels have nothing to start. */
  start(context: AdapterContext): Promise<void>;
  stop(): Promise<void>;
  state(): ChannelRuntimeState;
  replyPort(target: ReplyTarget): ReplyPort;
  /**
   * Download one inbound attachment, after authorization. `maxBytes` lowers the
   * channel's own cap for this download (transcription's `max_file_mb`): over
   * it, rejects with MediaTooLarge — before the download where the platform
   * tells the size first.
   */
  fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia>;
}
