/**
 * A loopback fake of Discord for channel-adapter and end-to-end tests
 * (real servers on loopback, not mocks): one Bun.serve on 127.0.0.1, port 0, that is both the
 * REST API (`${url}/api/v10`, discord/rest.ts) and the Gateway
 * (`ws://…/gateway` from GET /gateway/bot, `ws://…/resume` as every
 * session's resume_gateway_url; discord/gateway.ts).
 *
 * State tests read:
 *   fake.calls("messages.create")            recorded REST requests (JSON, or multipart with payload_json merged in)
 *   fake.visible(channel) / botMessages(ch)  the bot's messages as a person sees them (edits applied, deleted gone)
 *   fake.buttons(messageId)                  the buttons under a message, as they are now
 *   fake.interaction(id)                     a press and the bot's answer to it (type, data)
 *   fake.gateway.connections                 every socket: frames received and sent, how it closed
 * Driving it:
 *   fake.userMessage("hi")                   a DM from Alice: MESSAGE_CREATE on the live session
 *   fake.userMessage("<@bot> hi", { guildId: DISCORD_GUILD, mentions: [DISCORD_BOT] })
 *   const id = fake.pressButton(messageId, { user: DISCORD_BOB })   INTERACTION_CREATE; custom_id defaults to the first button's
 *   const answer = await fake.waitForInteractionAnswer(id)          { type: 4 | 7, data }
 *   fake.gateway.closeCurrent(4014) / drop() / sendRaw({op: 7, d: null}) / ackHeartbeats = false
 *   fake.rest.rateLimitNext("messages.create", 1.5) / fake.rest.faults.add(api, {status, body})
 *   fake.rest.failUploadsNext("messages.create", 1000)   500 to creates that upload files only
 *
 * Usage:
 *   const discord = startDiscordFake();
 *   // config: bot_token = discord.token, api_base = discord.apiBase
 *   await discord.gateway.waitForLive();
 *   discord.userMessage("hello");
 *   await discord.waitForTexts(DISCORD_DM, (t) => t.length > 0);
 */
import type { Server } from "bun";
import { type APIAttachment, type APIUser, MessageFlags } from "discord-api-types/v10";
import { DISCORD_ALICE, DISCORD_BOT, DISCORD_CHANNEL, DISCORD_DM, fakeBotToken, type MessageOptions, messageCreate, Snowflakes } from "./discord/builders.ts";
import { type ConnectionData, FakeGateway } from "./discord/gateway.ts";
import { buttonsOf, type FakeButton, type FakeInteraction } from "./discord/interactions.ts";
import { type FakeMessage, FakeRest } from "./discord/rest.ts";
import { type RecordedRequest, waitFor } from "./recorder.ts";

export * from "./discord/builders.ts";
export type { FakeConnection, GatewayFrame } from "./discord/gateway.ts";
export type { FakeButton, FakeInteraction } from "./discord/interactions.ts";
export { interactionCreate } from "./discord/interactions.ts";
export type { FakeMessage } from "./discord/rest.ts";

export class DiscordFake {
  readonly token: string;
  readonly ids = new Snowflakes();
  readonly gateway: FakeGateway;
  readonly rest: FakeRest;
  private readonly server: Server<ConnectionData>;

  constructor(opts: { token?: string } = {}) {
    this.token = opts.token ?? fakeBotToken();
    this.gateway = new FakeGateway(
      () => this.token,
      () => `${this.wsUrl}/resume`,
    );
    this.rest = new FakeRest(
      () => this.token,
      () => this.url,
      this.ids,
      () => ({ url: `${this.wsUrl}/gateway`, shards: 1, session_start_limit: { ...this.gateway.sessionStartLimit } }),
    );
    const gateway = this.gateway;
    this.server = Bun.serve<ConnectionData>({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      fetch: (req, server) => {
        const url = new URL(req.url);
        if (url.pathname === "/gateway" || url.pathname === "/resume") {
          const data: ConnectionData = { path: url.pathname, query: Object.fromEntries(url.searchParams) };
          if (server.upgrade(req, { data })) return undefined;
          return new Response("upgrade required", { status: 426 });
        }
        return this.rest.handle(req);
      },
      websocket: {
        open: (ws) => gateway.open(ws),
        message: (ws, message) => gateway.message(ws, message),
        close: (ws, code, reason) => gateway.close(ws, code, reason),
      },
    });
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }
  get wsUrl(): string {
    return `ws://127.0.0.1:${this.server.port}`;
  }
  /** What to configure as `api_base`. */
  get apiBase(): string {
    return `${this.url}/api/v10`;
  }
  get requests(): RecordedRequest[] {
    return this.rest.requests;
  }
  calls(api: string): RecordedRequest[] {
    return this.rest.requests.filter((r) => r.api === api);
  }
  waitForCall(api: string, match: (r: RecordedRequest) => boolean = () => true, timeoutMs = 5000): Promise<RecordedRequest> {
    return waitFor(() => this.rest.requests.find((r) => r.api === api && r.status !== undefined && match(r)), { timeoutMs, what: `a ${api} call` });
  }

