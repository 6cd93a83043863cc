/**
 * The rules of a `/soul` proposal token: short enough to type, random, kept
 * only as a hash; single use, time-limited, and good only for the sender and
 * the conversation that made it. `checkToken` is pure: it takes the stored
 * proposal (or none), who asks, and the time.
 */
import { createHash, randomInt } from "node:crypto";
import type { ProposalOwner, StoredProposal } from "../../store/soul.ts";

/** Letters and digits that cannot be misread for each other (no i, l, o, 0, 1). */
const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
/** 8 of 31 symbols: about 40 bits, for a token that lives minutes and works only for its maker. */
export const TOKEN_LENGTH = 8;

/** A fresh token; `pick(n)` returns an integer in [0, n) (crypto by default, injectable for tests). */
export function newToken(pick: (n: number) => number = (n) => randomInt(n)): string {
  let token = "";
  for (let i = 0; i < TOKEN_LENGTH; i++) token += ALPHABET[pick(ALPHABET.length)];
  return token;
}

/** A token as the user typed it, made comparable: trimmed, lower case, without surrounding backticks or quotes. */
export function normalizeToken(typed: string): string {
  return typed
    .trim()
    .replace(/^[`'"]+|[`'"]+$/g, "")
    .toLowerCase();
}

/** What the store keeps instead of the token. */
export function hashToken(token: string): string {
  return createHash("sha256").update(normalizeToken(token)).digest("hex");
}

/** Why a token was refused: none like it, another sender's, made in another conversation, already applied, or too old. */
export type TokenRefusal = "unknown" | "other_sender" | "other_conversation" | "used" | "expired";

export type TokenCheck = { ok: true; proposal: StoredProposal } | { ok: false; reason: TokenRefusal; proposal?: StoredProposal };

/**
 * Whether `who` may use the proposal at `now`. Ownership is checked before
 * the token's state, so someone else learns nothing about a token but that it
 * is not theirs.
 */
export function checkToken(proposal: StoredProposal | null, who: ProposalOwner, now: number): TokenCheck {
  if (!proposal) return { ok: false, reason: "unknown" };
  if (proposal.channel !== who.channel || proposal.senderId !== who.senderId) return { ok: false, reason: "other_sender" };
  if (proposal.conversation !== who.conversation) return { ok: false, reason: "other_conversation", proposal };
  if (proposal.usedAt !== null) return { ok: false, reason: "used", proposal };
  if (now >= proposal.expiresAt) return { ok: false, reason: "expired", proposal };
  return { ok: true, proposal };
}
