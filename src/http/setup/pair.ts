/**
 * Telegram pairing on the setup page, between the form and setup's shared
 * pairing (src/setup/pairing.ts): which token and Bot API root the form
 * means (typed now, typed earlier in this session, or stored), the bot it
 * belongs to (getMe), and what the wait for a message found, as the lines
 * the form shows. The token never leaves the server; the sender's name and
 * id go into the form, where the owner can still change them.
 */
import type { Config } from "../../config/schema.ts";
import { type DaemonPairing, pairTelegram } from "../../setup/pairing.ts";
import { telegramGetMe, TelegramSetupError } from "../../setup/telegram.ts";
import type { FormState } from "./form.ts";
import { TELEGRAM_OWNER } from "./render.ts";

export const TELEGRAM_TOKEN = "fermix_channels.telegram.bot_token";
const TELEGRAM_API_ROOT = "fermix_channels.telegram.api_root";
const TELEGRAM_ENABLED = "fermix_channels.telegram.enabled";

/** How long getMe may take before pairing gives up on the token (ms). */
const GET_ME_TIMEOUT_MS = 8000;

export interface PairTarget {
  token: string;
  apiRoot: string;
}

/** The token and API root the submitted form means; undefined when no token is known. */
export function pairTarget(form: FormState, typed: Readonly<Record<string, string>>, config: Config): PairTarget | undefined {
  const token = typed[TELEGRAM_TOKEN] ?? config.fermix_channels.telegram.bot_token;
  if (!token) return undefined;
  const apiRoot = (form.values[TELEGRAM_API_ROOT] ?? "").trim() || config.fermix_channels.telegram.api_root;
  return { token, apiRoot: apiRoot.replace(/\/+$/, "") };
}

/** The bot's username, or the problem with the token as a line for its field. */
export async function botFor(target: PairTarget, fetchImpl?: typeof fetch, timeoutMs = GET_ME_TIMEOUT_MS): Promise<{ username: string } | { problem: string }> {
  try {
    const bot = await telegramGetMe(target.token, { apiRoot: target.apiRoot, signal: AbortSignal.timeout(timeoutMs), ...(fetchImpl ? { fetch: fetchImpl } : {}) });
    return { username: bot.username || String(bot.id) };
  } catch (error) {
    if (error instanceof TelegramSetupError) return { problem: error.message };
    return { problem: `cannot reach the Telegram Bot API at ${target.apiRoot}: no answer in time` };
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
  const { throughDaemon } = pair;
  const seconds = Math.round(pair.timeoutMs / 1000);
  const byHand = "Type the owner id by hand (@userinfobot tells you yours), or pair again.";
  try {
    const result = await pairTelegram(pair.target.token, {
      apiRoot: pair.target.apiRoot,
      timeoutMs: pair.timeoutMs,
      signal: pair.signal,
      ...(pair.fetch ? { fetch: pair.fetch } : {}),
      ...(throughDaemon ? { throughDaemon: (timeoutMs: number, signal?: AbortSignal) => throughDaemon(pair.target.token, timeoutMs, signal) } : {}),
    });
    if (result.kind === "timeout") {
      form.notes[TELEGRAM_OWNER] = { tone: "warn", text: `No message reached @${pair.bot} in ${seconds} s. ${byHand}` };
      return "timeout";
    }
    const { sender } = result;
    form.values[TELEGRAM_OWNER] = sender.id;
    form.checked[TELEGRAM_ENABLED] = true;
    const who = `${sender.name}${sender.username ? ` (@${sender.username})` : ""}`;
    form.notes[TELEGRAM_OWNER] = { tone: "ok", text: `Paired with ${who}, id ${sender.id}: save to make them the owner of @${pair.bot}.` };
    return "paired";
  } catch (error) {
    const why = error instanceof TelegramSetupError ? error.message : error instanceof Error ? error.message : String(error);
    form.notes[TELEGRAM_OWNER] = { tone: "warn", text: `Pairing stopped: ${why}. ${byHand}` };
    return "failed";
  }
}
