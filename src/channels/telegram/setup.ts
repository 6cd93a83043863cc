/**
 * Telegram in setup (see ChannelSetup in src/channels/setup.ts): its keys,
 * and the wizard's questions. The token is checked with getMe, and the
 * owner is paired by a message to the bot — through the running daemon when
 * that daemon polls the same token, else by polling getUpdates here — with
 * a timeout and a typed-in id as the fallback.
 */
import type { ChannelSetup, OwnerPairing, PairedSender, WizardKit } from "../setup.ts";
import { telegramOpenClaw } from "./openclaw.ts";
import { pairTelegramOwner, TelegramSetupError, telegramGetMe } from "./setup-api.ts";

export const telegramPairing: OwnerPairing = {
  tokenKey: "bot_token",
  apiRootKey: "api_root",
  bot: (token, call) => telegramGetMe(token, call),
  awaitOwner: (token, call) => pairTelegramOwner(token, call),
  byHand: "@userinfobot tells you yours",
  unreachable: (apiRoot) => `cannot reach the Telegram Bot API at ${apiRoot}: no answer in time`,
};

export const telegramSetup: ChannelSetup = {
  label: "Telegram",
  openclaw: telegramOpenClaw,
  hint: "a bot from @BotFather; long polling, no public URL needed",
  fields: [
    { key: "enabled", kind: "boolean", help: "serve Telegram (true/false; on by default)" },
    { key: "bot_token", kind: "string", help: "the bot token from @BotFather; stored as a secret", label: "Bot token" },
    { key: "owner_user_id", kind: "string", help: "your numeric Telegram user id (what /whoami shows)", flag: "owner", label: "Owner id" },
    { key: "allowed_user_ids", kind: "list", help: "other user ids that may talk to the bot, comma-separated", label: "Others allowed" },
    { key: "api_root", kind: "string", help: "a self-hosted Bot API server (default https://api.telegram.org)", label: "Bot API server", advanced: true },
  ],
  offUntilNamed: true,
  pairing: telegramPairing,
  ask,
};

async function ask(kit: WizardKit): Promise<Record<string, unknown>> {
  const { prompts: ask, config } = kit;
  const section = config.fermix_channels.telegram;
  const values: Record<string, unknown> = {};
  let token: string | undefined;
  let bot: { username: string } | undefined;
  for (;;) {
    const typed = await kit.credential("bot_token", "Bot token (from @BotFather)");
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
    const sender = await pair(kit, token!, bot.username);
    if (sender && (await ask.confirm(`Make ${sender.name}${sender.username ? ` (@${sender.username})` : ""}, id ${sender.id}, the owner?`))) {
      values.owner_user_id = sender.id;
      return values;
    }
  }
  const typed = await kit.owner("For Telegram it is a number; @userinfobot tells you yours.");
  if (typed) values.owner_user_id = typed;
  return values;
}

/** Wait for the owner's message, with a spinner saying where to send it. */
async function pair(kit: WizardKit, token: string, username: string): Promise<PairedSender | undefined> {
  const seconds = Math.round(kit.pairTimeoutMs / 1000);
  const spin = kit.prompts.spinner();
  spin.start(`Waiting for a message to @${username} (send it from your Telegram account; ${seconds} s)`);
  try {
    const result = await kit.pairOwner(token);
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
