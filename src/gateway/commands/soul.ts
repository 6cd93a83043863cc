/**
 * `/soul`: the owner shapes the assistant's persona (SOUL.md) from any chat
 * (README.md "The persona: `/soul`"). Changes are proposals
 * — a review drafted by the model, a revert, a reset — shown as a diff with a
 * `/soul apply TOKEN` line; nothing changes until the owner applies one.
 *
 * This module parses the subcommand and words the replies; the persona
 * service (`agent/soul/persona.ts`) keeps the file, the history and the
 * tokens. It declares the slice of the command context it uses instead of
 * importing it, so the command list can import this file without a cycle.
 */

import { soulDiff } from "../../agent/soul/diff.ts";
import { CONTEXT_CHARS, CONTEXT_MESSAGES, type NewProposal, type Persona, PersonaRefused, type Proposal, TokenRefused } from "../../agent/soul/persona.ts";
import { DraftFailed } from "../../agent/soul/review.ts";
import type { TokenRefusal } from "../../agent/soul/tokens.ts";
import type { Revision, RevisionSummary } from "../../store/soul.ts";

/** What `/soul` needs of the command context. */
export interface SoulCommandContext {
  message: { channel: string; senderId: string };
  conversation: string;
  args: string;
  reply(markdown: string): Promise<void>;
  persona: Persona | null;
  /** The conversation queue's signal: /stop aborts a review's model request. */
  signal?: AbortSignal;
}

export type SoulRequest =
  | { kind: "status" }
  | { kind: "history" }
  | { kind: "reset" }
  | { kind: "review"; instruction: string; withContext: boolean }
  | { kind: "diff" | "apply"; token: string }
  | { kind: "revert"; revision: number }
  | { kind: "usage"; problem: string };

const SUBCOMMANDS: ReadonlyArray<readonly [string, string]> = [
  [
    "/soul review [instruction] [--with-context]",
    "draft an edit: a subtle review, or one guided by your instruction; `--with-context` adds your recent messages here as evidence",
  ],
  ["/soul diff TOKEN", "show a pending proposal again"],
  ["/soul history", "list every revision"],
  ["/soul revert N", "propose going back to revision N"],
  ["/soul reset", "propose the shipped default"],
  ["/soul apply TOKEN", "apply a proposal"],
];

/** `--with-context`, also as a phone's autocorrect writes it (an em or en dash for the two hyphens). */
const WITH_CONTEXT = /^(?:--|—|–)with-context$/i;

/** The subcommand in `/soul`'s arguments. */
export function parseSoulArgs(args: string): SoulRequest {
  const text = args.trim();
  if (text === "") return { kind: "status" };
  const [word = "", ...rest] = text.split(/\s+/);
  const sub = word.toLowerCase();
  const tail = text.slice(word.length).trim();
  switch (sub) {
    case "history":
    case "reset":
      return rest.length === 0 ? { kind: sub } : { kind: "usage", problem: `\`/soul ${sub}\` takes nothing after it.` };
    case "review": {
      // Words and the whitespace between them: the flag may stand anywhere; the instruction keeps its line breaks.
      const pieces = tail.split(/(\s+)/);
      const instruction = pieces
        .filter((piece) => !WITH_CONTEXT.test(piece))
        .join("")
        .replace(/[ \t]{2,}/g, " ")
        .trim();
      return { kind: "review", instruction, withContext: pieces.some((piece) => WITH_CONTEXT.test(piece)) };
    }
    case "diff":
    case "apply":
      if (rest.length !== 1) return { kind: "usage", problem: `\`/soul ${sub}\` needs the token of a proposal: \`/soul ${sub} TOKEN\`.` };
      return { kind: sub, token: rest[0]! };
    case "revert": {
      const n = rest.length === 1 && /^#?\d{1,9}$/.test(rest[0]!) ? Number(rest[0]!.replace("#", "")) : 0;
      if (n < 1) return { kind: "usage", problem: "`/soul revert` needs a revision number: `/soul revert N` (`/soul history` lists them)." };
      return { kind: "revert", revision: n };
    }
    default:
      return { kind: "usage", problem: `\`/soul ${word}\` is not a /soul subcommand.` };
  }
}

