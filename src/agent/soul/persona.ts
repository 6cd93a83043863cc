/**
 * The persona service behind `/soul` and every turn's system prompt. It keeps
 * SOUL.md and its revision history in step: the file is what the agent reads,
 * the history (SQLite) holds every text it has had. A change goes through a
 * proposal (review, revert, reset) that the owner applies with its token;
 * applying writes the file atomically and records the revision in the same
 * transaction. An edit of the file by hand is noticed when the file is next
 * read — at the next turn or `/soul` command — and recorded as a revision.
 *
 * Proposals are kept in SQLite, not in memory: `fermix ask` without a daemon
 * is one process per command, and a proposal made by one must be appliable by
 * the next; a daemon restart within the five minutes does not void it either.
 */

import { describeError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ConversationStore } from "../../store/conversations.ts";
import type { ProposalKind, ProposalOwner, Revision, RevisionSummary, SoulStore, StoredProposal } from "../../store/soul.ts";
import { DEFAULT_SOUL } from "../prompt.ts";
import type { Provider } from "../providers/types.ts";
import { SoulFile } from "./file.ts";
import { CONTEXT_MESSAGES, type ContextWindow, contextWindow, draftSoul } from "./review.ts";
import { checkToken, hashToken, newToken, type TokenRefusal } from "./tokens.ts";

export { CONTEXT_CHARS, CONTEXT_MESSAGES } from "./review.ts";

/** A proposal as the owner sees it: what it would change, and the token that applies it. */
export interface Proposal {
  kind: ProposalKind;
  note: string | null;
  /** The revision it was made against, and that revision's text. */
  base: number;
  before: string;
  after: string;
  expiresAt: number;
  /** For `review --with-context`: the evidence sent with the request. */
  context?: { messages: number; chars: number };
  /** The current revision when the proposal was made against an older one (it can no longer be applied). */
  staleSince?: number;
}

/** A proposal just made, with the token that applies it. */
export type NewProposal = Proposal & { token: string };

/** A token that may not be used: why, in the terms of `TokenRefusal`. */
export class TokenRefused extends Error {
  override name = "TokenRefused";
  constructor(readonly reason: TokenRefusal) {
    super(`token refused: ${reason}`);
  }
}

/** A request the service will not carry out, with words for the owner. */
export class PersonaRefused extends Error {
  override name = "PersonaRefused";
}

export interface PersonaDeps {
  store: SoulStore;
  path: string;
  conversations: ConversationStore;
  /** The primary provider and its model, for reviews; null when none is configured. */
  model: () => { provider: Provider; model: string } | null;
  /** How long a proposal's token stays valid (ms). */
  ttlMs: number;
  now?: () => number;
  token?: () => string;
  log?: Logger;
}

export class Persona {
  private readonly file: SoulFile;
  /** The service's clock (epoch ms): what token expiry is measured with. */
  readonly now: () => number;

  constructor(private readonly deps: PersonaDeps) {
    this.file = new SoulFile(deps.path);
    this.now = deps.now ?? Date.now;
  }

  /** How long a proposal's token stays valid (ms). */
  get ttlMs(): number {
    return this.deps.ttlMs;
  }

  /**
   * The persona for this turn: SOUL.md as it is now, read from disk only when
   * it changed; a change not made through `/soul` is recorded as a revision.
   */
  current(): string {
    try {
      return this.sync().text;
    } catch (error) {
      // A turn still gets a persona when the file cannot be read: the last one recorded.
      this.deps.log?.error("SOUL.md could not be read; using the last recorded revision", { error: describeError(error) });
      return this.deps.store.latest()?.text ?? DEFAULT_SOUL;
    }
  }

  /** The latest revision, after squaring the history with the file (written with the default when missing). */
  sync(): Revision {
    const { store } = this.deps;
    let missing = false;
    if (!this.file.exists()) {
      missing = true;
      this.file.write(DEFAULT_SOUL);
    }
    const read = this.file.read();
    const changed = read.changed || missing;
    const latest = store.latest();
    if (latest && (!changed || read.text === latest.text)) return latest;
    if (!latest) return this.record("initial", missing ? "the shipped default" : null, read.text);
    return this.record("manual", missing ? "SOUL.md was missing: the shipped default was written" : "edited on disk", read.text);
  }

  /**
   * Make `text` the persona as a new revision, outside the proposal flow:
   * what `fermix import openclaw` does with the persona it brings (the
   * owner ran it). The file as it was is recorded first, so /soul history
   * and /soul revert still reach it; the same text again adds nothing.
   */
  adopt(text: string, note: string): Revision {
    const base = this.sync();
    if (base.text === text) return base;
    const revision = this.deps.store.transaction(() => {
      const added = this.deps.store.addRevision("manual", note, text, this.now());
      this.file.write(text);
      return added;
    });
    this.deps.log?.info("SOUL.md changed", { revision: revision.id, origin: revision.origin });
    return revision;
  }

