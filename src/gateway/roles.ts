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
 * `web_fetch` and `web_search` are the owner's acting tools: reading the web
 * is not reading the workspace, but a fetch goes out from the owner's
 * machine and network, and its URL (a search's query) can carry anything the
 * conversation holds to any server — in a shared chat another member's
 * words could steer it there. So they go with the tools that change and
 * send: the owner in a direct chat, or in a shared chat they switched on.
 *
 * MCP tools are named `<server>__<tool>` (src/agent/mcp/names.ts) and come
 * and go with their servers, so their line is a rule: the rows the server's
 * `roles` name in `[fermix_core.mcp.servers.<name>]` (default the owner's
 * direct chat only), and never in a shared chat where the owner has not
 * switched tools on. A name of a server that is not configured matches
 * nothing.
 *
 * A tool may also be the owner's alone (`ownerOnly`): the `owner` row, and the owner in it, not an
 * operator (the desktop: `computer`).
 *
 * A tool missing from the table is offered to no one: a new tool is
 * reachable only once its row is written here (and in docs/security.md).
 */
import { mcpServerOf } from "../agent/mcp/names.ts";
import type { McpRole } from "../config/schema.ts";
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

/**
 * One line of the table: the rows that get a tool, in which kinds of turn (all when absent), and
 * whether the row's audience must be the owner themself (`owner_only`: an operator by
 * `command_allowlist`, who reads the `owner` row in a direct chat, does not get it).
 */
export interface ToolRule {
  rows: readonly TrustRow[];
  modes?: readonly TurnMode[];
  /** The owner themself: an operator by `command_allowlist`, who reads the `owner` row in a direct chat, does not get it. */
  ownerOnly?: boolean;
  /** In a shared chat, only where the owner switched tools on (`/sandbox chat on`), whatever the row. */
  onlyWhereToolsOn?: boolean;
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
  web_fetch: { rows: OWNER_ACTS },
  web_search: { rows: OWNER_ACTS },
  // The owner's own desktop, driven live: in a conversation, where /pause and /stop reach it (not
  // background or scheduled work nobody watches, nor ultra parts, which would drive one screen at once).
  computer: { rows: ["owner"], modes: ["foreground"], ownerOnly: true },
};

/** The line for an MCP server's tools: the rows its `roles` name, and in a shared chat only where tools are on. */
export function mcpRule(roles: readonly McpRole[]): ToolRule {
  return { rows: TRUST_ROWS.filter((row) => (roles as readonly string[]).includes(row)), onlyWhereToolsOn: true };
}

/** What the table's rules read beyond a tool's name: each configured MCP server's `roles` (undefined: no such server). */
export interface RoleSources {
  mcpRoles?(server: string): readonly McpRole[] | undefined;
}

/** The line of the table for a tool name: a fixed tool's, or the rule of the MCP server it belongs to; undefined: nobody's. */
function ruleFor(name: string, sources: RoleSources = {}): ToolRule | undefined {
  const fixed = TOOL_TABLE[name];
  if (fixed) return fixed;
  const server = mcpServerOf(name);
  const roles = server === undefined ? undefined : sources.mcpRoles?.(server);
  return roles ? mcpRule(roles) : undefined;
}

/** Whether a tool of this name is offered to this audience. */
export function mayUse(name: string, audience: Audience, sources: RoleSources = {}): boolean {
  const rule = ruleFor(name, sources);
  if (!rule) return false;
  if (rule.modes && !rule.modes.includes(audience.mode)) return false;
  if (rule.onlyWhereToolsOn && !audience.direct && !audience.sharedToolsOn) return false;
  if (rule.ownerOnly && audience.standing !== "owner") return false;
  return rule.rows.includes(trustRow(audience));
}

/** The tools of `candidates` this audience is offered: the one gate every turn's tools pass. */
export function offeredTools<T extends { spec: { name: string } }>(candidates: readonly T[], audience: Audience, sources: RoleSources = {}): T[] {
  return candidates.filter((tool) => mayUse(tool.spec.name, audience, sources));
}
