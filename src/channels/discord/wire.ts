/**
 * The numbers and paths of Discord's API this adapter sends and reads, by
 * the names discord-api-types (v10) gives them. Its types are used
 * throughout; its values are not imported, because its runtime module is
 * CommonJS that no bundler can tree-shake: one enum from it put every enum
 * and route of the API into the binary (~90 KiB of source, ~0.1 MB of the
 * download; docs/performance.md). `satisfies` holds each value to the
 * library's type, and test/channels/discord/wire.test.ts to its value.
 */
import type * as Discord from "discord-api-types/v10";

export const GatewayVersion = "10" satisfies typeof Discord.GatewayVersion;

export const GatewayOpcodes = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  Resume: 6,
  Reconnect: 7,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
} as const satisfies Partial<typeof Discord.GatewayOpcodes>;

export const GatewayCloseCodes = {
  UnknownOpcode: 4001,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidSeq: 4007,
  SessionTimedOut: 4009,
  InvalidShard: 4010,
  ShardingRequired: 4011,
  InvalidAPIVersion: 4012,
  InvalidIntents: 4013,
  DisallowedIntents: 4014,
} as const satisfies Partial<typeof Discord.GatewayCloseCodes>;

export const GatewayIntentBits = {
  Guilds: 1,
  GuildMessages: 512,
  DirectMessages: 4096,
  MessageContent: 32768,
} as const satisfies Partial<typeof Discord.GatewayIntentBits>;

export const ChannelType = {
  AnnouncementThread: 10,
  PublicThread: 11,
  PrivateThread: 12,
} as const satisfies Partial<typeof Discord.ChannelType>;

export const MessageType = { Default: 0, Reply: 19 } as const satisfies Partial<typeof Discord.MessageType>;

export const MessageFlags = {
  SuppressEmbeds: 4,
  Ephemeral: 64,
  SuppressNotifications: 4096,
  IsVoiceMessage: 8192,
} as const satisfies Partial<typeof Discord.MessageFlags>;

export const ComponentType = { ActionRow: 1, Button: 2 } as const satisfies Partial<typeof Discord.ComponentType>;

export const ButtonStyle = { Primary: 1, Secondary: 2 } as const satisfies Partial<typeof Discord.ButtonStyle>;

export const InteractionType = { MessageComponent: 3 } as const satisfies Partial<typeof Discord.InteractionType>;

export const InteractionResponseType = {
  ChannelMessageWithSource: 4,
  UpdateMessage: 7,
} as const satisfies Partial<typeof Discord.InteractionResponseType>;

// A string enum: its member's type takes no plain string, so the value is named as that member.
export const AllowedMentionsTypes = { User: "users" as Discord.AllowedMentionsTypes.User } as const satisfies Partial<typeof Discord.AllowedMentionsTypes>;

export const RESTJSONErrorCodes = {
  UnknownMessage: 10008,
  CannotSendAnEmptyMessage: 50006,
  InvalidFormBodyOrContentType: 50035,
} as const satisfies Partial<typeof Discord.RESTJSONErrorCodes>;

/** The REST paths, relative to the API base (`https://discord.com/api/v10`). */
export const Routes = {
  gatewayBot: () => "/gateway/bot" as const,
  channelMessages: (channelId: string) => `/channels/${channelId}/messages` as const,
  channelMessage: (channelId: string, messageId: string) => `/channels/${channelId}/messages/${messageId}` as const,
  /** `emoji` already URL-encoded, as Discord wants it in the path. */
  channelMessageOwnReaction: (channelId: string, messageId: string, emoji: string) =>
    `/channels/${channelId}/messages/${messageId}/reactions/${emoji}/@me` as const,
  channelTyping: (channelId: string) => `/channels/${channelId}/typing` as const,
  interactionCallback: (interactionId: string, interactionToken: string) => `/interactions/${interactionId}/${interactionToken}/callback` as const,
} satisfies Partial<typeof Discord.Routes>;
