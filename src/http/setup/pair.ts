/**
 * Owner pairing on the setup page, between the form and setup's shared
 * pairing (src/setup/pairing.ts), for a channel whose profile offers it
 * (its setup's `pairing`: Telegram): which token and API root the form
 * means (typed now, typed earlier in this session, or stored), the bot it
 * belongs to, and what the wait for a message found, as the lines the form
 * shows. The token never leaves the server; the sender's name and id go
 * into the form, where the owner can still change them.
 */
import { profileOf } from "../../channels/registry.ts";
import { type OwnerPairing, SetupCheckError } from "../../channels/setup.ts";
import type { Config } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import { SETUP_CHANNELS, type SetupChannel } from "../../setup/fields.ts";
import { type DaemonPairing, pairOwner } from "../../setup/pairing.ts";
import type { FormState } from "./form.ts";
import { ownerField } from "./render.ts";

/** How long the bot check may take before pairing gives up on the token (ms). */
const BOT_CHECK_TIMEOUT_MS = 8000;

/** The channel named `name` (as a form sent it) with its pairing, when the page can pair its owner. */
export function pairingOf(name: string): { name: SetupChannel; pairing: OwnerPairing } | undefined {
  const channel = SETUP_CHANNELS.find((c) => c === name);
  const pairing = channel === undefined ? undefined : profileOf(channel).setup?.pairing;
  return channel !== undefined && pairing ? { name: channel, pairing } : undefined;
}

/** The form name of a pairing channel's token. */
export const tokenField = (name: SetupChannel, pairing: OwnerPairing) => `fermix_channels.${name}.${pairing.tokenKey}`;

export interface PairTarget {
  name: SetupChannel;
  pairing: OwnerPairing;
  token: string;
  apiRoot: string;
}

/** The token and API root the submitted form means for `name`; undefined when no token is known. */
export function pairTarget(
  name: SetupChannel,
  pairing: OwnerPairing,
  form: FormState,
  typed: Readonly<Record<string, string>>,
  config: Config,
): PairTarget | undefined {
  const section = config.fermix_channels[name] as Record<string, unknown>;
  const stored = section[pairing.tokenKey];
  const token = typed[tokenField(name, pairing)] ?? (typeof stored === "string" ? stored : undefined);
  if (!token) return undefined;
  const apiRoot = (form.values[`fermix_channels.${name}.${pairing.apiRootKey}`] ?? "").trim() || String(section[pairing.apiRootKey]);
  return { name, pairing, token, apiRoot: apiRoot.replace(/\/+$/, "") };
}

/** The bot's username, or the problem with the token as a line for its field. */
export async function botFor(
  target: PairTarget,
  fetchImpl?: typeof fetch,
  timeoutMs = BOT_CHECK_TIMEOUT_MS,
): Promise<{ username: string } | { problem: string }> {
  try {
    const bot = await target.pairing.bot(target.token, {
      apiRoot: target.apiRoot,
      signal: AbortSignal.timeout(timeoutMs),
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    return { username: bot.username || String(bot.id) };
  } catch (error) {
    if (error instanceof SetupCheckError) return { problem: error.message };
    return { problem: target.pairing.unreachable(target.apiRoot) };
  }
}

export interface PairOnPage {
  target: PairTarget;
  bot: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** The running daemon, when it may poll this token (src/daemon/web.ts). */
  throughDaemon?: (token: string, timeoutMs: number, signal?: AbortSignal) => Promise<DaemonPairing>;
  fetch?: typeof fetch;
}

/** Wait for the message and put what came of it into `form`: the owner filled in with a line naming them, or why not. */
export async function pairIntoForm(form: FormState, pair: PairOnPage): Promise<"paired" | "timeout" | "failed"> {
  const { throughDaemon, target } = pair;
  const owner = ownerField(target.name);
  const seconds = Math.round(pair.timeoutMs / 1000);
  const byHand = `Type the owner id by hand (${target.pairing.byHand}), or pair again.`;
  try {
    const result = await pairOwner(target.pairing, target.token, {
      apiRoot: target.apiRoot,
      timeoutMs: pair.timeoutMs,
      signal: pair.signal,
      ...(pair.fetch ? { fetch: pair.fetch } : {}),
      ...(throughDaemon ? { throughDaemon: (timeoutMs: number, signal?: AbortSignal) => throughDaemon(target.token, timeoutMs, signal) } : {}),
    });
    if (result.kind === "timeout") {
      form.notes[owner] = { tone: "warn", text: `No message reached @${pair.bot} in ${seconds} s. ${byHand}` };
      return "timeout";
    }
    const { sender } = result;
    form.values[owner] = sender.id;
    form.checked[`fermix_channels.${target.name}.enabled`] = true;
    const who = `${sender.name}${sender.username ? ` (@${sender.username})` : ""}`;
    form.notes[owner] = { tone: "ok", text: `Paired with ${who}, id ${sender.id}: save to make them the owner of @${pair.bot}.` };
    return "paired";
  } catch (error) {
    const why = describeError(error);
    form.notes[owner] = { tone: "warn", text: `Pairing stopped: ${why}. ${byHand}` };
    return "failed";
  }
}
