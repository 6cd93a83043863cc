/**
 * Confirmation codes: the one single-use, time-limited, origin-bound,
 * owner-only path that every risky change rides — a `/sandbox` proposal
 * answered with `/confirm TOKEN`, and the agent's access request answered by
 * the same line or by an Approve button. A code is bound to the owner it was
 * made for and to where it was made:
 *
 * - a proposal: only its proposer, in the same conversation;
 * - an access request: only the owner whose turn asked, in that
 *   conversation, in a direct chat with them on the same channel, or from
 *   the command line (the machine's own user).
 *
 * Decided and expired codes are remembered for a while, so a second use or a
 * late one is refused in plain words rather than as "unknown". Nothing here
 * survives a restart: a proposal dies with it, and an access request with
 * the turn that waited for it. The clock is injected.
 */
import type { GatewayChannel, PressResult } from "../message/index.ts";
import type { Role } from "./trust.ts";

export type CodeKind = "proposal" | "access";
export type CodeState = "pending" | "confirmed" | "denied" | "expired" | "withdrawn";

/** What answering a code came to, and which kind of code it was (absent for an unknown code). */
export type Answer = PressResult & { kind?: CodeKind };

/** Who is answering a code, and from where. */
export interface Answerer {
  channel: GatewayChannel;
  senderId: string;
  /** Their role on that channel; null for a sender the channel does not know. */
  role: Role | null;
  /** conversationKey of where they answer from. */
  conversation: string;
  /** The chat is one-to-one with them. */
  direct: boolean;
}

/** One code, as `/sandbox` lists it. */
export interface CodeView {
  token: string;
  kind: CodeKind;
  summary: string;
  channel: GatewayChannel;
  conversation: string;
  expiresAt: number;
}

interface Entry extends CodeView {
  senderId: string;
  state: CodeState;
  decidedAt?: number;
  /** Apply the change; returns the reply text. Throws CodeRefused to refuse after all (the change is no longer possible). */
  onConfirm: () => string;
  onDeny?: () => void;
}

export interface ConfirmationOptions {
  now?: () => number;
  /** Default life of a code (confirm_ttl_seconds), ms. */
  ttlMs: number;
  /** How long a decided or expired code is still recognised, ms (default one hour). */
  rememberMs?: number;
  random?: (bytes: number) => Uint8Array;
}

/** Letters and digits that cannot be mistaken for one another (no I, L, O, 0, 1). */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const TOKEN_LENGTH = 8;
const BUTTON_PREFIX = "fx:";

/** The token as typed: case and separators ignored. */
export function normalizeToken(text: string): string {
  return text.toUpperCase().replace(/[\s-]/g, "");
}

/** Button data for answering a code: approve or deny. */
export function buttonData(decision: "confirm" | "deny", token: string): string {
  return `${BUTTON_PREFIX}${decision === "confirm" ? "ok" : "no"}:${token}`;
}

/** What a button's data asks for, or null when it is not one of ours. */
export function parseButtonData(data: string): { decision: "confirm" | "deny"; token: string } | null {
  const match = /^fx:(ok|no):([A-Z0-9]{4,32})$/.exec(data);
  if (!match) return null;
  return { decision: match[1] === "ok" ? "confirm" : "deny", token: match[2]! };
}

/** A duration in words: whole minutes from a minute on, else seconds. */
export function durationWords(ms: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  return ms >= 60_000 && ms % 60_000 === 0 ? plural(ms / 60_000, "minute") : plural(Math.max(1, Math.round(ms / 1000)), "second");
}

export class Confirmations {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly random: (bytes: number) => Uint8Array;

  constructor(private readonly options: ConfirmationOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? ((n) => crypto.getRandomValues(new Uint8Array(n)));
  }

  /** How long a code lives by default, in words ("5 minutes"). */
  get ttlWords(): string {
    return durationWords(this.options.ttlMs);
  }

  /** Open a code for a risky `/sandbox` change; `apply` runs once, when its proposer confirms it in time and place. */
  propose(origin: { channel: GatewayChannel; senderId: string; conversation: string }, summary: string, apply: () => string): string {
    return this.open({ ...origin, kind: "proposal", summary, ttlMs: this.options.ttlMs, onConfirm: apply });
  }

  /**
   * Open a code for the agent's access request. `decided` settles with the
   * answer: confirmed (after `apply` ran), denied, or expired at `ttlMs`.
   * `withdraw` ends it unanswered (the turn that asked was stopped).
   */
  openAccess(
    origin: { channel: GatewayChannel; senderId: string; conversation: string },
    summary: string,
    ttlMs: number,
    apply: () => string,
  ): { token: string; decided: Promise<"confirmed" | "denied" | "expired">; withdraw(): void } {
    let resolve!: (state: "confirmed" | "denied" | "expired") => void;
    const decided = new Promise<"confirmed" | "denied" | "expired">((r) => (resolve = r));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (state: "confirmed" | "denied" | "expired") => {
      clearTimeout(timer);
      resolve(state);
    };
    const token = this.open({
      ...origin,
      kind: "access",
      summary,
      ttlMs,
      onConfirm: () => {
        const text = apply();
        settle("confirmed");
        return text;
      },
      onDeny: () => settle("denied"),
    });
    timer = setTimeout(() => {
      const entry = this.entries.get(token);
      if (entry?.state !== "pending") return;
      entry.state = "expired";
      entry.decidedAt = this.now();
      settle("expired");
    }, ttlMs);
    return {
      token,
      decided,
      withdraw: () => {
        clearTimeout(timer);
        const entry = this.entries.get(token);
        if (entry?.state === "pending") {
          entry.state = "withdrawn";
          entry.decidedAt = this.now();
        }
      },
    };
  }

