/**
 * `/pause` and `/resume`: the owner takes the desktop back and hands it
 * over again (docs/computer-use.md). Both run at once, never behind a turn:
 * `/pause` must reach the desktop while the turn that drives it runs. They
 * are the owner's alone — an operator by `command_allowlist` passes the
 * operator gate, not this one. `/pause` keeps the session and refuses every
 * further action (the turn that was using it ends after its next one); the
 * owner is sent a screenshot of where things stand. `/resume` lets actions
 * through again and starts nothing by itself. `/stop` (./index.ts) tears
 * the session down; `/tasks` lists it.
 */
import type { ComputerDesk, DeskStatus } from "../../agent/computer/desk.ts";
import type { Standing } from "../trust.ts";

/** What the commands use of the desktop. */
export type DesktopControl = Pick<ComputerDesk, "status" | "pause" | "resume" | "stop" | "screenshot">;

/** What `/pause` and `/resume` need of the command context. */
export interface DesktopCommandContext {
  /** Where the sender stands: only the owner may pause or resume. */
  standing: Standing;
  desk?: DesktopControl | null;
  reply(markdown: string): Promise<void>;
  /** Send the owner a screenshot as a photo in this conversation (where the channel takes files). */
  sendScreenshot(png: Uint8Array, caption: string): Promise<void>;
}

export const NO_SESSION = "No desktop session is running.";

/** The refusal for anyone but the owner, or null for the owner. */
export function notOwner(ctx: Pick<DesktopCommandContext, "standing">, command: string): string | null {
  return ctx.standing === "owner" ? null : `/${command} is for the owner of this assistant: the desktop is theirs alone.`;
}

/** One line on the desktop for /tasks. */
export function describeDesk(status: DeskStatus, now: number): string {
  const minutes = Math.floor((now - status.startedAt) / 60_000);
  const age = minutes < 1 ? "less than a minute" : `${minutes} min`;
  return `- ${status.state === "paused" ? "⏸ paused" : "running"} on display ${status.display} (${status.kind}) for ${age}, ${status.actions} action${status.actions === 1 ? "" : "s"}`;
}

export const PAUSE_COMMAND = {
  name: "pause",
  aliases: [] as readonly string[],
  usage: "/pause",
  summary: "hand the desktop back to you: the session stays and refuses every action until /resume",
  operator: true,
  immediate: true,
  async run(ctx: DesktopCommandContext): Promise<void> {
    const refusal = notOwner(ctx, "pause");
    if (refusal) return ctx.reply(refusal);
    const desk = ctx.desk;
    const result = desk?.pause() ?? "none";
    if (result === "none") return ctx.reply(NO_SESSION);
    if (result === "already") return ctx.reply("The desktop is already paused. /resume hands it back to the assistant; /stop closes it.");
    await ctx.reply(
      "⏸ Paused: the desktop is yours. The session stays as it is and the assistant's actions are refused until you send /resume (/stop closes it).",
    );
    const png = await desk!.screenshot();
    if (png) await ctx.sendScreenshot(png, "⏸ The desktop as you paused it.");
  },
};

export const RESUME_COMMAND = {
  name: "resume",
  aliases: [] as readonly string[],
  usage: "/resume",
  summary: "let the assistant use the paused desktop again (it does not pick the task back up: tell it what to do next)",
  operator: true,
  immediate: true,
  async run(ctx: DesktopCommandContext): Promise<void> {
    const refusal = notOwner(ctx, "resume");
    if (refusal) return ctx.reply(refusal);
    const result = ctx.desk?.resume() ?? "none";
    if (result === "none") return ctx.reply(NO_SESSION);
    if (result === "not_paused") return ctx.reply("The desktop is not paused.");
    await ctx.reply("▶️ Resumed: the assistant may use the desktop again. It does not pick the task back up on its own: tell me what to do next.");
  },
};
