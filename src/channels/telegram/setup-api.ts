/**
 * Telegram for setup, with plain fetch (setup starts no adapter): `getMe`
 * checks a token, and pairing waits for the next private message to the bot
 * and takes its sender as the owner — the id `/whoami` would have shown.
 * Used only when no daemon polls the same token: two pollers on one token
 * get 409 Conflict, so then the daemon is asked instead (see the control
 * socket's `await_sender`).
 */

import { describeError } from "../../kernel/errors.ts";
import { type PairedSender, SetupCheckError } from "../setup.ts";

export type { PairedSender } from "../setup.ts";

export type TelegramFailure = "unauthorized" | "unreachable" | "conflict" | "api";

export class TelegramSetupError extends SetupCheckError {
  override name = "TelegramSetupError";
  constructor(
    readonly reason: TelegramFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface TelegramBot {
  id: number;
  username: string;
  firstName: string;
}

export interface TelegramOptions {
  apiRoot: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

interface BotApiReply<T> {
  ok: boolean;
  result?: T;
  error_code?: number;
  description?: string;
}

async function call<T>(token: string, method: string, params: Record<string, unknown>, options: TelegramOptions, timeoutMs: number): Promise<T> {
  const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${options.apiRoot}/bot${token}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
      signal: AbortSignal.any(signals),
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const why = error instanceof Error && error.name === "TimeoutError" ? "no answer in time" : describeError(error);
    // The URL carries the token: name the host only.
    throw new TelegramSetupError("unreachable", `cannot reach the Telegram Bot API at ${options.apiRoot}: ${why}`);
  }
  let body: BotApiReply<T>;
  try {
    body = (await response.json()) as BotApiReply<T>;
  } catch {
    throw new TelegramSetupError("api", `${options.apiRoot} did not answer like the Bot API (HTTP ${response.status})`);
  }
  if (body.ok) return body.result as T;
  const code = body.error_code ?? response.status;
  if (code === 401 || code === 404) throw new TelegramSetupError("unauthorized", "Telegram refused the bot token (check it with @BotFather)");
  if (code === 409) {
    throw new TelegramSetupError(
      "conflict",
      `another program is reading this bot's updates (${body.description ?? "409 Conflict"}): stop it, or enter the id by hand`,
    );
  }
  throw new TelegramSetupError("api", `Telegram answered ${code}: ${body.description ?? "error"}`);
}

/** Check a token: the bot it belongs to, or a TelegramSetupError naming why not. */
export async function telegramGetMe(token: string, options: TelegramOptions): Promise<TelegramBot> {
  const me = await call<{ id: number; username?: string; first_name?: string }>(token, "getMe", {}, options, 10_000);
  return { id: me.id, username: me.username ?? "", firstName: me.first_name ?? "" };
}

interface TgUpdate {
  update_id: number;
  message?: { date?: number; chat?: { type?: string }; from?: { id: number; is_bot?: boolean; first_name?: string; last_name?: string; username?: string } };
}

export interface PairOptions extends TelegramOptions {
  /** Give up after this long (default 120 s); resolves undefined then. */
  timeoutMs?: number;
  /** Seconds each long poll is held (default 20; shorter near the deadline). */
  pollSeconds?: number;
  now?: () => number;
}

/**
 * Wait for the next private message to the bot and return its sender.
 * Updates already waiting when pairing starts are skipped (they were not
 * sent for pairing); the pairing message itself is confirmed, so the daemon
 * does not answer it later.
 */
export async function pairTelegramOwner(token: string, options: PairOptions): Promise<PairedSender | undefined> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.timeoutMs ?? 120_000);
  const startedSeconds = Math.floor(now() / 1000) - 1;
  let offset: number | undefined;
  while (now() < deadline) {
    // Rounded up: with under a second left, a zero-second poll would return at once and be asked again and again.
    const left = Math.max(1, Math.ceil((deadline - now()) / 1000));
    const timeout = Math.min(options.pollSeconds ?? 20, left);
    const updates = await call<TgUpdate[]>(
      token,
      "getUpdates",
      { ...(offset !== undefined ? { offset } : {}), timeout, allowed_updates: ["message"] },
      options,
      (timeout + 10) * 1000,
    );
    for (const update of updates) {
      offset = update.update_id + 1;
      const message = update.message;
      const from = message?.from;
      if (!from || from.is_bot || message.chat?.type !== "private" || (message.date ?? 0) < startedSeconds) continue;
      await call(token, "getUpdates", { offset, timeout: 0 }, options, 10_000).catch(() => {});
      return {
        id: String(from.id),
        name: [from.first_name, from.last_name].filter(Boolean).join(" ") || String(from.id),
        ...(from.username ? { username: from.username } : {}),
      };
    }
  }
  return undefined;
}