const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
const bytes = (n: number) => `${n.toLocaleString("en-US")} byte${n === 1 ? "" : "s"}`;
const quoted = (text: string) => `“${text.length > 80 ? `${text.slice(0, 79)}…` : text}”`;

/** A duration as a person says it: "5 minutes", "30 seconds". */
export function spell(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  if (seconds % 60 !== 0) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = seconds / 60;
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/** How a revision came about, in a few words. */
function origin(r: RevisionSummary): string {
  switch (r.origin) {
    case "initial":
      return r.note ? `initial (${r.note})` : "initial: the file as first found";
    case "review":
      return r.note ? `review guided by ${quoted(r.note)}` : "review";
    case "revert":
      return `revert to ${r.note ?? "an earlier revision"}`;
    case "reset":
      return "reset to the shipped default";
    case "manual":
      return `manual edit (${r.note ?? "edited on disk"})`;
  }
}

function statusReply(current: Revision): string {
  const usage = SUBCOMMANDS.map(([command, what]) => `- \`${command}\` — ${what}`).join("\n");
  return `**SOUL.md** is at revision ${current.id} (${origin(current)}), made ${when(current.createdAt)}; ${bytes(current.bytes)}.\n\n${usage}`;
}

function historyReply(revisions: RevisionSummary[]): string {
  const lines = revisions.map(
    (r, i) => `- #${r.id} · ${when(r.createdAt)} · ${origin(r)} · ${bytes(r.bytes)}${i === revisions.length - 1 ? " · current" : ""}`,
  );
  return `**SOUL.md revisions** (${revisions.length})\n\n${lines.join("\n")}`;
}

/** The diff as a code block, fenced with more backticks than any run inside it. */
function diffBlock(proposal: Proposal, afterLabel: string): { block: string; summary: string } {
  const diff = soulDiff(proposal.before, proposal.after, { before: `revision ${proposal.base}`, after: afterLabel });
  const longest = Math.max(0, ...(diff.lines.join("\n").match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return {
    block: `${fence}diff\n${diff.lines.join("\n")}\n${fence}`,
    summary: `${diff.added} line${diff.added === 1 ? "" : "s"} added, ${diff.removed} removed`,
  };
}

function title(proposal: Proposal): string {
  switch (proposal.kind) {
    case "review":
      return proposal.note ? `a review guided by ${quoted(proposal.note)}` : "a subtle review";
    case "revert":
      return `a revert to ${proposal.note ?? "an earlier revision"}`;
    case "reset":
      return "a reset to the shipped default";
  }
}

/** A function, not a constant: number formatting loads ICU data, which is for the first /soul, not for start-up. */
const contextLimits = () => `at most ${CONTEXT_MESSAGES} messages and ${CONTEXT_CHARS.toLocaleString("en-US")} characters are sent`;

function proposalReply(proposal: NewProposal, ttlMs: number): string {
  const { block, summary } = diffBlock(proposal, "proposed");
  const lines = [`**Proposed change to SOUL.md**: ${title(proposal)}, against revision ${proposal.base}.`];
  if (proposal.context) {
    const { messages, chars } = proposal.context;
    lines.push(
      messages === 0
        ? `Context: there were no earlier messages in this conversation to send (${contextLimits()}).`
        : `Context: the last ${messages} message${messages === 1 ? "" : "s"} sent here, ${chars.toLocaleString("en-US")} characters (${contextLimits()}).`,
    );
  }
  lines.push("", block, "", `${summary}. To apply it, send:`, "", `\`/soul apply ${proposal.token}\``, "");
  lines.push(`The token works once, only for you and only in this conversation, for ${spell(ttlMs)}. Nothing changes until it is applied.`);
  return lines.join("\n");
}

function pendingReply(proposal: Proposal, token: string, now: number): string {
  const { block, summary } = diffBlock(proposal, "proposed");
  const lines = [`**Pending proposal**: ${title(proposal)}, against revision ${proposal.base}.`, "", block, "", `${summary}.`];
  if (proposal.staleSince !== undefined) {
    lines.push(`SOUL.md has changed since (it is now revision ${proposal.staleSince}), so this proposal can no longer be applied: make a new one.`);
  } else {
    lines.push(`To apply it, send \`/soul apply ${token}\` within ${spell(proposal.expiresAt - now)}.`);
  }
  return lines.join("\n");
}

/** The plain words for a refused token. */
export function tokenRefusal(reason: TokenRefusal, ttlMs: number): string {
  switch (reason) {
    case "unknown":
      return "There is no /soul proposal with that token. Check it for typos, or make a new proposal (`/soul` lists how).";
    case "other_sender":
      return "That token belongs to someone else's /soul proposal: only the person who made a proposal can show or apply it.";
    case "other_conversation":
      return "That token was made in another conversation: a /soul proposal can only be shown or applied in the conversation where it was made.";
    case "used":
      return "That /soul proposal has already been applied: each token works only once. `/soul history` shows what changed.";
    case "expired":
      return `That /soul proposal has expired (tokens last ${spell(ttlMs)}): nothing was changed. Make a new proposal.`;
  }
}

async function run(ctx: SoulCommandContext): Promise<void> {
  const persona = ctx.persona;
  if (!persona) {
    await ctx.reply("/soul is not available here.");
    return;
  }
  const request = parseSoulArgs(ctx.args);
  const who = { channel: ctx.message.channel, senderId: ctx.message.senderId, conversation: ctx.conversation };
  try {
    switch (request.kind) {
      case "usage":
        await ctx.reply(`${request.problem}\n\n${SUBCOMMANDS.map(([command, what]) => `- \`${command}\` — ${what}`).join("\n")}`);
        return;
      case "status":
        await ctx.reply(statusReply(persona.sync()));
        return;
      case "history":
        await ctx.reply(historyReply(persona.history()));
        return;
      case "review": {
        const proposal = await persona.proposeReview(who, {
          ...(request.instruction ? { instruction: request.instruction } : {}),
          withContext: request.withContext,
          // /stop aborts the draft's model request like any queued work.
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
        await ctx.reply(proposalReply(proposal, persona.ttlMs));
        return;
      }
      case "revert":
        await ctx.reply(proposalReply(persona.proposeRevert(who, request.revision), persona.ttlMs));
        return;
      case "reset":
        await ctx.reply(proposalReply(persona.proposeReset(who), persona.ttlMs));
        return;
      case "diff":
        await ctx.reply(pendingReply(persona.pending(who, request.token), request.token, persona.now()));
        return;
      case "apply": {
        const { revision } = persona.apply(who, request.token);
        await ctx.reply(
          `Applied: SOUL.md is now revision ${revision.id} (${origin(revision)}, ${bytes(revision.bytes)}). My next reply uses it. \`/soul revert ${revision.id - 1}\` proposes going back.`,
        );
        return;
      }
    }
  } catch (error) {
    if (error instanceof TokenRefused) await ctx.reply(tokenRefusal(error.reason, persona.ttlMs));
    else if (error instanceof PersonaRefused) await ctx.reply(error.message);
    else if (error instanceof DraftFailed) await ctx.reply(`I could not draft a review: ${error.message}. SOUL.md is unchanged.`);
    else throw error;
  }
}

export const SOUL_COMMAND = {
  name: "soul",
  aliases: [] as readonly string[],
  usage: "/soul [review|diff|history|revert|reset|apply]",
  summary: "shape my persona (SOUL.md): review, diff, history, revert, reset, apply",
  operator: true,
  // Queued like a turn: an applied persona takes effect between turns, never in the middle of one.
  immediate: false,
  run,
};
