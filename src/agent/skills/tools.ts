/**
 * The skill tools and the prompt section, for the owner's turns only (a
 * skill is the owner's know-how, like the workspace it lives in):
 * `use_skill(name)` loads an active skill's SKILL.md and lists its other
 * files; `propose_skill(name, content, reason)` keeps a proposal for the
 * owner and tells them, in the conversation, that one is waiting. The section
 * lists the active skills' descriptions in every turn that has `use_skill`.
 */
import { Type } from "@sinclair/typebox";
import type { PromptSection, TurnRequest } from "../agent.ts";
import { defineTool, type Tool, ToolError } from "../tools/types.ts";
import { type SkillLibrary, SkillRefused } from "./library.ts";

export const SKILLS_HEADING = "Skills you have learnt";

/** use_skill and propose_skill over one library (who is offered them is the role table's business: src/gateway/roles.ts). */
export function skillTools(library: SkillLibrary): Tool[] {
  const useSkill = defineTool({
    name: "use_skill",
    description:
      "Load one of your skills (listed under “Skills you have learnt”) when it applies to the request: answers its full SKILL.md instructions and the other files of its folder, which you can read with read_file. Follow the instructions.",
    parameters: Type.Object({ name: Type.String({ description: "the skill's name, as listed" }) }, { additionalProperties: false }),
    async run(args) {
      const name = args.name.trim();
      if (name === "") throw new ToolError("name is empty: give the name of a listed skill");
      try {
        const skill = library.use(name);
        const files =
          skill.files.length === 0
            ? ""
            : `\n\n---\nOther files of this skill (paths in the workspace, read-only):\n${skill.files.map((f) => `- ${f}`).join("\n")}${skill.moreFiles ? "\n- …and more" : ""}`;
        return `${skill.text.trim()}${files}`;
      } catch (error) {
        if (error instanceof SkillRefused) throw new ToolError(error.message);
        throw error;
      }
    },
  });

  const proposeSkill = defineTool({
    name: "propose_skill",
    description:
      "Propose a new skill, or a change to one, for the owner to review — for example after working out a task step by step that is likely to come again. " +
      "It takes effect only when the owner approves it with /skills. content is the whole SKILL.md: YAML front matter between two `---` lines with `name` (the same as name) and `description` (one line: what it does and when to use it), then the instructions in Markdown.",
    parameters: Type.Object(
      {
        name: Type.String({ description: 'lower-case letters, digits and hyphens, e.g. "weekly-report"; an existing name proposes a change to that skill' }),
        content: Type.String({ description: "the complete SKILL.md text" }),
        reason: Type.String({ description: "one or two sentences for the owner: why this skill is worth keeping" }),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const name = args.name.trim();
      try {
        const proposal = library.propose({ channel: ctx.channel, senderId: ctx.senderId, conversation: ctx.conversation }, name, args.content, args.reason);
        const what = proposal.baseText === null ? `a new skill **${name}**` : `a change to the skill **${name}**`;
        await ctx.say(
          `📝 I proposed ${what} (proposal #${proposal.id}). It waits for you: \`/skills review ${proposal.id}\` shows it, then \`/skills approve ${proposal.id}\` or \`/skills deny ${proposal.id}\`.`,
        );
        return `proposal #${proposal.id} is waiting for the owner's review; it takes effect only if they approve it`;
      } catch (error) {
        if (error instanceof SkillRefused) throw new ToolError(error.message);
        throw error;
      }
    },
  });
  return [useSkill, proposeSkill];
}

/** The prompt-section provider: the active skills' names and descriptions, in turns that can load them. */
export function skillsSection(library: SkillLibrary): (request: TurnRequest) => PromptSection[] {
  return (request) => {
    if (!request.tools.some((tool) => tool.spec.name === "use_skill")) return [];
    const skills = library.active();
    if (skills.length === 0) return [];
    const lines = skills.map((s) => `- ${s.name}: ${s.description}`);
    return [
      {
        title: SKILLS_HEADING,
        body: `When one of these applies to the request, load it with use_skill before you act, and follow it.\n\n${lines.join("\n")}`,
      },
    ];
  };
}