  /**
   * A user's message arriving: recorded in its channel and sent as
   * MESSAGE_CREATE on the live session. Returns the message id.
   */
  userMessage(content: string, o: MessageOptions = {}): string {
    const id = this.ids.next();
    const d = messageCreate(id, content, o);
    this.rest.addUserMessage(id, d.channel_id, d.author.id, content, d.attachments);
    this.gateway.dispatch("MESSAGE_CREATE", d);
    return id;
  }

  /**
   * A person taps a button under one of the bot's messages: INTERACTION_CREATE
   * on the live session (a guild interaction in #general and its thread, a DM
   * one elsewhere). `customId` defaults to the first button's. Returns the
   * interaction id.
   */
  pressButton(messageId: string, o: { user?: APIUser; customId?: string } = {}): string {
    const message = this.message(messageId);
    if (!message || message.deleted) throw new Error(`no message ${messageId} to press a button on`);
    const { interaction, d } = this.rest.interactions.press(message.channelId, messageId, {
      user: o.user ?? DISCORD_ALICE,
      ...(o.customId !== undefined ? { customId: o.customId } : {}),
    });
    this.gateway.dispatch("INTERACTION_CREATE", d);
    return interaction.id;
  }

  /** A press and the bot's answer to it. */
  interaction(id: string): FakeInteraction | undefined {
    return this.rest.interactions.find(id);
  }

  /** Resolves with the bot's accepted answer to a press. */
  waitForInteractionAnswer(id: string, timeoutMs = 5000): Promise<NonNullable<FakeInteraction["answer"]>> {
    return waitFor(() => this.interaction(id)?.answer, { timeoutMs, what: `an answer to interaction ${id}` });
  }

  /** The buttons under a message now. */
  buttons(messageId: string): FakeButton[] {
    return buttonsOf(this.message(messageId)?.components);
  }

  /** Host bytes as an attachment a user sends in `channelId`; `size` overrides the size the attachment declares. */
  attachment(filename: string, bytes: Uint8Array | string, contentType?: string, channelId = DISCORD_DM, size?: number): APIAttachment {
    const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
    return this.rest.addAttachment(channelId, filename, data, contentType, size);
  }

  /**
   * A voice message as Discord's clients send one: no text, one OGG Opus
   * attachment `voice-message.ogg` with its duration and waveform, and the
   * IS_VOICE_MESSAGE flag. `size` overrides the declared size. Returns the message id.
   */
  voiceMessage(bytes: Uint8Array, o: Omit<MessageOptions, "attachments" | "flags"> & { size?: number } = {}): string {
    const channelId = o.channelId ?? (o.guildId ? DISCORD_CHANNEL : DISCORD_DM);
    const attachment = {
      ...this.attachment("voice-message.ogg", bytes, "audio/ogg", channelId, o.size),
      duration_secs: 2.4,
      waveform: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
      flags: 0,
    };
    const { size: _size, ...options } = o;
    return this.userMessage("", { ...options, attachments: [attachment], flags: MessageFlags.IsVoiceMessage });
  }

  /** The bot's messages in a channel, oldest first, deleted ones included. */
  botMessages(channelId: string): FakeMessage[] {
    return this.rest.messages.filter((m) => m.channelId === channelId && m.sender === "bot");
  }

  /** What a person sees from the bot in a channel: current contents, deleted messages gone. */
  visible(channelId: string): FakeMessage[] {
    return this.botMessages(channelId).filter((m) => !m.deleted);
  }

  visibleTexts(channelId: string): string[] {
    return this.visible(channelId).map((m) => m.content);
  }

  waitForTexts(channelId: string, done: (texts: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
    return waitFor(() => (done(this.visibleTexts(channelId)) ? this.visibleTexts(channelId) : undefined), { timeoutMs, what: `bot texts in ${channelId}` });
  }

  /** A message by id. */
  message(id: string): FakeMessage | undefined {
    return this.rest.messages.find((m) => m.id === id);
  }

  async stop(): Promise<void> {
    await this.server.stop(true);
  }
}

/** The bot's `<@id>` mention, as a user types it. */
export function mention(botUser: APIUser = DISCORD_BOT): string {
  return `<@${botUser.id}>`;
}

/** Start a Discord fake on 127.0.0.1, port 0. */
export function startDiscordFake(opts?: { token?: string }): DiscordFake {
  return new DiscordFake(opts);
}
