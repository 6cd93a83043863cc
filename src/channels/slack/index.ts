/**
 * The Slack channel adapter. Inbound arrives through the daemon's
 * POST /webhook/slack route (verify.ts, inbound.ts), so there is nothing to
 * start: the adapter is "running" while the daemon serves that route. It
 * builds reply ports on the Web API and downloads inbound files.
 */
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../kernel/log.ts";
import type { FetchedMedia, InboundMedia, ReplyTarget } from "../../message/index.ts";
import { MB } from "../../kernel/sizes.ts";
import type { AdapterContext, ChannelAdapter } from "../types.ts";
import { startupFailure, webhookLifecycle } from "../webhook-lifecycle.ts";
import { SlackApi, type SlackApiOptions } from "./api.ts";
import { SLACK_CAPABILITIES, slackReplyPort } from "./outbound.ts";

/** The inbound media cap for Slack: a larger file is not downloaded. */
export const SLACK_INBOUND_CAP = 100 * MB;

/** Test seams: everything else comes from config. */
export type SlackAdapterOptions = Partial<Omit<SlackApiOptions, "token" | "apiUrl" | "log">> & { log?: Logger };

/** Build the Slack adapter from `[fermix_channels.slack]`. */
export function slackAdapter(config: Config, options: SlackAdapterOptions = {}): ChannelAdapter {
  const section = config.fermix_channels.slack;
  const token = section.bot_token ?? "";
  const lifecycle = webhookLifecycle("slack", options.log);
  const api = new SlackApi({ ...options, token, apiUrl: section.api_url, log: lifecycle.log });

  return {
    name: "slack",
    capabilities: SLACK_CAPABILITIES,
    inboundMediaCap: SLACK_INBOUND_CAP,
    async start(context: AdapterContext) {
      // Check the token before claiming to be ready: a revoked or mistyped token shows in health at once
      // (the daemon retries a failed start with backoff), not at the first reply that cannot be sent.
      await api.authTest().catch((error: unknown) => {
        throw startupFailure("Slack", "bot token", error);
      });
      lifecycle.start(context, [token, section.signing_secret]);
    },
    async stop() {
      lifecycle.stop();
    },
    state: lifecycle.state,
    replyPort: (target: ReplyTarget) => slackReplyPort(api, target, lifecycle.overCap),
    async fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia> {
      // The gateway checked the declared size; the download is capped again in case Slack's figure was wrong.
      const { bytes, mime } = await api.download(media.ref, Math.min(SLACK_INBOUND_CAP, maxBytes ?? Number.POSITIVE_INFINITY), signal);
      const fetched: FetchedMedia = { bytes, mime: media.mime ?? mime };
      if (media.filename) fetched.filename = media.filename;
      return fetched;
    },
  };
}
