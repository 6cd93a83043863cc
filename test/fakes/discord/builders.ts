/**
 * The people, places and payloads of the Discord fake: a bot, two users, one
 * guild with a text channel and a thread, a DM, increasing snowflakes, and
 * MESSAGE_CREATE / READY / GUILD_CREATE bodies shaped as Gateway v10 sends
 * them (typed with discord-api-types, so a field Discord does not have does
 * not compile).
 */
import {
  type APIAttachment,
  type APIUser,
  type ApplicationFlags,
  ChannelType,
  type GatewayGuildCreateDispatchData,
  type GatewayMessageCreateDispatchData,
  type GatewayReadyDispatchData,
  MessageType,
} from "discord-api-types/v10";

const user = (id: string, username: string, extra: Partial<APIUser> = {}): APIUser => ({
  id,
  username,
  discriminator: "0",
  global_name: null,
  avatar: null,
  ...extra,
});

export const DISCORD_BOT = user("1100000000000000001", "fermix-bot", { bot: true, global_name: "Fermix" });
/** The owner in the tests. */
export const DISCORD_ALICE = user("1200000000000000001", "alice", { global_name: "Alice" });
/** Not on any allowlist. */
export const DISCORD_BOB = user("1200000000000000002", "bob");
/** Another bot in the guild. */
export const DISCORD_OTHER_BOT = user("1100000000000000002", "other-bot", { bot: true });

export const DISCORD_GUILD = "1300000000000000001";
/** #general in the guild. */
export const DISCORD_CHANNEL = "1400000000000000001";
/** Alice's DM with the bot. */
export const DISCORD_DM = "1400000000000000002";
/** A public thread under #general. */
export const DISCORD_THREAD = "1400000000000000003";
/** Bob's DM with the bot. */
export const DISCORD_BOB_DM = "1400000000000000004";

/** A bot token whose first segment is the bot's id in base64, as real tokens are. */
export function fakeBotToken(botId = DISCORD_BOT.id): string {
  return `${Buffer.from(botId).toString("base64").replace(/=+$/, "")}.GfAkE0.fermix-fake-discord-token-hmac-0000`;
}

/** Snowflakes that only go up, past every fixed id above. */
export class Snowflakes {
  private last = 1_500_000_000_000_000_000n;
  next(): string {
    this.last += 1n;
    return String(this.last);
  }
}

export interface MessageOptions {
  author?: APIUser;
  channelId?: string;
  /** Set for guild messages; absent for DMs. */
  guildId?: string;
  /** Users mentioned (Discord lists them in `mentions`); the bot's `<@id>` is not added to the text by this. */
  mentions?: APIUser[];
  /** The message this one replies to (type 19, with `referenced_message`). */
  replyTo?: { id: string; author: APIUser; content?: string; channelId?: string };
  attachments?: APIAttachment[];
  flags?: number;
  type?: MessageType;
  webhookId?: string;
}

/** A MESSAGE_CREATE `d`, as the gateway sends it. */
export function messageCreate(id: string, content: string, o: MessageOptions = {}): GatewayMessageCreateDispatchData {
  const author = o.author ?? DISCORD_ALICE;
  const channelId = o.channelId ?? (o.guildId ? DISCORD_CHANNEL : DISCORD_DM);
  const timestamp = new Date().toISOString();
  const base = {
    id,
    channel_id: channelId,
    author,
    content,
    timestamp,
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: (o.mentions ?? []).map((u) => ({ ...u })),
    mention_roles: [],
    attachments: o.attachments ?? [],
    embeds: [],
    pinned: false,
    type: o.type ?? (o.replyTo ? MessageType.Reply : MessageType.Default),
    flags: o.flags ?? 0,
    components: [],
    ...(o.webhookId ? { webhook_id: o.webhookId } : {}),
  };
  const reply = o.replyTo
    ? {
        message_reference: { type: 0, message_id: o.replyTo.id, channel_id: o.replyTo.channelId ?? channelId, ...(o.guildId ? { guild_id: o.guildId } : {}) },
        referenced_message: {
          id: o.replyTo.id,
          channel_id: o.replyTo.channelId ?? channelId,
          author: o.replyTo.author,
          content: o.replyTo.content ?? "",
          timestamp,
          edited_timestamp: null,
          tts: false,
          mention_everyone: false,
          mentions: [],
          mention_roles: [],
          attachments: [],
          embeds: [],
          pinned: false,
          type: MessageType.Default,
        },
      }
    : {};
  const guild = o.guildId ? { guild_id: o.guildId, member: { roles: [], joined_at: timestamp, deaf: false, mute: false, flags: 0 } } : {};
  return { ...base, ...reply, ...guild } as GatewayMessageCreateDispatchData;
}

/** READY `d` for a new session. */
export function ready(sessionId: string, resumeUrl: string): GatewayReadyDispatchData {
  const data: GatewayReadyDispatchData = {
    v: 10,
    user: { ...DISCORD_BOT, verified: true, mfa_enabled: false },
    guilds: [{ id: DISCORD_GUILD, unavailable: true }],
    session_id: sessionId,
    resume_gateway_url: resumeUrl,
    application: { id: DISCORD_BOT.id, flags: 0 as ApplicationFlags, flags_new: "0" },
  };
  return data;
}

/** GUILD_CREATE `d` for the test guild: #general and its active thread. */
export function guildCreate(): GatewayGuildCreateDispatchData {
  return {
    id: DISCORD_GUILD,
    name: "Fermix Test",
    unavailable: false,
    member_count: 3,
    large: false,
    joined_at: new Date().toISOString(),
    channels: [{ id: DISCORD_CHANNEL, type: ChannelType.GuildText, name: "general", guild_id: DISCORD_GUILD, position: 0 }],
    threads: [
      {
        id: DISCORD_THREAD,
        type: ChannelType.PublicThread,
        name: "a thread",
        guild_id: DISCORD_GUILD,
        parent_id: DISCORD_CHANNEL,
        thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
      },
    ],
    members: [],
    voice_states: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  } as unknown as GatewayGuildCreateDispatchData;
}
