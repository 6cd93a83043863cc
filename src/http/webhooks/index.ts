/**
 * The WhatsApp and Slack webhook routes. Always mounted, configured or not.
 * Order of checks: body limit (the server, before any route), signature over
 * the raw bytes, content type, payload. An authentic request is answered
 * `200 {"ok":true}` as soon as its messages are in the durable inbox; the
 * agent runs afterwards.
 */
import { Elysia } from "elysia";
import { verifySlackRequest } from "../../channels/slack/verify.ts";
import { parseSlackBody } from "../../channels/slack/inbound.ts";
import { HandoffUnavailable, type Submission } from "../../message/index.ts";
import { verifyWhatsAppChallenge, verifyWhatsAppSignature } from "../../channels/whatsapp/verify.ts";
import { parseWhatsAppBody } from "../../channels/whatsapp/inbound.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import type { GatewayChannel } from "../../message/index.ts";
import { accepted, failure, isJsonContent, plainText, rawBody, type WebhookFailure } from "./respond.ts";

export interface WebhookDeps {
  /** The config, or a getter for the one in force (the daemon reloads it; secrets are read per request). */
  config: Config | (() => Config);
  submit(channel: GatewayChannel, items: Submission[]): Promise<unknown>;
  log: Logger;
  nowSeconds?: () => number;
  /** Whether the bot takes part in a Slack thread; a reply in any other thread is not for it. */
  slackBotInThread?: (channel: string, threadTs: string) => boolean;
  /** Where a refused request is counted (`channel.webhook` with the reason as outcome); accepted ones are counted by the dispatcher. */
  telemetry?: Telemetry;
}

export function webhookRoutes(deps: WebhookDeps) {
  const { log } = deps;
  const config = typeof deps.config === "function" ? deps.config : () => deps.config as Config;
  // A disabled channel keeps its route, but without secrets every request is not_configured.
  const waVerifyToken = () => (config().fermix_channels.whatsapp.enabled ? config().fermix_channels.whatsapp.verify_token : undefined);
  const waAppSecret = () => (config().fermix_channels.whatsapp.enabled ? config().fermix_channels.whatsapp.app_secret : undefined);
  const slackSecret = () => (config().fermix_channels.slack.enabled ? config().fermix_channels.slack.signing_secret : undefined);
  const now = deps.nowSeconds ?? (() => Math.floor(Date.now() / 1000));

  const refuse = (channel: GatewayChannel, reason: WebhookFailure) => {
    log.info("webhook refused", { channel, reason });
    // Capacity and dispatch errors are counted where they happen, in the dispatcher.
    if (reason !== "handoff_unavailable" && reason !== "dispatch_failed" && (channel === "whatsapp" || channel === "slack")) {
      deps.telemetry?.emit("channel.webhook", { measurements: { fresh: 0, duplicate: 0, duration_ms: 0 }, metadata: { channel, outcome: reason } });
    }
    return failure(reason);
  };

  const hand = async (channel: GatewayChannel, items: Submission[]) => {
    if (items.length === 0) return accepted();
    try {
      await deps.submit(channel, items);
      return accepted();
    } catch (error) {
      if (error instanceof HandoffUnavailable) return refuse(channel, "handoff_unavailable");
      log.error("webhook dispatch failed", { channel, error: error instanceof Error ? error.message : String(error) });
      return failure("dispatch_failed");
    }
  };

  return new Elysia({ name: "webhooks", precompile: true })
    .get("/webhook/whatsapp", ({ request }) => {
      const query = new URL(request.url).searchParams;
      const result = verifyWhatsAppChallenge({
        mode: query.get("hub.mode") ?? undefined,
        token: query.get("hub.verify_token") ?? undefined,
        challenge: query.get("hub.challenge") ?? undefined,
        verifyToken: waVerifyToken(),
      });
      return result.ok ? plainText(result.challenge) : refuse("whatsapp", result.reason);
    })
    .post(
      "/webhook/whatsapp",
      async ({ request }) => {
        const body = await rawBody(request);
        const appSecret = waAppSecret();
        if (body === null) return refuse("whatsapp", appSecret ? "missing_raw_body" : "not_configured");
        const verdict = verifyWhatsAppSignature({
          rawBody: body,
          signatureHeader: request.headers.get("x-hub-signature-256") ?? undefined,
          appSecret,
        });
        if (!verdict.ok) return refuse("whatsapp", verdict.reason);
        if (!isJsonContent(request)) return refuse("whatsapp", "unsupported_transport");
        const maxAgeHours = config().fermix_channels.whatsapp.max_message_age_hours;
        const parsed = parseWhatsAppBody(body, { receivedAt: now() * 1000, maxAgeMs: maxAgeHours * 3_600_000 });
        if (parsed.kind === "invalid") return refuse("whatsapp", "invalid_webhook_payload");
        if (parsed.stale) log.warn("whatsapp messages older than the freshness window dropped", { messages: parsed.stale, max_age_hours: maxAgeHours });
        return hand(
          "whatsapp",
          parsed.messages.map(({ message, idempotencyKey }) => ({ key: idempotencyKey, message })),
        );
      },
      { parse: "none" },
    )
    .post(
      "/webhook/slack",
      async ({ request }) => {
        const body = await rawBody(request);
        const signingSecret = slackSecret();
        if (body === null) return refuse("slack", signingSecret ? "missing_raw_body" : "not_configured");
        const verdict = verifySlackRequest({
          rawBody: body,
          timestampHeader: request.headers.get("x-slack-request-timestamp") ?? undefined,
          signatureHeader: request.headers.get("x-slack-signature") ?? undefined,
          signingSecret,
          nowSeconds: now(),
        });
        if (!verdict.ok) return refuse("slack", verdict.reason);
        if (!isJsonContent(request)) return refuse("slack", "unsupported_transport");
        const parsed = parseSlackBody(body, deps.slackBotInThread ? { botInThread: deps.slackBotInThread } : {});
        switch (parsed.kind) {
          case "invalid":
            return refuse("slack", "invalid_webhook_payload");
          case "url_verification":
            return plainText(parsed.challenge);
          case "ignored":
            return accepted();
          case "message":
            return hand("slack", [{ key: parsed.idempotencyKey, message: parsed.message }]);
        }
      },
      { parse: "none" },
    );
}