  /** Answer a code with yes. The reply says what happened, in plain words; `done` once the code has served; `kind` when the code is known. */
  confirm(token: string, who: Answerer): Answer {
    return this.answer(token, who, "confirm");
  }

  /** Answer a code with no. */
  deny(token: string, who: Answerer): Answer {
    return this.answer(token, who, "deny");
  }

  /** The pending codes this person may answer from where they are, oldest first. */
  pendingFor(who: Answerer): CodeView[] {
    this.prune();
    return [...this.entries.values()]
      .filter((e) => e.state === "pending" && this.now() <= e.expiresAt && this.placeError(e, who) === null)
      .map(({ token, kind, summary, channel, conversation, expiresAt }) => ({ token, kind, summary, channel, conversation, expiresAt }));
  }

  private open(spec: Omit<Entry, "token" | "state" | "expiresAt"> & { ttlMs: number }): string {
    this.prune();
    let token: string;
    do token = this.token();
    while (this.entries.has(token));
    const { ttlMs, ...rest } = spec;
    this.entries.set(token, { ...rest, token, state: "pending", expiresAt: this.now() + ttlMs });
    return token;
  }

  private answer(raw: string, who: Answerer, decision: "confirm" | "deny"): Answer {
    this.prune();
    const token = normalizeToken(raw);
    const entry = this.entries.get(token);
    if (!entry) return { ok: false, done: true, text: `I don't know the code ${token || "(none given)"}: check it, or it is older than an hour.` };
    return { ...this.decide(entry, who, decision), kind: entry.kind };
  }

  private decide(entry: Entry, who: Answerer, decision: "confirm" | "deny"): PressResult {
    // Someone else, or the owner in the wrong place, learns nothing more about the code and cannot use it up.
    const place = this.placeError(entry, who);
    if (place) return { ok: false, done: false, text: place };
    switch (entry.state) {
      case "confirmed":
      case "denied":
        return { ok: false, done: true, text: `That code was already used (${entry.state === "confirmed" ? "approved" : "denied"}); a code works once.` };
      case "withdrawn":
        return { ok: false, done: true, text: "That request is over: the turn that asked was stopped." };
      case "expired":
        return { ok: false, done: true, text: this.expiredText(entry) };
    }
    if (this.now() > entry.expiresAt) {
      entry.state = "expired";
      entry.decidedAt = this.now();
      return { ok: false, done: true, text: this.expiredText(entry) };
    }
    entry.decidedAt = this.now();
    if (decision === "deny") {
      entry.state = "denied";
      entry.onDeny?.();
      return { ok: true, done: true, text: entry.kind === "access" ? `Denied: ${entry.summary}.` : `Dropped the proposal: ${entry.summary}.` };
    }
    entry.state = "confirmed";
    try {
      return { ok: true, done: true, text: entry.onConfirm() };
    } catch (error) {
      if (entry.kind === "access") entry.onDeny?.();
      return { ok: false, done: true, text: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Why this person cannot answer this code from where they are; null when they can. */
  private placeError(entry: Entry, who: Answerer): string | null {
    if (who.role !== "operator") return "That code is not yours to answer: only the owner it was made for can.";
    if (who.channel === "cli" && entry.kind === "access") return null;
    if (who.channel !== entry.channel || who.senderId !== entry.senderId) return "That code is not yours to answer: only the owner it was made for can.";
    if (who.conversation === entry.conversation) return null;
    if (entry.kind === "access" && who.direct) return null;
    return entry.kind === "proposal"
      ? "That code belongs to another conversation: confirm it where the change was proposed."
      : "Answer that request where it was asked, in a direct message to me, or on the command line.";
  }

  private expiredText(entry: Entry): string {
    return entry.kind === "proposal"
      ? `That code has expired (codes last ${this.ttlWords}); send the /sandbox command again for a new one.`
      : "That request has expired: the assistant stopped waiting for an answer.";
  }

  private token(): string {
    const bytes = this.random(TOKEN_LENGTH);
    let out = "";
    for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
    return out;
  }

  /** Forget decided and expired codes after `rememberMs`. */
  private prune(): void {
    const horizon = this.now() - (this.options.rememberMs ?? 60 * 60_000);
    for (const [token, entry] of this.entries) {
      const ended = entry.decidedAt ?? (entry.expiresAt < this.now() ? entry.expiresAt : undefined);
      if (ended !== undefined && ended < horizon) this.entries.delete(token);
    }
  }
}
