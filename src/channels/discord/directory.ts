/**
 * What the Discord adapter knows about channels, learnt from gateway events:
 * which channels are threads (and their parent, so a thread is its own
 * conversation under its channel) and which are DMs (replies there do not
 * quote the message they answer). MESSAGE_CREATE does not say whether its
 * channel is a thread; GUILD_CREATE, THREAD_CREATE/UPDATE/DELETE and
 * THREAD_LIST_SYNC (all under the Guilds intent) do. In memory only: Discord
 * sends it all again after every Identify.
 */
import { ChannelType } from "./wire.ts";

const THREAD_TYPES = new Set<number>([ChannelType.AnnouncementThread, ChannelType.PublicThread, ChannelType.PrivateThread]);

interface ChannelLike {
  id?: unknown;
  type?: unknown;
  parent_id?: unknown;
}

export class ChannelDirectory {
  private readonly parents = new Map<string, string>();
  private readonly direct = new Set<string>();

  /** The parent channel of a known thread. */
  threadParent(channelId: string): string | undefined {
    return this.parents.get(channelId);
  }

  /** Whether the channel is known to be a DM. */
  isDirect(channelId: string): boolean {
    return this.direct.has(channelId);
  }

  /** A message arrived without a guild: its channel is a DM. */
  markDirect(channelId: string): void {
    this.direct.add(channelId);
  }

  /** GUILD_CREATE: its active threads. */
  guildCreate(data: unknown): void {
    for (const thread of listOf(data, "threads")) this.thread(thread);
  }

  /** THREAD_CREATE / THREAD_UPDATE. */
  thread(data: unknown): void {
    const channel = data as ChannelLike | null;
    if (!channel || typeof channel.id !== "string" || typeof channel.parent_id !== "string") return;
    if (typeof channel.type !== "number" || !THREAD_TYPES.has(channel.type)) return;
    this.parents.set(channel.id, channel.parent_id);
  }

  /** THREAD_DELETE. */
  threadDelete(data: unknown): void {
    const id = (data as ChannelLike | null)?.id;
    if (typeof id === "string") this.parents.delete(id);
  }

  /** THREAD_LIST_SYNC: the active threads of channels the bot gained access to. */
  threadListSync(data: unknown): void {
    for (const thread of listOf(data, "threads")) this.thread(thread);
  }
}

function listOf(data: unknown, key: string): unknown[] {
  const list = (data as Record<string, unknown> | null)?.[key];
  return Array.isArray(list) ? list : [];
}
