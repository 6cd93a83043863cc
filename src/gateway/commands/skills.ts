/**
 * `/skills`: the owner curates the skills the assistant learns (README.md
 * "Skills: `/skills`": review, approve or deny skill-curation proposals; list,
 * archive, unpark or restore skills). The agent proposes with
 * `propose_skill`; nothing it proposes takes effect until approved here.
 *
 * This module parses the subcommand and words the replies; the skills
 * service (`agent/skills/library.ts`) keeps the folder, the state and the
 * history. It declares the slice of the command context it uses instead of
 * importing it, so the command list can import this file without a cycle.
 */

import { type Skill, type SkillLibrary, SkillRefused } from "../../agent/skills/library.ts";
import { soulDiff } from "../../agent/soul/diff.ts";
import type { SkillChange, SkillProposal } from "../../store/skills.ts";

/** What `/skills` needs of the command context. */
export interface SkillsCommandContext {
  message: { channel: string; senderId: string };
  conversation: string;
  args: string;
  reply(markdown: string): Promise<void>;
  skills?: SkillLibrary | null;
}

export type SkillsRequest =
  | { kind: "list" }
  | { kind: "review" | "approve" | "deny"; id: number }
  | { kind: "archive" | "restore" | "unpark"; name: string }
  | { kind: "history"; name?: string }
  | { kind: "usage"; problem: string };

const SUBCOMMANDS: ReadonlyArray<readonly [string, string]> = [
  ["/skills", "list skills (active, parked, archived) with their use, and pending proposals"],
  ["/skills review ID", "show a proposal: a new skill's text, or a diff against the current one"],
  ["/skills approve ID", "approve a proposal: the skill is written and offered from the next turn"],
  ["/skills deny ID", "deny a proposal: nothing changes"],
  ["/skills archive NAME", "stop offering a skill (kept on disk)"],
  ["/skills restore NAME", "offer an archived skill again"],
  ["/skills unpark NAME", "offer a parked (long unused) skill again"],
  ["/skills history [NAME]", "the latest changes and where they came from"],
];

const HISTORY_LIMIT = 20;

/** The subcommand in `/skills`'s arguments. */
export function parseSkillsArgs(args: string): SkillsRequest {
  const words = args.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { kind: "list" };
  const sub = words[0]!.toLowerCase();
  const rest = words.slice(1);
  switch (sub) {
    case "list":
      return rest.length === 0 ? { kind: "list" } : { kind: "usage", problem: "`/skills list` takes nothing after it." };
    case "review":
    case "approve":
    case "deny": {
      const id = rest.length === 1 && /^#?\d{1,9}$/.test(rest[0]!) ? Number(rest[0]!.replace("#", "")) : 0;
      if (id < 1) return { kind: "usage", problem: `\`/skills ${sub}\` needs the number of a proposal: \`/skills ${sub} ID\` (\`/skills\` lists them).` };
      return { kind: sub, id };
    }
    case "archive":
    case "restore":
    case "unpark":
      if (rest.length !== 1) return { kind: "usage", problem: `\`/skills ${sub}\` needs the name of a skill: \`/skills ${sub} NAME\`.` };
      return { kind: sub, name: rest[0]! };
    case "history":
      if (rest.length > 1) return { kind: "usage", problem: "`/skills history` takes at most one skill name." };
      return rest.length === 1 ? { kind: "history", name: rest[0]! } : { kind: "history" };
    default:
      return { kind: "usage", problem: `\`/skills ${words[0]}\` is not a /skills subcommand.` };
  }
}

const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
const times = (n: number) => (n === 1 ? "once" : `${n} times`);
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const usageLines = () => SUBCOMMANDS.map(([command, what]) => `- \`${command}\` — ${what}`).join("\n");

/** A code block fenced with more backticks than any run inside it. */
function fenced(text: string, language: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text.replace(/\n$/, "")}\n${fence}`;
}

function skillLine(skill: Skill): string {
  const used = skill.uses === 0 ? "never used" : `used ${times(skill.uses)}, last ${when(skill.lastUsedAt!)}`;
  const back = skill.state === "parked" ? ` · \`/skills unpark ${skill.name}\`` : skill.state === "archived" ? ` · \`/skills restore ${skill.name}\`` : "";
  return `- \`${skill.name}\` — ${used} — ${clip(skill.description, 120)}${back}`;
}

function proposalLine(p: SkillProposal): string {
  const what = p.baseText === null ? "new skill" : "change to";
  return `- #${p.id} ${what} \`${p.name}\`: ${clip(p.reason, 120)} (${when(p.createdAt)}) · \`/skills review ${p.id}\``;
}

