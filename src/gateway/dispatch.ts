/**
 * The inbox's front and back: channels submit accepted messages here; they
 * are committed to the durable inbox with their idempotency keys, then handed
 * to the bounded supervisor, which runs each through the channel's route
 * (the album buffer for WhatsApp and Telegram, else straight to `ingest`).
 * At start, whatever a crash left in the inbox is replayed the same way.
 */
import type { Database } from "bun:sqlite";
import { describeError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { GatewayChannel } from "../message/index.ts";
import { HandoffUnavailable, type InboundMessage, type Submission, type SubmitResult } from "../message/index.ts";
import type { Inbox, InboxEntry } from "../store/inbox.ts";
import { type AlbumBuffer, createAlbumBuffer } from "./album.ts";
import type { Gateway } from "./ingest.ts";
import type { TaskSupervisor } from "./supervisor.ts";

export interface DispatcherDeps {
  db: Database;
  inbox: Inbox;
  supervisor: TaskSupervisor;
  gateway: Gateway;
  /** Debounce per channel that merges albums; channels absent here have no album buffer. */
  albumDebounceMs: Partial<Record<GatewayChannel, number>>;
  /** Whether a channel's messages arrive by webhook (its profile's mode): its submissions are counted as `channel.webhook`. */
  viaWebhook: (channel: GatewayChannel) => boolean;
  /**
   * Whether the sender may talk to the assistant at all (by the config in
   * force). A message refused here is dropped before anything is written —
   * no inbox entry, no de-duplication key — so a flood of strangers costs no
   * disk. Absent: every message is admitted (the gateway still authorizes).
   */
  admit?: (channel: GatewayChannel, message: InboundMessage) => boolean;
  telemetry: Telemetry;
  log: Logger;
}

export class Dispatcher {
  private readonly albums = new Map<GatewayChannel, AlbumBuffer>();
  /** Album parts in flight, by the key the album buffer knows them by. */
  private readonly buffered = new Map<string, InboxEntry>();
  /** Inbox entries being replayed after a restart: their turns square their answers with what was delivered. */
  private readonly replaying = new Set<number>();

  constructor(private readonly deps: DispatcherDeps) {
    for (const [channel, debounceMs] of Object.entries(deps.albumDebounceMs) as Array<[GatewayChannel, number]>) {
      this.albums.set(
        channel,
        createAlbumBuffer({
          debounceMs,
          dispatch: async (merged, parts) => {
            const entries = this.entriesOf(parts);
            const replay = entries.some((e) => this.replaying.delete(e.id));
            await deps.gateway.ingest(merged, { inboxIds: entries.map((e) => e.id), ...(replay ? { replay } : {}) });
            for (const p of parts) this.buffered.delete(p.key);
          },
          onDispatchError: (parts, error) => {
            const entries = this.entriesOf(parts);
            for (const p of parts) this.buffered.delete(p.key);
            // Forget the keys of every buffered part, so the platform's redelivery runs again.
            deps.inbox.release(entries);
            deps.log.error("album dispatch failed; its message ids were forgotten", {
              channel,
              parts: parts.length,
              error: describeError(error),
            });
          },
        }),
      );
    }
  }

  /**
   * Commit messages to the inbox (with `commit`, e.g. a poll cursor, in the
   * same transaction), then hand them off. Throws HandoffUnavailable at
   * capacity — the keys are forgotten first — and rethrows a hand-off error
   * the same way.
   */
  async submit(channel: GatewayChannel, submitted: Submission[], commit?: () => void): Promise<SubmitResult> {
    const started = performance.now();
    const admit = this.deps.admit;
    const items = admit ? submitted.filter((item) => admit(channel, item.message)) : submitted;
    if (items.length === 0) {
      // Only strangers: nothing is recorded; a polling channel's cursor still moves past them.
      if (commit) this.deps.db.transaction(commit)();
      this.emit(channel, 0, 0, started, "unauthorized");
      return { fresh: 0, duplicates: 0 };
    }
    // Refuse before writing anything: a polling channel's cursor must not move past messages we then drop.
    if (!this.deps.supervisor.hasRoom(items.length)) {
      this.emit(channel, 0, 0, started, "capacity");
      throw new HandoffUnavailable();
    }
    const { fresh, duplicates } = commit
      ? this.deps.db.transaction(() => {
          const result = this.deps.inbox.acceptNow(channel, items);
          commit();
          return result;
        })()
      : await this.deps.inbox.accept(channel, items);
    let started_ok = false;
    try {
      started_ok = this.deps.supervisor.tryStartAll(fresh.map((entry) => () => this.route(entry)));
    } catch (error) {
      this.deps.inbox.release(fresh);
      this.emit(channel, fresh.length, duplicates, started, "dispatch_error");
      throw error;
    }
    if (!started_ok) {
      this.deps.inbox.release(fresh);
      this.emit(channel, fresh.length, duplicates, started, "capacity");
      throw new HandoffUnavailable();
    }
    this.emit(channel, fresh.length, duplicates, started, "accepted");
    return { fresh: fresh.length, duplicates };
  }

  /** Run every entry a crash left unfinished, oldest first; returns how many. */
  replay(): number {
    const pending = this.deps.inbox.pending();
    if (pending.length === 0) return 0;
    this.deps.log.info("replaying unfinished inbox entries", { entries: pending.length });
    for (const entry of pending) this.replaying.add(entry.id);
    this.deps.supervisor.tryStartAll(
      pending.map((entry) => () => this.route(entry)),
      true,
    );
    return pending.length;
  }

  /** Dispatch every held album part now (shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.albums.values()].map((album) => album.flushAll()));
  }

  private entriesOf(parts: Array<{ key: string }>): InboxEntry[] {
    return parts.map((p) => this.buffered.get(p.key)).filter((e): e is InboxEntry => e !== undefined);
  }

  private async route(entry: InboxEntry): Promise<void> {
    const album = this.albums.get(entry.channel as GatewayChannel);
    if (!album) {
      try {
        const replay = this.replaying.delete(entry.id);
        await this.deps.gateway.ingest(entry.message, { inboxIds: [entry.id], ...(replay ? { replay } : {}) });
      } catch (error) {
        // Same rule as an album: a dispatch that fails forgets the key, so a redelivery runs again.
        this.deps.inbox.release([entry]);
        throw error;
      }
      return;
    }
    const key = String(entry.id);
    this.buffered.set(key, entry);
    await album.offer(entry.message, key, albumGroup(entry)).done;
  }

  private emit(channel: GatewayChannel, fresh: number, duplicate: number, started: number, outcome: string): void {
    if (!this.deps.viaWebhook(channel)) return;
    this.deps.telemetry.emit("channel.webhook", {
      measurements: { fresh, duplicate, duration_ms: performance.now() - started },
      metadata: { channel, outcome },
    });
  }
}

/** Telegram albums share a media_group_id; other channels' albums group by sender (the buffer's default). */
function albumGroup(entry: InboxEntry): string | undefined {
  const group = entry.message.albumGroup;
  return group === undefined ? undefined : `${entry.channel}:${entry.message.chatId}:${group}`;
}
