/**
 * The wizard's channels step: which chat channels to serve, the credentials
 * each needs, and its owner. Telegram checks its token (getMe) and pairs
 * the owner by a message to the bot — through the running daemon when that
 * daemon polls the same token, else by polling getUpdates here — with a
 * timeout and a typed-in id as the fallback. Other channels explain /whoami.
 */
import type { Env } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { channelChanges } from "../setup/changes.ts";
import { SETUP_CHANNELS, type SetupChannel } from "../setup/fields.ts";
import type { SetupChange } from "../setup/plan.ts";
import { describeChannel, webhookHint } from "../setup/summary.ts";
import { pairTelegram } from "../setup/pairing.ts";
import { type PairedSender, telegramGetMe, TelegramSetupError } from "../setup/telegram.ts";
import { daemonRunning, pairThroughDaemon } from "./setup-daemon.ts";
import { loaderCheck, type Prompts } from "./setup-prompts.ts";

const LABELS: Record<SetupChannel, { label: string; hint: string }> = {
  telegram: { label: "Telegram", hint: "a bot from @BotFather; long polling, no public URL needed" },
  whatsapp: { label: "WhatsApp", hint: "Cloud API; needs a public HTTPS URL for its webhook" },
  slack: { label: "Slack", hint: "Events API; needs a public HTTPS URL for its webhook" },
  discord: { label: "Discord", hint: "a bot from the Developer Portal" },
  signal: { label: "Signal", hint: "through signal-cli and a registered number" },
};

export interface ChannelsStepInput {
  ask: Prompts;
  /** The config as it stands (with flag presets applied). */
  config: Config;
  env: Env;
  controlSocket: string;
  /** How long Telegram pairing waits for a message (ms). */
  pairTimeoutMs: number;
}

export async function channelsStep(input: ChannelsStepInput): Promise<SetupChange[]> {
  const { ask, config } = input;
  const enabledNow = SETUP_CHANNELS.filter((name) => config.fermix_channels[name].enabled);
  const chosen = await ask.multiselect(
    "Which channels should Fermix serve? (space toggles, enter confirms)",
    SETUP_CHANNELS.map((name) => ({ value: name, label: LABELS[name].label, hint: `now: ${describeChannel(config, name)}` })),
    enabledNow,
  );
  const changes: SetupChange[] = [];
  for (const name of SETUP_CHANNELS) {
    if (!chosen.includes(name)) {
      if (config.fermix_channels[name].enabled) changes.push(...channelChanges(name, false));
      continue;
    }
    ask.log.step(`${LABELS[name].label} — now: ${describeChannel(config, name)}`);
    const values = name === "telegram" ? await telegram(input) : await otherChannel(input, name);
    changes.push(...channelChanges(name, true, values));
  }
  return changes;
}

/** A secret prompt that keeps the stored value when left empty. */
async function credential(ask: Prompts, config: Config, name: SetupChannel, key: string, label: string): Promise<string | undefined> {
  const stored = (config.fermix_channels[name] as Record<string, unknown>)[key];
  const value = await ask.secret(stored ? `${label} (leave empty to keep the stored one)` : label, {
    validate: loaderCheck(`fermix_channels.${name}.${key}`, (raw) => raw.trim(), Boolean(stored)),
  });
  return value === "" ? undefined : value;
}

async function plain(ask: Prompts, config: Config, name: SetupChannel, key: string, label: string, optional = false): Promise<string | undefined> {
  const now = (config.fermix_channels[name] as Record<string, unknown>)[key];
  const value = await ask.text(label, {
    ...(typeof now === "string" ? { initial: now } : {}),
    validate: loaderCheck(`fermix_channels.${name}.${key}`, (raw) => raw.trim(), optional),
  });
  return value === "" ? undefined : value;
}

async function owner(ask: Prompts, config: Config, name: SetupChannel, how: string): Promise<string | undefined> {
  ask.log.info(`The owner is the one account that may run operator commands. ${how} Send /whoami to the bot to see any account's id.`);
  const value = await plain(ask, config, name, "owner_user_id", "Owner id (empty: set it later with fermix setup --reconfigure)", true);
  if (!value && !(config.fermix_channels[name] as { owner_user_id?: string }).owner_user_id) {
    ask.log.warn(`Without an owner or an allowlist, ${LABELS[name].label} is refused at start: nobody may talk to it.`);
  }
  return value;
}