  history(): RevisionSummary[] {
    this.sync();
    return this.deps.store.history();
  }

  /** Draft an edit with the model: subtle without an instruction, guided by one; with context, the owner's own recent messages in this conversation as evidence (never another member's). */
  async proposeReview(who: ProposalOwner, options: { instruction?: string; withContext?: boolean; signal?: AbortSignal } = {}): Promise<NewProposal> {
    const model = this.deps.model();
    if (!model) throw new PersonaRefused("No model provider is configured, so there is nothing to draft a review with.");
    const base = this.sync();
    const instruction = options.instruction?.trim() || undefined;
    let context: ContextWindow | undefined;
    if (options.withContext) {
      context = contextWindow(this.deps.conversations.recentUserTexts(who.conversation, who.senderId, CONTEXT_MESSAGES));
    }
    const draft = await draftSoul(model, base.text, {
      ...(instruction ? { instruction } : {}),
      ...(context ? { context } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (draft === base.text) {
      throw new PersonaRefused(`The model proposed no change to revision ${base.id}: SOUL.md stays as it is.`);
    }
    const proposal = this.propose(who, "review", instruction ?? null, base, draft);
    if (context) proposal.context = { messages: context.messages.length, chars: context.chars };
    return proposal;
  }

  /** Propose going back to the text of revision `n`. */
  proposeRevert(who: ProposalOwner, n: number): NewProposal {
    const base = this.sync();
    const target = this.deps.store.revision(n);
    if (!target) throw new PersonaRefused(`There is no revision ${n}. \`/soul history\` lists them (1 to ${base.id}).`);
    if (target.text === base.text) throw new PersonaRefused(`Revision ${n} has the same text as the current revision ${base.id}: nothing to revert.`);
    return this.propose(who, "revert", `revision ${n}`, base, target.text);
  }

  /** Propose the shipped default persona. */
  proposeReset(who: ProposalOwner): NewProposal {
    const base = this.sync();
    if (base.text === DEFAULT_SOUL) throw new PersonaRefused(`SOUL.md is already the shipped default (revision ${base.id}).`);
    return this.propose(who, "reset", null, base, DEFAULT_SOUL);
  }

  /** A pending proposal again, for its maker in the conversation it was made in; nothing is consumed. */
  pending(who: ProposalOwner, token: string): Proposal {
    const proposal = this.check(who, token);
    const latest = this.sync();
    const shown = this.shown(proposal);
    if (latest.id !== proposal.baseRevision) shown.staleSince = latest.id;
    return shown;
  }

  /** Apply a proposal: its token is used up, SOUL.md is written and the revision recorded; the next turn reads it. */
  apply(who: ProposalOwner, token: string): { revision: Revision; proposal: Proposal } {
    const latest = this.sync();
    const proposal = this.check(who, token);
    if (latest.id !== proposal.baseRevision) {
      throw new PersonaRefused(
        `SOUL.md has changed since that proposal was made (it was made against revision ${proposal.baseRevision}; the current one is ${latest.id}), so it cannot be applied. Make a new one.`,
      );
    }
    const revision = this.deps.store.transaction(() => {
      if (!this.deps.store.markUsed(hashToken(token), this.now())) throw new TokenRefused("used");
      const added = this.deps.store.addRevision(proposal.kind, proposal.note, proposal.text, this.now());
      this.file.write(proposal.text);
      return added;
    });
    this.deps.log?.info("SOUL.md changed", { revision: revision.id, origin: revision.origin });
    return { revision, proposal: this.shown(proposal) };
  }

  private check(who: ProposalOwner, token: string): StoredProposal {
    const verdict = checkToken(this.deps.store.proposal(hashToken(token)), who, this.now());
    if (!verdict.ok) throw new TokenRefused(verdict.reason);
    return verdict.proposal;
  }

  private propose(who: ProposalOwner, kind: ProposalKind, note: string | null, base: Revision, text: string): NewProposal {
    const token = (this.deps.token ?? newToken)();
    const createdAt = this.now();
    const expiresAt = createdAt + this.deps.ttlMs;
    this.deps.store.addProposal(hashToken(token), { ...who, kind, note, baseRevision: base.id, text, createdAt, expiresAt });
    return { kind, note, base: base.id, before: base.text, after: text, expiresAt, token };
  }

  private shown(proposal: StoredProposal): Proposal {
    const base = this.deps.store.revision(proposal.baseRevision);
    return {
      kind: proposal.kind,
      note: proposal.note,
      base: proposal.baseRevision,
      before: base?.text ?? "",
      after: proposal.text,
      expiresAt: proposal.expiresAt,
    };
  }

  private record(origin: "initial" | "manual", note: string | null, text: string): Revision {
    const revision = this.deps.store.addRevision(origin, note, text, this.now());
    this.deps.log?.info(origin === "manual" ? "SOUL.md was changed outside /soul; recorded as a revision" : "SOUL.md history started", {
      revision: revision.id,
    });
    return revision;
  }
}
