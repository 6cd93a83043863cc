/**
 * The webhook routes: one per channel whose profile declares a webhook
 * (src/channels/<name>/webhook.ts), always mounted, configured or not. The
 * channel verifies and reads its platform's requests; this module keeps what
 * every route shares. Order of checks: body limit (the server, before any
 * route), signature over the raw bytes, content type, payload. An authentic
 * request is answered `200 {"ok":true}` as soon as its messages are in the
 * durable inbox; the agent runs afterwards. Refusals follow the table of
 * docs/http.md (respond.ts).
 */
import { Elysia } from "elysia";
import { CHANNELS } from "../../channels/registry.ts";
import type { WebhookContext, WebhookHandler } from "../../channels/webhook.ts";
import type { Config } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Telemetry } from "../../kernel/telemetry.ts";
import { type GatewayChannel, HandoffUnavailable, type Submission } from "../../message/index.ts";
import { accepted, failure, isJsonContent, plainText, rawBody, type WebhookFailure } from "./respond.ts";

export interface WebhookDeps {
  /** The config, or a getter for the one in force (the daemon reloads it; secrets are read per request). */
  config: Config | (() => Config);
  submit(channel: GatewayChannel, items: Submission[]): Promise<unknown>;
  log: Logger;
  nowSeconds?: () => number;
  /** Whether Fermix has replied in a thread of a chat (a Slack reply in any other thread is not for the bot); absent: every thread is. */
  repliedInThread?: (channel: GatewayChannel, chatId: string, threadId: string) => boolean;
  /** Where a refused request is counted (`channel.webhook` with the reason as outcome); accepted ones are counted by the dispatcher. */
  telemetry?: Telemetry;
}

/** The channels with a webhook, each with its handler. */
export const WEBHOOKS: ReadonlyArray<readonly [GatewayChannel, WebhookHandler]> = Object.values(CHANNELS).flatMap(({ profile }) =>
  profile.webhook ? [[profile.name, profile.webhook] as const] : [],
);

export function webhookRoutes(deps: WebhookDeps) {
  const { log } = deps;
  const config = typeof deps.config === "function" ? deps.config : () => deps.config as Config;
  const now = deps.nowSeconds ?? (() => Math.floor(Date.now() / 1000));

  const refuse = (channel: GatewayChannel, reason: WebhookFailure) => {
    log.info("webhook refused", { channel, reason });
    // Capacity and dispatch errors are counted where they happen, in the dispatcher.
    if (reason !== "handoff_unavailable" && reason !== "dispatch_failed") {
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
      log.error("webhook dispatch failed", { channel, error: describeError(error) });
      return failure("dispatch_failed");
    }
  };

  const context = (channel: GatewayChannel): WebhookContext => ({
    config: config(),
    nowSeconds: now(),
    log,
    repliedInThread: (chatId, threadId) => deps.repliedInThread?.(channel, chatId, threadId) ?? true,
  });

  const post =
    (channel: GatewayChannel, handler: WebhookHandler) =>
    async ({ request }: { request: Request }) => {
      const body = await rawBody(request);
      if (body === null) return refuse(channel, handler.configured(config()) ? "missing_raw_body" : "not_configured");
      const at = context(channel);
      const verdict = handler.verify(body, request.headers, at);
      if (!verdict.ok) return refuse(channel, verdict.reason);
      if (!isJsonContent(request)) return refuse(channel, "unsupported_transport");
      const parsed = handler.parse(body, at);
      if (parsed.kind === "invalid") return refuse(channel, "invalid_webhook_payload");
      if (parsed.kind === "challenge") return plainText(parsed.text);
      return hand(channel, parsed.items);
    };

  const app = new Elysia({ name: "webhooks", precompile: true });
  for (const [channel, handler] of WEBHOOKS) {
    const { challenge } = handler;
    if (challenge) {
      app.get(handler.path, ({ request }) => {
        const result = challenge(new URL(request.url).searchParams, config());
        return result.ok ? plainText(result.text) : refuse(channel, result.reason);
      });
    }
    app.post(handler.path, post(channel, handler), { parse: "none" });
  }
  return app;
}
