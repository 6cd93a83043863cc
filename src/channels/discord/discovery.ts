/**
 * Where and when the Discord gateway client may identify: the URL from
 * GET /gateway/bot, the daily session start limit (when none is left, wait
 * `reset_after`), and `max_concurrency` (identifies per 5 s, one for most
 * bots). A 401 there means the token is wrong: the adapter stops. When the
 * REST API cannot be reached, the URL from before serves.
 */

import { describeError } from "../../kernel/errors.ts";
import { faultLine, statusFault } from "../../kernel/fault-line.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Sleep } from "../../kernel/wait.ts";
import { type DiscordApi, DiscordApiError } from "./api.ts";

/** The next identify: where, or how long to wait first, or never. */
export type Discovery = { kind: "url"; url: string } | { kind: "retry"; delayMs?: number; detail: string } | { kind: "stop"; reason: string };

export class GatewayDiscovery {
  private gatewayUrl: string | undefined;
  private lastIdentifyAt = Number.NEGATIVE_INFINITY;
  private spacingMs = 5000;

  constructor(
    private readonly api: Pick<DiscordApi, "getGatewayBot">,
    private readonly log: Logger,
    private readonly sleep: Sleep,
    private readonly now: () => number,
  ) {}

  /** The URL to identify on, once the limits allow; waits for max_concurrency spacing itself. */
  async next(signal: AbortSignal): Promise<Discovery> {
    let info: Awaited<ReturnType<DiscordApi["getGatewayBot"]>>;
    try {
      info = await this.api.getGatewayBot(signal);
    } catch (error) {
      if (signal.aborted) return { kind: "retry", detail: "stopping" };
      if (error instanceof DiscordApiError && error.kind === "unauthorized") {
        return {
          kind: "stop",
          reason: "Discord rejected the bot token (401 on GET /gateway/bot): set a valid bot_token (or DISCORD_BOT_TOKEN) and restart Fermix",
        };
      }
      const why = describeError(error);
      if (!this.gatewayUrl) {
        this.log.warn("discord gateway URL not available; retrying", { error: why });
        // Health gets the class and status; Discord's (or the network's) own words are in the log line above.
        const status = error instanceof DiscordApiError ? error.status : undefined;
        return {
          kind: "retry",
          detail: `cannot reach Discord: ${faultLine({ fault: statusFault(status), ...(status !== undefined ? { status } : {}) }, "Discord")}`,
        };
      }
      this.log.warn("GET /gateway/bot failed; using the gateway URL from before", { error: why });
      return this.spaced(this.gatewayUrl, signal);
    }
    this.gatewayUrl = info.url;
    const limit = info.session_start_limit;
    this.spacingMs = 5000 / Math.max(1, limit?.max_concurrency ?? 1);
    if (limit && limit.remaining <= 0) {
      const waitMs = Math.max(1000, limit.reset_after);
      this.log.warn("discord session start limit reached; waiting for its reset", { wait_ms: waitMs, total: limit.total });
      return {
        kind: "retry",
        delayMs: waitMs,
        detail: `Discord's session start limit is used up (0 of ${limit.total} left); waiting ${Math.ceil(waitMs / 1000)} s for it to reset`,
      };
    }
    return this.spaced(info.url, signal);
  }

  /** An Identify was sent now: the next one waits its turn. */
  identified(): void {
    this.lastIdentifyAt = this.now();
  }

  private async spaced(url: string, signal: AbortSignal): Promise<Discovery> {
    const wait = this.lastIdentifyAt + this.spacingMs - this.now();
    if (wait > 0) {
      try {
        await this.sleep(wait, signal);
      } catch {
        return { kind: "retry", detail: "stopping" };
      }
    }
    return { kind: "url", url };
  }
}
