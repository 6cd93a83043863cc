/**
 * The SKILL.md format (the Agent Skills layout): YAML front matter between
 * two `---` lines with at least `name` and `description`, then the skill's
 * instructions in Markdown. Pure: parsing and checking, with the reason in
 * plain words when a text is not a usable skill — the model reads it after a
 * bad `propose_skill`, the owner in `/skills`.
 */

/** A skill's name: lower-case letters, digits and single hyphens, as the folder is named. */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const MAX_NAME_CHARS = 64;
export const MAX_DESCRIPTION_CHARS = 1024;
/** The largest SKILL.md accepted (UTF-8 bytes); what it refers to goes in other files of its folder. */
export const MAX_SKILL_BYTES = 64 * 1024;

export interface ParsedSkill {
  name: string;
  /** One line: what the skill is for and when to use it (what the system prompt shows). */
  description: string;
  /** The instructions after the front matter. */
  body: string;
}

/** A text that is not a usable SKILL.md, or a name that is not a usable skill name; the message says why. */
export class SkillFormatError extends Error {
  override name = "SkillFormatError";
}

/** Why `name` cannot name a skill, or null when it can. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "a skill needs a name";
  if (name.length > MAX_NAME_CHARS) return `a skill's name is at most ${MAX_NAME_CHARS} characters`;
  if (!NAME.test(name)) return `"${name}" is not a skill name: use lower-case letters, digits and single hyphens (e.g. "weekly-report")`;
  return null;
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Parse a SKILL.md; throws SkillFormatError saying what is wrong. */
export function parseSkill(text: string): ParsedSkill {
  if (new TextEncoder().encode(text).byteLength > MAX_SKILL_BYTES) {
    throw new SkillFormatError(`SKILL.md is larger than ${MAX_SKILL_BYTES / 1024} KB: put long material in other files of the skill's folder`);
  }
  const match = FRONT_MATTER.exec(text);
  if (!match) throw new SkillFormatError("SKILL.md must start with YAML front matter: a line `---`, `name: …` and `description: …`, then a line `---`");
  let meta: unknown;
  try {
    meta = Bun.YAML.parse(match[1]!);
  } catch (error) {
    throw new SkillFormatError(`the front matter is not valid YAML (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`);
  }
  if (typeof meta !== "object" || meta === null || Array.isArray(meta))
    throw new SkillFormatError("the front matter must be a YAML mapping with name and description");
  const { name, description } = meta as Record<string, unknown>;
  if (typeof name !== "string") throw new SkillFormatError("the front matter has no `name`");
  const problem = nameProblem(name.trim());
  if (problem) throw new SkillFormatError(problem);
  if (typeof description !== "string" || description.trim() === "") throw new SkillFormatError("the front matter has no `description`");
  const oneLine = description.replace(/\s+/g, " ").trim();
  if (oneLine.length > MAX_DESCRIPTION_CHARS) throw new SkillFormatError(`the description is longer than ${MAX_DESCRIPTION_CHARS} characters`);
  return { name: name.trim(), description: oneLine, body: text.slice(match[0].length).trim() };
}

/** SHA-256 of a SKILL.md text (hex): how an edit on disk is noticed. */
export function skillHash(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}
