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
 * The codes are rows in SQLite (src/store/confirmations.ts), each with the
 * change it grants as data, so they outlive the process that made them: a
 * proposal survives a restart and can be confirmed afterwards within its
 * life, and a code made by one process (a local `fermix ask`) can be
 * answered from another. An access request lives only as long as the turn
 * that waits for it: once that process is gone, its code is refused ("ended
 * when the assistant restarted"), never granted. A turn waiting here learns
 * of an answer given in this process at once, of one given elsewhere by
 * polling its row. Decided and expired codes are remembered for an hour, so
 * a second use or a late one is refused in plain words rather than as
 * "unknown"; the retention sweep deletes them after. The clock is injected.
 */

import { describeError } from "../kernel/errors.ts";
import { otherProcessRuns } from "../kernel/pid.ts";
import type { GatewayChannel, PressResult } from "../message/index.ts";
import { CODES_KEPT_MS, type CodeKind, type CodeRow, type CodeState, type ConfirmationStore } from "../store/confirmations.ts";
import type { Role } from "./trust.ts";

export type { CodeKind, CodeState };

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

/** A stored code as the rules see it; `grants` is the change confirming it applies. */
export interface CodeRecord<G> {
  token: string;
  kind: CodeKind;
  summary: string;
  channel: GatewayChannel;
  senderId: string;
  conversation: string;
  grants: G;
  expiresAt: number;
}

/** Where a code is made: by whom, on which channel, in which conversation. */
export interface CodeOrigin {
  channel: GatewayChannel;
  senderId: string;
  conversation: string;
}

/** How a waiting access request came out. */
export type AccessOutcome = "confirmed" | "denied" | "expired";

export interface ConfirmationOptions<G> {
  store: ConfirmationStore;
  /**
   * Make the change a confirmed code grants; returns the reply text. It runs
   * in the transaction that uses the code up, in whichever process the
   * answer arrives. Throw to refuse after all (the change is no longer
   * possible): the code is used up all the same.
   */
  apply: (code: CodeRecord<G>) => string;
  now?: () => number;
  /** Default life of a code (confirm_ttl_seconds), ms. */
  ttlMs: number;
  /** How long a decided or expired code is still recognised, ms (default one hour, as long as the sweep keeps it). */
  rememberMs?: number;
  random?: (bytes: number) => Uint8Array;
  /** This process, as recorded on the access requests its turns wait for (default `<pid>:<random>`). */
  holder?: string;
  /** Whether the process recorded as `holder` still runs (default: the pid answers a signal 0 and is not ours). */
  alive?: (holder: string) => boolean;
  /** How often a waiting turn looks for an answer given by another process, ms (default 1000). */
  pollMs?: number;
  /**
   * Whether a channel is a surface on this machine (its profile's `local`):
   * there the owner may answer an access request from anywhere, being the
   * machine's own user. Default: none is.
   */
  local?: (channel: GatewayChannel) => boolean;
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

export class Confirmations<G = unknown> {
  private readonly store: ConfirmationStore;
  private readonly now: () => number;
  private readonly random: (bytes: number) => Uint8Array;
  private readonly holder: string;
  private readonly alive: (holder: string) => boolean;
  /** The access requests this process's turns wait for: told at once of an answer given here. */
  private readonly waiters = new Map<string, (state: CodeState) => void>();

  constructor(private readonly options: ConfirmationOptions<G>) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? ((n) => crypto.getRandomValues(new Uint8Array(n)));
    this.holder = options.holder ?? `${process.pid}:${Buffer.from(this.random(6)).toString("hex")}`;
    this.alive = options.alive ?? processAlive;
  }

  /** How long a code lives by default, in words ("5 minutes"). */
  get ttlWords(): string {
    return durationWords(this.options.ttlMs);
  }

  /** Open a code for a risky `/sandbox` change; `change` is applied once, when its proposer confirms it in time and place. */
  propose(origin: CodeOrigin, summary: string, change: G): string {
    return this.open(origin, "proposal", summary, change, this.options.ttlMs, null);
  }

  /**
   * Open a code for the agent's access request. `decided` settles with the
   * answer: confirmed (after `grants` was applied), denied, or expired at
   * `ttlMs`. `withdraw` ends it unanswered: the turn that asked was stopped,
   * or the assistant is shutting down (then a later answer is told the
   * request ended with the restart).
   */
  openAccess(
    origin: CodeOrigin,
    summary: string,
    ttlMs: number,
    grants: G,
  ): { token: string; decided: Promise<AccessOutcome>; withdraw(why?: "stopped" | "shutdown"): void } {
    let resolve!: (outcome: AccessOutcome) => void;
    const decided = new Promise<AccessOutcome>((r) => (resolve = r));
    const token = this.open(origin, "access", summary, grants, ttlMs, this.holder);
    let poll: ReturnType<typeof setInterval> | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopWaiting = () => {
      clearTimeout(timer);
      clearInterval(poll);
      this.waiters.delete(token);
    };
    this.waiters.set(token, (state) => {
      stopWaiting();
      resolve(state === "confirmed" ? "confirmed" : state === "denied" || state === "failed" ? "denied" : "expired");
    });
    // An answer given by another process is only in the row. A read that fails (the database busy) waits for the next round.
    const look = () => {
      try {
        const state = this.store.get(token)?.state ?? "expired";
        if (state !== "pending") this.waiters.get(token)?.(state);
      } catch {}
    };
    poll = setInterval(look, this.options.pollMs ?? 1000);
    poll.unref?.();
    timer = setTimeout(() => {
      try {
        if (!this.store.settle(token, "expired", this.now())) return look();
      } catch {
        // The database is gone (shutting down): the wait is over all the same.
      }
      this.waiters.get(token)?.("expired");
    }, ttlMs);
    return {
      token,
      decided,
      withdraw: (why = "stopped") => {
        if (!this.waiters.has(token)) return;
        stopWaiting();
        try {
          this.store.settle(token, why === "shutdown" ? "ended" : "withdrawn", this.now());
        } catch {
          // The database is gone (shutting down): the row stays pending, and its holder with it, so it ends as a restart's would.
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
    return this.store
      .pending<G>(this.now())
      .filter((row) => this.placeError(row, who) === null && this.waitedFor(row))
      .map((row) => ({
        token: row.code,
        kind: row.kind,
        summary: row.summary,
        channel: row.channel as GatewayChannel,
        conversation: row.conversation,
        expiresAt: row.expiresAt,
      }));
  }

  private open(origin: CodeOrigin, kind: CodeKind, summary: string, grants: G, ttlMs: number, holder: string | null): string {
    const createdAt = this.now();
    for (;;) {
      const code = this.token();
      if (this.store.add({ code, kind, ...origin, summary, grants, holder, createdAt, expiresAt: createdAt + ttlMs })) return code;
    }
  }

  private answer(raw: string, who: Answerer, decision: "confirm" | "deny"): Answer {
    const token = normalizeToken(raw);
    const row = token === "" ? undefined : this.store.get<G>(token);
    if (!row || this.forgotten(row))
      return { ok: false, done: true, text: `I don't know the code ${token || "(none given)"}: check it, or it is older than an hour.` };
    return { ...this.decide(row, who, decision), kind: row.kind };
  }

  private decide(row: CodeRow<G>, who: Answerer, decision: "confirm" | "deny"): PressResult {
    // Someone else, or the owner in the wrong place, learns nothing more about the code and cannot use it up.
    const place = this.placeError(row, who);
    if (place) return { ok: false, done: false, text: place };
    switch (row.state) {
      case "confirmed":
      case "denied":
      case "failed":
        return {
          ok: false,
          done: true,
          text: `That code was already used (${row.state === "confirmed" ? "approved" : row.state === "denied" ? "denied" : "approved, but it could not be applied"}); a code works once.`,
        };
      case "withdrawn":
        return { ok: false, done: true, text: "That request is over: the turn that asked was stopped." };
      case "ended":
        return { ok: false, done: true, text: ENDED_TEXT };
      case "expired":
        return { ok: false, done: true, text: this.expiredText(row) };
    }
    const now = this.now();
    // Whoever answers first wins; a loser is answered from the state the winner left.
    const lost = () => {
      const current = this.store.get<G>(row.code);
      return current && current.state !== "pending" ? this.decide(current, who, decision) : { ok: false, done: true, text: this.expiredText(row) };
    };
    if (!this.waitedFor(row)) {
      this.store.settle(row.code, "ended", now);
      return { ok: false, done: true, text: ENDED_TEXT };
    }
    if (now > row.expiresAt) {
      if (!this.store.settle(row.code, "expired", now)) return lost();
      this.waiters.get(row.code)?.("expired");
      return { ok: false, done: true, text: this.expiredText(row) };
    }
    if (decision === "deny") {
      if (!this.store.settle(row.code, "denied", now)) return lost();
      this.waiters.get(row.code)?.("denied");
      return { ok: true, done: true, text: row.kind === "access" ? `Denied: ${row.summary}.` : `Dropped the proposal: ${row.summary}.` };
    }
    const outcome = this.store.transaction((): { state: CodeState; result: PressResult } | null => {
      if (!this.store.settle(row.code, "confirmed", now)) return null;
      try {
        return { state: "confirmed", result: { ok: true, done: true, text: this.options.apply(recordOf(row)) } };
      } catch (error) {
        this.store.settle(row.code, "failed", now, "confirmed");
        return { state: "failed", result: { ok: false, done: true, text: describeError(error) } };
      }
    });
    if (!outcome) return lost();
    this.waiters.get(row.code)?.(outcome.state);
    return outcome.result;
  }

  /** Why this person cannot answer this code from where they are; null when they can. */
  private placeError(row: CodeRow<G>, who: Answerer): string | null {
    if (who.role !== "operator") return "That code is not yours to answer: only the owner it was made for can.";
    if (this.options.local?.(who.channel) && row.kind === "access") return null;
    if (who.channel !== row.channel || who.senderId !== row.senderId) return "That code is not yours to answer: only the owner it was made for can.";
    if (who.conversation === row.conversation) return null;
    if (row.kind === "access" && who.direct) return null;
    return row.kind === "proposal"
      ? "That code belongs to another conversation: confirm it where the change was proposed."
      : "Answer that request where it was asked, in a direct message to me, or on the command line.";
  }

  /** A proposal waits for no one; an access request only while the turn that asked still waits. */
  private waitedFor(row: CodeRow<G>): boolean {
    if (row.kind !== "access" || row.holder === null) return true;
    return row.holder === this.holder ? this.waiters.has(row.code) : this.alive(row.holder);
  }

  private expiredText(row: CodeRow<G>): string {
    return row.kind === "proposal"
      ? `That code has expired (codes last ${this.ttlWords}); send the /sandbox command again for a new one.`
      : "That request has expired: the assistant stopped waiting for an answer.";
  }

  /** Decided or expired longer ago than codes are remembered: as good as unknown (the sweep deletes it). */
  private forgotten(row: CodeRow<G>): boolean {
    const ended = row.decidedAt ?? (row.expiresAt < this.now() ? row.expiresAt : undefined);
    return ended !== undefined && ended < this.now() - (this.options.rememberMs ?? CODES_KEPT_MS);
  }

  private token(): string {
    const bytes = this.random(TOKEN_LENGTH);
    let out = "";
    for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
    return out;
  }
}

const ENDED_TEXT = "That request ended when the assistant restarted; ask again.";

function recordOf<G>(row: CodeRow<G>): CodeRecord<G> {
  return {
    token: row.code,
    kind: row.kind,
    summary: row.summary,
    channel: row.channel as GatewayChannel,
    senderId: row.senderId,
    conversation: row.conversation,
    grants: row.grants,
    expiresAt: row.expiresAt,
  };
}

/**
 * Whether the process recorded as `<pid>:<instance>` still runs: its pid
 * answers signal 0 (EPERM: it runs, as another user). Our own pid with
 * another instance is the process before a restart that got the same pid
 * (a container's pid 1).
 */
export function processAlive(holder: string): boolean {
  return otherProcessRuns(Number(holder.split(":")[0]));
}
