/**
 * The wizard's channels step: which chat channels to serve, then each chosen
 * channel's own questions (declared in its folder, src/channels/<name>/setup.ts),
 * asked through a kit of prompts checked by the config loader. A channel
 * that pairs its owner by a message to the bot does so through the running
 * daemon when that daemon polls the same token, else by polling here.
 */
import { profileOf } from "../channels/registry.ts";
import type { ChannelSetup, WizardKit } from "../channels/setup.ts";
import type { Env } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { channelChanges } from "../setup/changes.ts";
import { SETUP_CHANNELS, type SetupChannel } from "../setup/fields.ts";
import { pairOwner } from "../setup/pairing.ts";
import type { SetupChange } from "../setup/plan.ts";
import { describeChannel, webhookHint } from "../setup/summary.ts";
import { daemonRunning, pairThroughDaemon } from "./setup-daemon.ts";
import { loaderCheck, type Prompts } from "./setup-prompts.ts";

export interface ChannelsStepInput {
  ask: Prompts;
  /** The config as it stands (with flag presets applied). */
  config: Config;
  env: Env;
  controlSocket: string;
  /** How long owner pairing waits for a message (ms). */
  pairTimeoutMs: number;
}

const setupOf = (name: SetupChannel): ChannelSetup => profileOf(name).setup!;

export async function channelsStep(input: ChannelsStepInput): Promise<SetupChange[]> {
  const { ask, config } = input;
  const enabledNow = SETUP_CHANNELS.filter((name) => config.fermix_channels[name].enabled);
  const chosen = await ask.multiselect(
    "Which channels should Fermix serve? (space toggles, enter confirms)",
    SETUP_CHANNELS.map((name) => ({ value: name, label: setupOf(name).label, hint: `now: ${describeChannel(config, name)}` })),
    enabledNow,
  );
  const changes: SetupChange[] = [];
  for (const name of SETUP_CHANNELS) {
    if (!chosen.includes(name)) {
      if (config.fermix_channels[name].enabled) changes.push(...channelChanges(name, false));
      continue;
    }
    ask.log.step(`${setupOf(name).label} — now: ${describeChannel(config, name)}`);
    const values = await setupOf(name).ask!(kitFor(input, name));
    changes.push(...channelChanges(name, true, values));
  }
  return changes;
}

/** How `name`'s questions are asked in this terminal. */
function kitFor(input: ChannelsStepInput, name: SetupChannel): WizardKit {
  const { ask, config } = input;
  const section = config.fermix_channels[name] as Record<string, unknown>;
  const path = (key: string) => `fermix_channels.${name}.${key}`;
  const text = async (key: string, label: string, optional = false): Promise<string | undefined> => {
    const now = section[key];
    const value = await ask.text(label, {
      ...(typeof now === "string" ? { initial: now } : {}),
      validate: loaderCheck(path(key), (raw) => raw.trim(), optional),
    });
    return value === "" ? undefined : value;
  };
  return {
    config,
    prompts: ask,
    pairTimeoutMs: input.pairTimeoutMs,
    async credential(key, label) {
      const stored = section[key];
      const value = await ask.secret(stored ? `${label} (leave empty to keep the stored one)` : label, {
        validate: loaderCheck(path(key), (raw) => raw.trim(), Boolean(stored)),
      });
      return value === "" ? undefined : value;
    },
    text,
    async owner(how) {
      ask.log.info(`The owner is the one account that may run operator commands. ${how} Send /whoami to the bot to see any account's id.`);
      const value = await text("owner_user_id", "Owner id (empty: set it later with fermix setup --reconfigure)", true);
      if (!value && !section.owner_user_id) {
        ask.log.warn(`Without an owner or an allowlist, ${setupOf(name).label} is refused at start: nobody may talk to it.`);
      }
      return value;
    },
    webhookHint: () => webhookHint(config, input.env, profileOf(name).webhook?.path ?? ""),
    async pairOwner(token) {
      const pairing = setupOf(name).pairing;
      if (!pairing) throw new Error(`${setupOf(name).label} has no owner pairing`);
      // Only a daemon polling this very token can see the message; a new token is polled here.
      const viaDaemon = token === section[pairing.tokenKey] && (await daemonRunning(input.controlSocket));
      return pairOwner(pairing, token, {
        apiRoot: String(section[pairing.apiRootKey]),
        timeoutMs: input.pairTimeoutMs,
        ...(viaDaemon ? { throughDaemon: (timeoutMs: number, signal?: AbortSignal) => pairThroughDaemon(input.controlSocket, name, timeoutMs, signal) } : {}),
      });
    },
  };
}