function listReply(library: SkillLibrary): string {
  const { skills, problems } = library.view();
  const pending = library.pending();
  const sections: string[] = [];
  for (const [state, title] of [
    ["active", "Active"],
    ["parked", "Parked (unused too long)"],
    ["archived", "Archived"],
  ] as const) {
    const of = skills.filter((s) => s.state === state);
    if (of.length > 0) sections.push(`**${title}** (${of.length})\n${of.map(skillLine).join("\n")}`);
  }
  if (problems.length > 0) sections.push(`**Not usable** (${problems.length})\n${problems.map((p) => `- \`${p.folder}\`: ${p.problem}`).join("\n")}`);
  if (pending.length > 0) sections.push(`**Pending proposals** (${pending.length})\n${pending.map(proposalLine).join("\n")}`);
  const body = sections.length > 0 ? sections.join("\n\n") : "No skills yet, and no proposals waiting.";
  return `**Skills**\n\n${body}\n\n${usageLines()}`;
}

function reviewReply(proposal: SkillProposal, current: string | null): string {
  const lines = [
    `**Skill proposal #${proposal.id}** (${proposal.state}): ${current === null ? "a new skill" : "a change to the skill"} \`${proposal.name}\`, proposed ${when(proposal.createdAt)} on ${proposal.channel}.`,
  ];
  lines.push(`Reason: ${proposal.reason}`, "");
  if (current === null) {
    lines.push(fenced(proposal.content, "markdown"));
  } else {
    const diff = soulDiff(current, proposal.content, { before: "current", after: `proposal #${proposal.id}` }, `skills/${proposal.name}/SKILL.md`);
    if (diff.lines.length === 0) lines.push("It is the same as the current skill: approving it changes nothing.");
    else {
      lines.push(fenced(diff.lines.join("\n"), "diff"), "", `${diff.added} line${diff.added === 1 ? "" : "s"} added, ${diff.removed} removed.`);
    }
    if (proposal.baseText !== null && proposal.baseText !== current)
      lines.push("The skill has changed since this was proposed; the diff is against its text now.");
  }
  if (proposal.state === "pending") lines.push("", `\`/skills approve ${proposal.id}\` or \`/skills deny ${proposal.id}\``);
  return lines.join("\n");
}

const ORIGIN: Record<SkillChange["origin"], string> = { owner: "by the owner", agent: "by the assistant", disk: "on disk", automatic: "automatically" };

function historyReply(changes: SkillChange[], name?: string): string {
  if (changes.length === 0) return name ? `No changes recorded for \`${name}\`.` : "No skill changes recorded yet.";
  const lines = changes
    .slice()
    .reverse()
    .map((c) => {
      const parts = [when(c.at), `\`${c.name}\``, `${c.change} ${ORIGIN[c.origin]}${c.actor ? ` (${c.actor})` : ""}`];
      if (c.proposalId !== null) parts.push(`proposal #${c.proposalId}`);
      if (c.note) parts.push(clip(c.note, 100));
      return `- ${parts.join(" · ")}`;
    });
  return `**Skill changes**${name ? ` of \`${name}\`` : ""} (latest ${changes.length}, oldest first)\n\n${lines.join("\n")}`;
}

async function run(ctx: SkillsCommandContext): Promise<void> {
  const library = ctx.skills;
  if (!library) {
    await ctx.reply("/skills is not available here.");
    return;
  }
  const request = parseSkillsArgs(ctx.args);
  const who = { channel: ctx.message.channel, senderId: ctx.message.senderId, conversation: ctx.conversation };
  try {
    switch (request.kind) {
      case "usage":
        await ctx.reply(`${request.problem}\n\n${usageLines()}`);
        return;
      case "list":
        await ctx.reply(listReply(library));
        return;
      case "history":
        await ctx.reply(historyReply(library.history(HISTORY_LIMIT, request.name), request.name));
        return;
      case "review": {
        const { proposal, current } = library.proposal(request.id);
        await ctx.reply(reviewReply(proposal, current));
        return;
      }
      case "approve": {
        const { proposal, created } = library.approve(request.id, who);
        await ctx.reply(
          `Approved #${proposal.id}: the skill \`${proposal.name}\` is ${created ? "new" : "changed"} and active; I can use it from my next reply.`,
        );
        return;
      }
      case "deny": {
        const proposal = library.deny(request.id, who);
        await ctx.reply(`Denied #${proposal.id}: the skill \`${proposal.name}\` is unchanged${proposal.baseText === null ? " (it was not created)" : ""}.`);
        return;
      }
      case "archive":
        library.archive(request.name, who);
        await ctx.reply(`Archived \`${request.name}\`: it stays on disk but is no longer offered. \`/skills restore ${request.name}\` brings it back.`);
        return;
      case "restore":
        library.restore(request.name, who);
        await ctx.reply(`Restored \`${request.name}\`: it is offered again from my next reply.`);
        return;
      case "unpark":
        library.unpark(request.name, who);
        await ctx.reply(`Unparked \`${request.name}\`: it is offered again from my next reply.`);
        return;
    }
  } catch (error) {
    if (error instanceof SkillRefused) await ctx.reply(error.message);
    else throw error;
  }
}

export const SKILLS_COMMAND = {
  name: "skills",
  aliases: [] as readonly string[],
  usage: "/skills [review|approve|deny ID | archive|restore|unpark NAME | history]",
  summary: "curate the skills I learn: list, review, approve, deny, archive, restore, unpark",
  operator: true,
  // Queued like a turn: an approved or archived skill takes effect between turns, never in the middle of one.
  immediate: false,
  run,
};
