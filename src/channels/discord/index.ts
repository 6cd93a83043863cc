/**
 * The Discord channel adapter: a Gateway v10 connection (gateway.ts) feeding
 * the durable inbox, REST reply ports (outbound.ts) and attachment downloads.
 * It exposes no HTTP route. What arrives on the gateway is routed through a
 * table of handlers by event name: READY teaches the bot's own id, the
 * guild and thread events teach which channels are threads, MESSAGE_CREATE
 * becomes a submission, INTERACTION_CREATE (a tap on one of our buttons) is
 * handed to the gateway as a press at once — never through the inbox — and
 * acknowledged with an interaction callback.
 */
import type { APIInteractionResponse } from "discord-api-types/v10";
import type { Config } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import type { ChannelRuntimeState } from "../../kernel/health.ts";
import { Logger, Redactor } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import {
  type ButtonPress,
  type FetchedMedia,
  type InboundMedia,
  MediaTooLarge,
  type OutboundMedia,
  type PressResult,
  type ReplyPort,
  type ReplyTarget,
} from "../../message/index.ts";
import type { AdapterContext, ChannelAdapter } from "../types.ts";
import { DiscordApi, type DiscordApiOptions } from "./api.ts";
import { ChannelDirectory } from "./directory.ts";
import { type DispatchEvent, type DispatchHandler, GatewayClient, type GatewayClientOptions } from "./gateway.ts";
import { parseMessageCreate } from "./inbound.ts";
import { type InteractionRef, ignoredCallback, parseInteraction, pressCallback } from "./interaction.ts";
import { DISCORD_CAPABILITIES, discordReplyPort } from "./outbound.ts";
import { discordProfile } from "./profile.ts";
import { DiscordStateStore } from "./session.ts";

/**
 * The largest inbound attachment downloaded: Discord's own upload limit for
 * most accounts is lower (10 MB), servers with boosts allow more
 * (src/channels/discord/profile.ts).
 */
export const DISCORD_INBOUND_CAP = discordProfile.inboundMediaCap;

/** Knobs tests turn; production uses the defaults and what the gateway's Hello says. */
export type DiscordAdapterOptions = Partial<Pick<DiscordApiOptions, "fetch" | "maxRateLimitWaitMs" | "rateLimitRetries" | "now">> &
  Partial<Pick<GatewayClientOptions, "random" | "sleep" | "backoff" | "helloTimeoutMs" | "closeGraceMs">>;

/** Until start() hands us the daemon's logger, log nowhere (ports may be built before start). */
const silent = new Logger({ write: () => {} }, "error", new Redactor());

export class DiscordAdapter implements ChannelAdapter {
  readonly name = "discord" as const;
  readonly capabilities = DISCORD_CAPABILITIES;
  readonly inboundMediaCap = DISCORD_INBOUND_CAP;
  private readonly token: string;
  private readonly configuredBotId: string | undefined;
  private readonly api: DiscordApi;
  private readonly directory = new ChannelDirectory();
  private learntBotId: string | undefined;
  private gateway: GatewayClient | undefined;
  private log: Logger = silent;
  private telemetry: Telemetry | undefined;

  constructor(
    config: Config,
    private readonly options: DiscordAdapterOptions = {},
  ) {
    const section = config.fermix_channels.discord;
    if (!section.bot_token) throw new Error("discord: no bot_token configured");
    this.token = section.bot_token;
    this.configuredBotId = section.bot_user_id;
    this.api = new DiscordApi({
      token: this.token,
      apiBase: section.api_base,
      log: () => this.log,
      ...pick(options, ["fetch", "maxRateLimitWaitMs", "rateLimitRetries", "now", "sleep"]),
    });
  }

  async start(context: AdapterContext): Promise<void> {
    if (this.gateway) return;
    context.log.redactor.add(this.token);
    this.log = context.log;
    this.telemetry = context.telemetry;
    const store = new DiscordStateStore(context.db, this.token);
    this.gateway = new GatewayClient({
      token: this.token,
      api: this.api,
      handlers: this.handlers(context, store),
      log: context.log,
      store,
      ...pick(this.options, ["random", "sleep", "backoff", "helloTimeoutMs", "closeGraceMs", "now"]),
    });
    // The connection runs in the background; health says "starting" until READY.
    this.gateway.start();
  }

  async stop(): Promise<void> {
    await this.gateway?.stop();
  }

  state(): ChannelRuntimeState {
    return this.gateway?.state() ?? { status: "starting", process_alive: false, detail: "not started" };
  }

  /** The bot's own user id: configured, else the one READY reported. */
  botUserId(): string | undefined {
    return this.configuredBotId ?? this.learntBotId;
  }

  replyPort(target: ReplyTarget): ReplyPort {
    return discordReplyPort(target, {
      api: this.api,
      isDirect: (channelId) => this.directory.isDirect(channelId),
      onOverCap: (media, size) => this.overCap(media, size),
    });
  }

