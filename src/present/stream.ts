/**
 * The streaming engine's front: which mode a turn streams in, and one
 * factory that drives a reply port from provider events in that mode —
 * "off" (deliver once at the end), "draft" (a live message edited in place,
 * sealed into cards) or "block" (each finished output item as messages).
 * Every text it sends goes through renderReply: split → render → measure.
 */
import type { StreamingMode } from "../config/schema.ts";
import type { ReplyCapabilities } from "../message/index.ts";
import { deliverReply } from "./deliver.ts";
import { StreamBase, type Streamer, type StreamerOptions } from "./stream-base.ts";
import { BlockStream } from "./stream-block.ts";
import { DraftStream } from "./stream-draft.ts";

export type { Streamer, StreamerOptions } from "./stream-base.ts";

/** The mode a channel streams in, and whether its configuration asked for the impossible. */
export interface ResolvedStreaming {
  mode: StreamingMode;
  /** An explicit "draft" on a channel that cannot edit: the turn does not stream; doctor reports it. */
  mismatch: boolean;
}

/**
 * The streaming mode for a channel: an explicit `streaming` key wins; unset,
 * a channel that can edit streams drafts and the others stream blocks. An
 * explicit "draft" where editing is impossible means no streaming at all —
 * never a silent fallback to blocks.
 */
export function resolveStreamingMode(configured: StreamingMode | undefined, capabilities: Pick<ReplyCapabilities, "edit">): ResolvedStreaming {
  if (configured === "draft" && !capabilities.edit) return { mode: "off", mismatch: true };
  if (configured) return { mode: configured, mismatch: false };
  return { mode: capabilities.edit ? "draft" : "block", mismatch: false };
}

/** Where a turn comes from: only real channel turns stream (not background or scheduled work, nor a local surface such as the terminal). */
export type TurnOrigin = "channel" | "background" | "scheduled" | "local";

/** The mode one turn streams in: off unless it is a channel turn and the provider streams. */
export function turnStreamingMode(resolved: StreamingMode, origin: TurnOrigin, providerStreams: boolean): StreamingMode {
  return origin === "channel" && providerStreams ? resolved : "off";
}

/** A streamer for one turn in the given (already resolved) mode. */
export function createStreamer(options: StreamerOptions & { mode: StreamingMode }): Streamer {
  if (options.mode === "draft") return new DraftStream(options);
  if (options.mode === "block") return new BlockStream(options);
  return new OffStream(options);
}

/** No streaming: events are ignored and the final reply is delivered once, whole. */
class OffStream extends StreamBase implements Streamer {
  async push(): Promise<void> {}

  finish(finalMarkdown: string): Promise<void> {
    return this.serial(async () => {
      if (this.done) return;
      this.done = true;
      await deliverReply(this.port, this.platform, finalMarkdown, this.deliverOptions());
    });
  }

  async stop(): Promise<void> {
    this.done = true;
  }

  async cut(): Promise<void> {
    this.done = true;
  }
}
