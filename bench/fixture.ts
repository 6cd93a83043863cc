/**
 * The configured daemon the benchmarks measure: a provider on the fake model,
 * and Telegram, Slack, WhatsApp and ACP on, each platform pointed at its
 * loopback fake from test/fakes/ — so nothing in a benchmark leaves
 * 127.0.0.1 (a platform left at its real API URL would have the adapter's
 * start-up check look up slack.com and friends).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../test/fakes/model-server.ts";
import { SLACK_ALICE, type SlackFake, startSlackFake } from "../test/fakes/slack.ts";
import { ALICE, startTelegramFake, type TelegramFake } from "../test/fakes/telegram.ts";
import { startWhatsAppFake, WA_USER, type WhatsAppFake } from "../test/fakes/whatsapp.ts";
import { providerToml, slackToml, telegramToml, whatsappToml } from "../test/helpers/config.ts";

export const SLACK_SIGNING_SECRET = "bench-slack-signing-secret-0123456789";
const WHATSAPP_APP_SECRET = "bench-whatsapp-app-secret-0123456789";

export interface Fixture {
  model: FakeModel;
  slack: SlackFake;
  telegram: TelegramFake;
  whatsapp: WhatsAppFake;
  /** The environment `dist/fermix run` gets: a private home, the file secret store, PORT. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface FixtureOptions {
  /** PORT for the daemon (default 0). */
  port?: number;
  /** FERMIX_LOG_LEVEL (default warn: the benchmark reads nothing from the log). */
  logLevel?: string;
  /** Which channels are on; default all four. */
  channels?: { telegram?: boolean; slack?: boolean; whatsapp?: boolean; acp?: boolean };
}

/** The wire format the daemon's provider speaks to the fake model: chat, unless BENCH_PROVIDER_API names another (anthropic: what an Anthropic user's daemon loads). */
function providerApi(): "chat" | "responses" | "anthropic" {
  const api = process.env.BENCH_PROVIDER_API ?? "chat";
  if (api !== "chat" && api !== "responses" && api !== "anthropic") throw new Error(`BENCH_PROVIDER_API: expected chat, responses or anthropic, got "${api}"`);
  return api;
}

/** Start the fakes and write a home whose config turns the channels on against them. */
export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const on = { telegram: true, slack: true, whatsapp: true, acp: true, ...options.channels };
  const model = await startFakeModel();
  // An instant model: every request gets the same short reply, in one chunk.
  model.fallback(reply.text("ok"));
  const slack = startSlackFake();
  const telegram = startTelegramFake();
  const whatsapp = startWhatsAppFake();
  const root = mkdtempSync(join(tmpdir(), "fermix-bench-"));
  const home = join(root, ".fermix");
  mkdirSync(home, { mode: 0o700 });
  const toml =
    providerToml(model.url, { api: providerApi() }) +
    telegramToml({ enabled: on.telegram, botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
    slackToml({ enabled: on.slack, botToken: slack.token, signingSecret: SLACK_SIGNING_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
    whatsappToml({
      enabled: on.whatsapp,
      accessToken: whatsapp.token,
      phoneNumberId: whatsapp.phoneNumberId,
      verifyToken: "bench-verify-token",
      appSecret: WHATSAPP_APP_SECRET,
      allowedSenderIds: [WA_USER.wa_id],
      graphApiBase: whatsapp.graphBase("v25.0"),
    }) +
    `\n[fermix_channels.acp]\nenabled = ${on.acp}\n`;
  writeFileSync(join(home, "config.toml"), toml);
  return {
    model,
    slack,
    telegram,
    whatsapp,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: root,
      FERMIX_HOME: home,
      FERMIX_SECRET_STORE: "file",
      PORT: String(options.port ?? 0),
      FERMIX_LOG_LEVEL: options.logLevel ?? "warn",
      NO_COLOR: "1",
    },
    async stop() {
      await Promise.all([model.stop(), slack.stop(), telegram.stop(), whatsapp.stop()]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
