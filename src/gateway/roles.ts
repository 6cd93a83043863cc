/**
 * The role table: which tools a turn is offered, decided in this one place
 * for every kind of turn (a conversation turn, `/background` work, a
 * scheduled job's run, an `/ultra` part, a realtime voice session's tool
 * calls). docs/security.md shows the same
 * table to the owner; a test holds the two together.
 *
 * A turn's audience is who it is for and where: the sender's standing on
 * the channel (owner, operator, allowed sender), whether the chat is a
 * direct one with them or shared with others, and — in a shared chat —
 * whether the owner switched the changing and sending tools on for it
 * (`/sandbox chat on`). That gives one of five rows:
 *
 * - `owner`: the owner, or an operator, in a direct chat (the command line
 *   and an editor over ACP included) — every tool;
 * - `owner_shared`: the owner in a shared chat — tools that read, nothing
 *   that changes or sends anything, since the words of other members are in
 *   the same conversation;
 * - `owner_shared_on`: the owner in a shared chat where `/sandbox chat on`
 *   was confirmed — every tool again;
 * - `allowed`: an allowed sender in a direct chat — their own memory and
 *   jobs, reactions; nothing that reads the workspace or acts outside their
 *   conversation;
 * - `member`: anyone but the owner in a shared chat (an operator by
 *   `command_allowlist` too: they get the owner's tools only in a direct
 *   chat) — their own memory, reactions.
 *
 * A tool missing from the table is offered to no one: a new tool is
 * reachable only once its row is written here (and in docs/security.md).
 */
import type { Standing } from "./trust.ts";

/**
 * The kinds of turn; they differ in what can wait for the owner (an access
 * request needs someone there to answer) and in what the surface can do
 * (`voice`, a realtime voice session's tool calls: the owner speaking live,
 * with no message to react to).
 */
export type TurnMode = "foreground" | "background" | "scheduled" | "ultra_part" | "voice";

export const TURN_MODES: readonly TurnMode[] = ["foreground", "background", "scheduled", "ultra_part", "voice"];

/** Who a turn is for, and where. */
export interface Audience {
  standing: Standing;
  /** The chat is one-to-one with the sender. */
  direct: boolean;
  /** In a shared chat: the owner switched the changing and sending tools on for it (`/sandbox chat on`). */
  sharedToolsOn: boolean;
  mode: TurnMode;
}

export type TrustRow = "owner" | "owner_shared" | "owner_shared_on" | "allowed" | "member";

export const TRUST_ROWS: readonly TrustRow[] = ["owner", "owner_shared", "owner_shared_on", "allowed", "member"];

/** The row of the table an audience reads. */
export function trustRow(audience: Pick<Audience, "standing" | "direct" | "sharedToolsOn">): TrustRow {
  const { standing, direct } = audience;
  if (direct) return standing === "allowed" ? "allowed" : "owner";
  if (standing !== "owner") return "member";
  return audience.sharedToolsOn ? "owner_shared_on" : "owner_shared";
}

/** Whether the audience's words are requests (the owner's, or an operator's in a direct chat); anyone else's reach the model as untrusted. */
export function trustedWords(audience: Pick<Audience, "standing" | "direct" | "sharedToolsOn">): boolean {
  return OWNER_READS.includes(trustRow(audience));
}

/** One line of the table: the rows that get a tool, and in which kinds of turn (all when absent). */
export interface ToolRule {
  rows: readonly TrustRow[];
  modes?: readonly TurnMode[];
}

const OWNER_READS: readonly TrustRow[] = ["owner", "owner_shared", "owner_shared_on"];
const OWNER_ACTS: readonly TrustRow[] = ["owner", "owner_shared_on"];
const EVERYONE: readonly TrustRow[] = TRUST_ROWS;

/** The table. */
export const TOOL_TABLE: Readonly<Record<string, ToolRule>> = {
  react: { rows: EVERYONE, modes: ["foreground"] },
  read_file: { rows: OWNER_READS },
  list_dir: { rows: OWNER_READS },
  search_files: { rows: OWNER_READS },
  write_file: { rows: OWNER_ACTS },
  edit_file: { rows: OWNER_ACTS },
  run_command: { rows: OWNER_ACTS },
  send_attachment: { rows: OWNER_ACTS },
  request_access: { rows: OWNER_ACTS, modes: ["foreground", "ultra_part", "voice"] },
  remember: { rows: EVERYONE },
  recall: { rows: EVERYONE },
  forget: { rows: EVERYONE },
  schedule: { rows: [...OWNER_ACTS, "allowed"] },
  list_jobs: { rows: EVERYONE },
  cancel_job: { rows: EVERYONE },
  use_skill: { rows: OWNER_READS },
  propose_skill: { rows: OWNER_ACTS },
};

/** Whether a tool of this name is offered to this audience. */
export function mayUse(name: string, audience: Audience): boolean {
  const rule = TOOL_TABLE[name];
  if (!rule) return false;
  if (rule.modes && !rule.modes.includes(audience.mode)) return false;
  return rule.rows.includes(trustRow(audience));
}

/** The tools of `candidates` this audience is offered: the one gate every turn's tools pass. */
export function offeredTools<T extends { spec: { name: string } }>(candidates: readonly T[], audience: Audience): T[] {
  return candidates.filter((tool) => mayUse(tool.spec.name, audience));
}