async function otherChannel(input: ChannelsStepInput, name: Exclude<SetupChannel, "telegram">): Promise<Record<string, unknown>> {
  const { ask, config } = input;
  const values: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) values[key] = value;
  };
  switch (name) {
    case "whatsapp":
      put("access_token", await credential(ask, config, name, "access_token", "Cloud API access token"));
      put("phone_number_id", await plain(ask, config, name, "phone_number_id", "Phone number id"));
      put("verify_token", await credential(ask, config, name, "verify_token", "Webhook verify token (any string you choose; the same goes in Meta's app settings)"));
      put("app_secret", await credential(ask, config, name, "app_secret", "App secret (signs the webhooks)"));
      put("owner_user_id", await owner(ask, config, name, "For WhatsApp it is your number, digits only (e.g. 15550001111)."));
      ask.note(webhookHint(config, input.env, "whatsapp"), "WhatsApp webhook");
      break;
    case "slack":
      put("bot_token", await credential(ask, config, name, "bot_token", "Bot token (xoxb-…)"));
      put("signing_secret", await credential(ask, config, name, "signing_secret", "Signing secret"));
      put("owner_user_id", await owner(ask, config, name, "For Slack it is your member id (U…), under your profile's ⋮ menu."));
      ask.note(`${webhookHint(config, input.env, "slack")} Subscribe to message.im and app_mention.`, "Slack Events API");
      break;
    case "discord":
      put("bot_token", await credential(ask, config, name, "bot_token", "Bot token"));
      put("bot_user_id", await plain(ask, config, name, "bot_user_id", "The bot's user id (optional)", true));
      put("owner_user_id", await owner(ask, config, name, "For Discord it is your user id (Developer Mode → Copy User ID)."));
      break;
    case "signal":
      put("account", await plain(ask, config, name, "account", "The bot's Signal number, registered with signal-cli (e.g. +15550001111)"));
      put("cli_path", await plain(ask, config, name, "cli_path", "signal-cli executable", true));
      put("owner_user_id", await owner(ask, config, name, "For Signal it is your number or your UUID."));
      break;
  }
  return values;
}

async function telegram(input: ChannelsStepInput): Promise<Record<string, unknown>> {
  const { ask, config } = input;
  const section = config.fermix_channels.telegram;
  const values: Record<string, unknown> = {};
  let token: string | undefined;
  let bot: { username: string } | undefined;
  for (;;) {
    const typed = await credential(ask, config, "telegram", "bot_token", "Bot token (from @BotFather)");
    token = typed ?? section.bot_token;
    if (!token) continue;
    const spin = ask.spinner();
    spin.start("Checking the token with Telegram (getMe)");
    try {
      bot = await telegramGetMe(token, { apiRoot: section.api_root });
      spin.stop(`The token belongs to @${bot.username}`);
      break;
    } catch (error) {
      spin.error(error instanceof TelegramSetupError ? error.message : String(error));
      const next = await ask.select("What now?", [
        { value: "again", label: "Enter the token again" },
        { value: "keep", label: "Keep it anyway (the daemon will retry)" },
      ]);
      if (next === "keep") break;
    }
  }
  if (token !== section.bot_token) values.bot_token = token;

  const ownerNow = section.owner_user_id;
  const how = await ask.select(
    "Who owns this bot?",
    [
      ...(bot ? [{ value: "pair", label: `Pair: send any message to @${bot.username} from your Telegram account`, hint: "recommended" }] : []),
      { value: "type", label: "Type my numeric user id" },
      ...(ownerNow ? [{ value: "keep", label: `Keep the owner ${ownerNow}` }] : []),
    ],
    bot ? "pair" : ownerNow ? "keep" : "type",
  );
  if (how === "keep") return values;
  if (how === "pair" && bot) {
    const sender = await pair(input, token!, bot.username, token === section.bot_token);
    if (sender && (await ask.confirm(`Make ${sender.name}${sender.username ? ` (@${sender.username})` : ""}, id ${sender.id}, the owner?`))) {
      values.owner_user_id = sender.id;
      return values;
    }
  }
  const typed = await owner(ask, config, "telegram", "For Telegram it is a number; @userinfobot tells you yours.");
  if (typed) values.owner_user_id = typed;
  return values;
}

/** Wait for the owner's message: through the daemon when it polls this token, else here. */
async function pair(input: ChannelsStepInput, token: string, username: string, daemonMayPoll: boolean): Promise<PairedSender | undefined> {
  const { ask } = input;
  const seconds = Math.round(input.pairTimeoutMs / 1000);
  const spin = ask.spinner();
  spin.start(`Waiting for a message to @${username} (send it from your Telegram account; ${seconds} s)`);
  try {
    const viaDaemon = daemonMayPoll && (await daemonRunning(input.controlSocket));
    const result = await pairTelegram(token, {
      apiRoot: input.config.fermix_channels.telegram.api_root,
      timeoutMs: input.pairTimeoutMs,
      ...(viaDaemon ? { throughDaemon: (timeoutMs: number, signal?: AbortSignal) => pairThroughDaemon(input.controlSocket, "telegram", timeoutMs, signal) } : {}),
    });
    if (result.kind === "timeout") {
      spin.error(`No message arrived in ${seconds} s`);
      return undefined;
    }
    spin.stop(`Message received from ${result.sender.name}`);
    return result.sender;
  } catch (error) {
    spin.error(error instanceof TelegramSetupError ? error.message : String(error));
    return undefined;
  }
}
