/**
 * What setup needs of a channel, declared in the channel's folder
 * (src/channels/<name>/setup.ts) and read through its profile: the keys
 * setup manages (flags, web form), the wizard's questions, and, where the
 * platform allows it, owner pairing by a message to the bot. Setup's shared
 * steps (src/setup/), the terminal wizard (src/cli/) and the web page
 * (src/http/setup/) read these and never name a channel.
 *
 * The wizard's questions are asked through a WizardKit the terminal hands
 * in: the channel says what to ask, the kit knows how (prompts, the config
 * loader's checks, the control socket).
 */
import type { Config } from "../config/schema.ts";
import type { OpenClawChannel } from "./openclaw.ts";

export type FieldKind = "string" | "integer" | "boolean" | "list";

/** One key of the channel's table that setup manages. */
export interface ChannelField {
  /** The key in [fermix_channels.<channel>]. */
  key: string;
  kind: FieldKind;
  /** One line for `--help` and the web form. */
  help: string;
  /** The flag's tail after `--<channel>-`; default the key with dashes (`owner` for owner_user_id). */
  flag?: string;
  /** The web form's label; the enabled switch has none (the page says "Serve <title>"). */
  label?: string;
  /** Shown under "More settings" on the web page (where the platform's API lives, a helper program). */
  advanced?: boolean;
}

/** Someone who wrote to the bot: the candidate owner. */
export interface PairedSender {
  id: string;
  /** First and last name, as the platform shows them. */
  name: string;
  username?: string;
}

/** A platform refused or could not be reached during setup; the message is a line for the form or the terminal, never a credential. */
export class SetupCheckError extends Error {
  override name = "SetupCheckError";
}

/** Where a setup call to the platform goes, and what may end it. */
export interface PairingCall {
  apiRoot: string;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/**
 * Owner pairing by a message to the bot: the bot a token belongs to, and
 * the sender of the next private message to it. Setup asks a running daemon
 * first when it polls the same token (src/setup/pairing.ts), since two
 * pollers on one token fail.
 */
export interface OwnerPairing {
  /** The key of the bot's token, and of the API root it is checked against. */
  tokenKey: string;
  apiRootKey: string;
  /** The bot a token belongs to; throws SetupCheckError naming why not. */
  bot(token: string, call: PairingCall): Promise<{ id: number | string; username: string }>;
  /** The sender of the next private message to the bot, or undefined at the timeout; throws SetupCheckError when the platform refuses. */
  awaitOwner(token: string, call: PairingCall & { timeoutMs: number }): Promise<PairedSender | undefined>;
  /** How a person finds their own id to type it by hand ("@userinfobot tells you yours"). */
  byHand: string;
  /** The line for a platform that did not answer in time. */
  unreachable(apiRoot: string): string;
}

/** What came of waiting for the owner's message. */
export type PairingResult = { kind: "sender"; sender: PairedSender; via: "daemon" | "platform" } | { kind: "timeout" };

/** A spinner line in the terminal. */
export interface WizardSpinner {
  start(message?: string): void;
  stop(message?: string): void;
  error(message?: string): void;
}

/** The terminal prompts a channel's questions may use beyond the kit's own. */
export interface WizardPrompts {
  select<T>(message: string, options: Array<{ value: T; label: string; hint?: string }>, initial?: T): Promise<T>;
  confirm(message: string, initial?: boolean): Promise<boolean>;
  spinner(): WizardSpinner;
  note(message: string, title?: string): void;
  log: { info(message: string): void; warn(message: string): void };
}

/** How the wizard asks one channel's questions: the terminal's prompts with the config loader's checks. */
export interface WizardKit {
  /** The config as it stands (flag presets applied). */
  config: Config;
  prompts: WizardPrompts;
  /** A secret prompt for `key` that keeps the stored value when left empty; undefined: keep it. */
  credential(key: string, label: string): Promise<string | undefined>;
  /** A prompt for `key` starting from its value, checked by the config loader; `optional`: empty passes. */
  text(key: string, label: string, optional?: boolean): Promise<string | undefined>;
  /** The owner's id: what an owner is, how to find the id (`how`), and a warning when nobody would be allowed. */
  owner(how: string): Promise<string | undefined>;
  /** Where the platform must send its webhooks: the local address, and the public one to register. */
  webhookHint(): string;
  /** Wait for the owner's message to the bot whose token is `token` (a channel with `pairing`): through the daemon when it polls that token, else here. */
  pairOwner(token: string): Promise<PairingResult>;
  /** How long pairing waits, in ms. */
  pairTimeoutMs: number;
}

/** Setup's view of a channel. */
export interface ChannelSetup {
  /** Its name in the wizard's list and in `--help` ("Telegram", "ACP (editors)"). */
  label: string;
  /** One line beside it in the wizard's list of channels. */
  hint?: string;
  /** The keys setup manages, the enabled switch first, in the order `--help` and the web page show them. */
  fields: readonly ChannelField[];
  /** Its questions in the wizard's channels step, answered as key → value; absent: set by flags only (and not on the web page). */
  ask?(kit: WizardKit): Promise<Record<string, unknown>>;
  /**
   * On by default, yet left off on a fresh home unless a flag names it: it
   * cannot work before its credentials are given.
   */
  offUntilNamed?: boolean;
  /** Its owner can be paired by a message to the bot. */
  pairing?: OwnerPairing;
  /** How OpenClaw's section for the same platform becomes this channel's keys (`fermix import openclaw`). */
  openclaw?: OpenClawChannel;
}

/** One question of a channel's wizard step, for channels whose step is a plain sequence. */
export type Question =
  /** A credential for `key` (empty keeps the stored one). */
  | { secret: string; label: string }
  /** A value for `key`, checked by the config loader; `optional`: empty passes. */
  | { text: string; label: string; optional?: boolean }
  /** The owner's id, with how to find it. */
  | { owner: string }
  /** A note shown, not asked (where to register a webhook). */
  | { note: (kit: WizardKit) => string; title: string };

/** A wizard step asking `questions` in turn; a key left as stored is not among the answers. */
export function askInTurn(questions: readonly Question[]): (kit: WizardKit) => Promise<Record<string, unknown>> {
  return async (kit) => {
    const values: Record<string, unknown> = {};
    const put = (key: string, value: string | undefined) => {
      if (value !== undefined) values[key] = value;
    };
    for (const question of questions) {
      if ("secret" in question) put(question.secret, await kit.credential(question.secret, question.label));
      else if ("text" in question) put(question.text, await kit.text(question.text, question.label, question.optional));
      else if ("owner" in question) put("owner_user_id", await kit.owner(question.owner));
      else kit.prompts.note(question.note(kit), question.title);
    }
    return values;
  };
}