  /** Download from the CDN, refused past the channel's cap or `maxBytes` (whichever is lower): by the declared size first, then as it streams. */
  async fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia> {
    const cap = Math.min(this.inboundMediaCap, maxBytes ?? Number.POSITIVE_INFINITY);
    if (media.declaredSize !== undefined && media.declaredSize > cap) throw new MediaTooLarge(media.declaredSize, cap);
    const { bytes, mime } = await this.api.download(media.ref, cap, signal);
    const fetched: FetchedMedia = { bytes, mime: media.mime ?? mime };
    if (media.filename) fetched.filename = media.filename;
    return fetched;
  }

  /** The dispatch table: one handler per gateway event Fermix acts on. */
  private handlers(context: AdapterContext, store: DiscordStateStore): Map<string, DispatchHandler> {
    const directory = this.directory;
    return new Map<string, DispatchHandler>([
      ["READY", (data) => this.onReady(data, store)],
      ["GUILD_CREATE", (data) => directory.guildCreate(data)],
      ["THREAD_CREATE", (data) => directory.thread(data)],
      ["THREAD_UPDATE", (data) => directory.thread(data)],
      ["THREAD_DELETE", (data) => directory.threadDelete(data)],
      ["THREAD_LIST_SYNC", (data) => directory.threadListSync(data)],
      ["MESSAGE_CREATE", (data, event) => this.onMessage(data, event, context)],
      ["INTERACTION_CREATE", (data) => this.onInteraction(data, context)],
    ]);
  }

  /**
   * A button press: answered beside the dispatch chain (the turn waiting for
   * it must not wait behind it, and Discord wants the callback within three
   * seconds), then acknowledged in the presser's client.
   */
  private onInteraction(data: unknown, context: AdapterContext): void {
    const parsed = parseInteraction(data, { threadParent: (channelId) => this.directory.threadParent(channelId) });
    if (parsed.kind === "invalid") {
      this.log.warn("discord INTERACTION_CREATE not understood; skipped");
      return;
    }
    if (parsed.kind === "ignored") {
      this.log.debug("discord interaction ignored", { why: parsed.why });
      if (parsed.interaction) void this.acknowledge(parsed.interaction, ignoredCallback("This does nothing here."));
      return;
    }
    if (parsed.press.direct) this.directory.markDirect(parsed.channelId);
    void this.answerPress(parsed.interaction, parsed.press, parsed.content, context);
  }

  private async answerPress(interaction: InteractionRef, press: ButtonPress, prompt: string | undefined, context: AdapterContext): Promise<void> {
    let answer: PressResult = { ok: false, done: false, text: "This button does nothing here." };
    if (context.press) {
      try {
        answer = await context.press(press);
      } catch (error) {
        this.log.error("a button press failed", { error: describeError(error) });
        answer = { ok: false, done: false, text: "That did not work; send the /confirm line instead." };
      }
    }
    await this.acknowledge(interaction, pressCallback(answer, prompt));
  }

  /** The interaction callback; a failure is logged, never thrown: what was decided stands either way. */
  private async acknowledge(interaction: InteractionRef, body: APIInteractionResponse): Promise<void> {
    try {
      await this.api.interactionCallback(interaction, body);
    } catch (error) {
      this.log.warn("could not acknowledge a discord interaction", { error: describeError(error) });
    }
  }

  private onReady(data: unknown, store: DiscordStateStore): void {
    const id = (data as { user?: { id?: unknown } } | null)?.user?.id;
    if (typeof id !== "string") return;
    if (this.configuredBotId && this.configuredBotId !== id) {
      this.log.warn("discord bot_user_id differs from the id Discord reports for this token; using the configured one", {
        configured: this.configuredBotId,
        reported: id,
      });
    }
    this.learntBotId = id;
    store.saveBotUserId(id);
  }

  /** A message: converted, and submitted together with the session's new sequence number; anything else is logged and skipped. */
  private async onMessage(data: unknown, event: DispatchEvent, context: AdapterContext): Promise<void> {
    const parsed = parseMessageCreate(data, {
      ...(this.botUserId() ? { botUserId: this.botUserId()! } : {}),
      threadParent: (channelId) => this.directory.threadParent(channelId),
      receivedAt: Date.now(),
    });
    if (parsed.kind === "invalid") {
      this.log.warn("discord MESSAGE_CREATE not understood; skipped", { seq: event.seq ?? "none" });
      return;
    }
    if (parsed.kind === "ignored") {
      this.log.debug("discord message ignored", { why: parsed.why });
      return;
    }
    if (parsed.guildId === undefined) this.directory.markDirect(parsed.channelId);
    // Throws HandoffUnavailable at capacity: the gateway then resumes and Discord replays the message.
    await context.submit([{ key: parsed.key, message: parsed.message }], event.commit);
  }

  private overCap(media: OutboundMedia, size: number): void {
    this.log.warn("file over the discord media cap not sent; the user was told", { kind: media.kind, bytes: size });
    this.telemetry?.emit("channel.media_send_error", { measurements: { count: 1 }, metadata: { channel: "discord", kind: media.kind, reason: "over_cap" } });
  }
}

/** The registry's factory: an adapter for the configured bot. */
export function discordAdapter(config: Config): ChannelAdapter {
  return new DiscordAdapter(config);
}

/** The defined entries of `options` among `keys`, so an absent knob keeps its default. */
function pick<T extends object, K extends keyof T>(options: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (options[key] !== undefined) out[key] = options[key];
  return out;
}
