/**
 * The configured daemon the benchmarks measure: a provider on the fake model,
 * and the chosen channels on, each platform pointed at its loopback fake from
 * test/fakes/ (Signal through the fake signal-cli, which the daemon starts as
 * its child) — so nothing in a benchmark leaves 127.0.0.1 (a platform left
 * at its real API URL would have the adapter's start-up check look up
 * slack.com and friends). Optionally the features that sit idle until used:
 * an MCP server (the reference server, over stdio), realtime voice and
 * computer use.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EVERYTHING } from "../test/agent/mcp/servers.ts";
import { DISCORD_ALICE, type DiscordFake, startDiscordFake } from "../test/fakes/discord.ts";
import { type FakeModel, reply, startFakeModel } from "../test/fakes/model-server.ts";
import { SIGNAL_ALICE, type SignalFake, startSignalFake } from "../test/fakes/signal.ts";
import { SLACK_ALICE, type SlackFake, startSlackFake } from "../test/fakes/slack.ts";
import { ALICE, startTelegramFake, type TelegramFake } from "../test/fakes/telegram.ts";
import { startWhatsAppFake, WA_USER, type WhatsAppFake } from "../test/fakes/whatsapp.ts";
import { discordToml, providerToml, signalToml, slackToml, telegramToml, tomlTable, whatsappToml } from "../test/helpers/config.ts";

export const SLACK_SIGNING_SECRET = "bench-slack-signing-secret-0123456789";
const WHATSAPP_APP_SECRET = "bench-whatsapp-app-secret-0123456789";

export type BenchChannel = "telegram" | "slack" | "whatsapp" | "discord" | "signal" | "acp";
/** The channels earlier figures were measured with. */
export const FOUR_CHANNELS: readonly BenchChannel[] = ["telegram", "slack", "whatsapp", "acp"];
/** Every channel Fermix has. */
export const SIX_CHANNELS: readonly BenchChannel[] = ["telegram", "slack", "whatsapp", "discord", "signal", "acp"];

/** Features configured but idle until used. */
export type IdleFeature = "mcp" | "realtime" | "computer";

export interface Fixture {
  model: FakeModel;
  slack: SlackFake;
  telegram: TelegramFake;
  whatsapp: WhatsAppFake;
  discord: DiscordFake;
  signal: SignalFake;
  /** The daemon's home: config.toml and fermix.db live here. */
  home: string;
  /** The environment `dist/fermix run` gets: a private home, the file secret store, PORT. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface FixtureOptions {
  /** PORT for the daemon (default 0). */
  port?: number;
  /** FERMIX_LOG_LEVEL (default warn: the benchmark reads nothing from the log). */
  logLevel?: string;
  /** Which channels are on; default FOUR_CHANNELS. */
  channels?: readonly BenchChannel[];
  /** Idle features to configure. */
  features?: readonly IdleFeature[];
}

/** The wire format the daemon's provider speaks to the fake model: chat, unless BENCH_PROVIDER_API names another (anthropic: what an Anthropic user's daemon loads). */
function providerApi(): "chat" | "responses" | "anthropic" {
  const api = process.env.BENCH_PROVIDER_API ?? "chat";
  if (api !== "chat" && api !== "responses" && api !== "anthropic") throw new Error(`BENCH_PROVIDER_API: expected chat, responses or anthropic, got "${api}"`);
  return api;
}

/** Start the fakes and write a home whose config turns the channels on against them. */
export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const channels = new Set(options.channels ?? FOUR_CHANNELS);
  const on = (channel: BenchChannel) => channels.has(channel);
  const features = new Set(options.features ?? []);
  const model = await startFakeModel();
  // An instant model: every request gets the same short reply, in one chunk.
  model.fallback(reply.text("ok"));
  const slack = startSlackFake();
  const telegram = startTelegramFake();
  const whatsapp = startWhatsAppFake();
  const discord = startDiscordFake();
  const signal = startSignalFake();
  const root = mkdtempSync(join(tmpdir(), "fermix-bench-"));
  const home = join(root, ".fermix");
  mkdirSync(home, { mode: 0o700 });
  const toml =
    providerToml(model.url, { api: providerApi() }) +
    telegramToml({ enabled: on("telegram"), botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id) }) +
    slackToml({ enabled: on("slack"), botToken: slack.token, signingSecret: SLACK_SIGNING_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }) +
    whatsappToml({
      enabled: on("whatsapp"),
      accessToken: whatsapp.token,
      phoneNumberId: whatsapp.phoneNumberId,
      verifyToken: "bench-verify-token",
      appSecret: WHATSAPP_APP_SECRET,
      allowedSenderIds: [WA_USER.wa_id],
      graphApiBase: whatsapp.graphBase("v25.0"),
    }) +
    (on("discord") ? discordToml({ botToken: discord.token, ownerUserId: DISCORD_ALICE.id, apiBase: discord.apiBase }) : "") +
    (on("signal")
      ? signalToml({ account: signal.account, cliPath: signal.cliPath, attachmentsDir: signal.attachmentsDir, ownerUserId: SIGNAL_ALICE.number })
      : "") +
    tomlTable("fermix_channels.acp", { enabled: on("acp") }) +
    // The reference MCP server, run by the same Bun as the benchmark, over stdio.
    (features.has("mcp") ? tomlTable("fermix_core.mcp.servers.everything", { command: process.execPath, args: [EVERYTHING, "stdio"] }) : "") +
    (features.has("realtime") ? tomlTable("fermix_core.realtime", { enabled: true }) : "") +
    (features.has("computer") ? tomlTable("fermix_core.computer", { enabled: true }) : "");
  writeFileSync(join(home, "config.toml"), toml);
  return {
    model,
    slack,
    telegram,
    whatsapp,
    discord,
    signal,
    home,
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
      await Promise.all([model.stop(), slack.stop(), telegram.stop(), whatsapp.stop(), discord.stop(), signal.stop()]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
