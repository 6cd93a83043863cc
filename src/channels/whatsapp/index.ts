/**
 * The WhatsApp channel adapter. Inbound arrives through the daemon's
 * GET/POST /webhook/whatsapp routes (verify.ts, inbound.ts), so there is
 * nothing to start: the adapter is "running" while the daemon serves them.
 * It builds reply ports on the Cloud API and downloads inbound media
 * (media id → URL → bytes).
 */
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../kernel/log.ts";
import type { FetchedMedia, InboundMedia, ReplyTarget } from "../../message/index.ts";
import { MB } from "../../kernel/sizes.ts";
import { MediaTooLarge } from "../net.ts";
import type { AdapterContext, ChannelAdapter } from "../types.ts";
import { startupFailure, webhookLifecycle } from "../webhook-lifecycle.ts";
import { WhatsAppApi, type WhatsAppApiOptions } from "./api.ts";
import { WHATSAPP_CAPABILITIES, whatsAppReplyPort } from "./outbound.ts";

/** The inbound media cap for WhatsApp: a larger file is not downloaded. */
export const WHATSAPP_INBOUND_CAP = 25 * MB;

/** Test seams: everything else comes from config. */
export type WhatsAppAdapterOptions = Partial<Omit<WhatsAppApiOptions, "accessToken" | "phoneNumberId" | "graphApiBase" | "log">> & {
  log?: Logger;
};

/** Build the WhatsApp adapter from `[fermix_channels.whatsapp]`. */
export function whatsAppAdapter(config: Config, options: WhatsAppAdapterOptions = {}): ChannelAdapter {
  const section = config.fermix_channels.whatsapp;
  const accessToken = section.access_token ?? "";
  const lifecycle = webhookLifecycle("whatsapp", options.log);
  const api = new WhatsAppApi({
    ...options,
    accessToken,
    phoneNumberId: section.phone_number_id ?? "",
    graphApiBase: section.graph_api_base,
    log: lifecycle.log,
  });

  return {
    name: "whatsapp",
    capabilities: WHATSAPP_CAPABILITIES,
    inboundMediaCap: WHATSAPP_INBOUND_CAP,
    async start(context: AdapterContext) {
      // Check the token and number before claiming to be ready (see the Slack adapter).
      await api.phoneNumber(AbortSignal.timeout(15_000)).catch((error: unknown) => {
        throw startupFailure("WhatsApp", "access token for this phone number", error);
      });
      lifecycle.start(context, [accessToken, section.app_secret, section.verify_token]);
    },
    async stop() {
      lifecycle.stop();
    },
    state: lifecycle.state,
    replyPort: (target: ReplyTarget) => whatsAppReplyPort(api, target, lifecycle.overCap),
    async fetchMedia(media: InboundMedia, signal?: AbortSignal, maxBytes?: number): Promise<FetchedMedia> {
      // Webhooks carry no size; GET /{media-id} does, so the cap is checked before the bytes are asked for.
      const cap = Math.min(WHATSAPP_INBOUND_CAP, maxBytes ?? Number.POSITIVE_INFINITY);
      const info = await api.mediaInfo(media.ref, signal);
      if (info.size !== undefined && info.size > cap) throw new MediaTooLarge(info.size, cap);
      const { bytes, mime } = await api.download(info.url, cap, signal);
      const fetched: FetchedMedia = { bytes, mime: media.mime ?? info.mime ?? mime };
      if (media.filename) fetched.filename = media.filename;
      return fetched;
    },
  };
}
