/**
 * `/sandbox` (aliases `/grant`, `/revoke`, `/confirm`): the owner inspects
 * and changes what the agent's workspace tools may reach — path grants, the
 * command environment's allow/deny/set rules, presets, the network — and
 * answers confirmation codes. A risky change (any read-write grant, a grant
 * outside the home directory, the network on, passing or setting a
 * secret-looking variable) is only proposed: the reply carries a
 * `/confirm TOKEN` line that only its proposer can send, in the same
 * conversation, within the code's life, once. It runs at once, never queued
 * behind a turn: a turn waiting for an access decision is answered from the
 * same conversation.
 *
 * It declares the slice of the command context it uses instead of importing
 * the command list's types, so that list can import this file without a cycle.
 */
import { grantablePath, within } from "../../agent/sandbox/paths.ts";
import { activePresets, BASE_ALLOW, effectiveNetwork, isEnvName, isSecretName } from "../../agent/sandbox/policy.ts";
import { findPreset, PRESETS } from "../../agent/sandbox/presets.ts";
import { describeError } from "../../kernel/errors.ts";
import { type InboundMessage, isDirectChat } from "../../message/index.ts";
import type { GrantMode } from "../../store/sandbox.ts";
import type { Answerer } from "../confirm.ts";
import { answererOf, applyChange, changedBy, type SandboxChange, type SandboxControl } from "../sandbox-control.ts";
import type { Role } from "../trust.ts";

/** What `/sandbox` needs of the command context. */
export interface SandboxCommandContext {
  message: InboundMessage;
  role: Role;
  args: string;
  /** The name the command was sent under: sandbox, grant, revoke or confirm. */
  invokedAs?: string;
  conversation: string;
  reply(markdown: string): Promise<void>;
  sandbox?: SandboxControl | null;
}

export type SandboxRequest =
  | { kind: "show" }
  | { kind: "grant"; path: string; mode: GrantMode }
  | { kind: "revoke"; path: string }
  | { kind: "env"; rule: "allow" | "deny"; name: string }
  | { kind: "env-set"; name: string; value: string }
  | { kind: "env-clear"; name: string }
  | { kind: "presets" }
  | { kind: "preset"; on: boolean; name: string }
  | { kind: "network"; on: boolean }
  | { kind: "chat"; on: boolean }
  | { kind: "confirm"; token: string }
  | { kind: "deny"; token: string }
  | { kind: "usage"; problem?: string };

export const SANDBOX_USAGE = [
  "`/sandbox` — show grants, environment, presets, network and pending requests",
  "`/sandbox grant PATH [ro|rw]` (or `/grant`) — let the tools reach PATH, read-only unless rw",
  "`/sandbox revoke PATH` (or `/revoke`)",
  "`/sandbox env allow NAME` · `env deny NAME` · `env set NAME=VALUE` · `env clear NAME`",
  "`/sandbox preset on|off NAME` · `/sandbox preset` lists them",
  "`/sandbox network on|off`",
  "`/sandbox chat on|off` — in a shared chat: let your requests there change files, run commands and send things",
  "`/confirm TOKEN` · `/sandbox deny TOKEN` — answer a code",
].join("\n");

const unquote = (text: string) => text.trim().replace(/^(["'])(.*)\1$/, "$2");
const onOff = (word: string | undefined): boolean | undefined => (word === "on" ? true : word === "off" ? false : undefined);

/** Parse the words after the command (pure: chat text never makes it throw). */
export function parseSandboxArgs(invokedAs: string, args: string): SandboxRequest {
  const text = (invokedAs === "sandbox" ? args : `${invokedAs} ${args}`).trim();
  if (text === "" || text === "show" || text === "status") return { kind: "show" };
  const [verb = "", ...rest] = text.split(/\s+/);
  const tail = text.slice(verb.length).trim();
  switch (verb.toLowerCase()) {
    case "grant": {
      const match = /^(.*?)(?:\s+(ro|rw|read|write))?$/i.exec(tail);
      const path = unquote(match?.[1] ?? "");
      if (path === "") return { kind: "usage", problem: "grant needs a path: `/sandbox grant PATH [ro|rw]`" };
      const word = match?.[2]?.toLowerCase();
      return { kind: "grant", path, mode: word === "rw" || word === "write" ? "rw" : "ro" };
    }
    case "revoke": {
      const path = unquote(tail);
      return path === "" ? { kind: "usage", problem: "revoke needs a path: `/sandbox revoke PATH`" } : { kind: "revoke", path };
    }
    case "env": {
      const [rule = "", ...words] = rest;
      const spec = tail.slice(rule.length).trim();
      const kind = rule.toLowerCase();
      if (kind === "set") {
        const match = /^([^\s=]+)(?:\s*=\s*|\s+)([\s\S]*)$/.exec(spec);
        if (!match || !isEnvName(match[1]!)) return { kind: "usage", problem: "env set needs a name and a value: `/sandbox env set NAME=VALUE`" };
        return { kind: "env-set", name: match[1]!, value: unquote(match[2]!) };
      }
      const name = words[0] ?? "";
      if ((kind === "allow" || kind === "deny" || kind === "clear") && words.length === 1 && isEnvName(name)) {
        return kind === "clear" ? { kind: "env-clear", name } : { kind: "env", rule: kind, name };
      }
      return { kind: "usage", problem: "env takes allow NAME, deny NAME, set NAME=VALUE or clear NAME" };
    }
    case "preset":
    case "presets": {
      if (rest.length === 0) return { kind: "presets" };
      const on = onOff(rest[0]?.toLowerCase());
      if (on === undefined || rest.length !== 2) return { kind: "usage", problem: "preset takes on|off and a name: `/sandbox preset on git`" };
      return { kind: "preset", on, name: rest[1]!.toLowerCase() };
    }
    case "network": {
      const on = onOff(rest[0]?.toLowerCase());
      return on === undefined || rest.length !== 1 ? { kind: "usage", problem: "network takes on or off" } : { kind: "network", on };
    }
    case "chat": {
      const on = onOff(rest[0]?.toLowerCase());
      return on === undefined || rest.length !== 1 ? { kind: "usage", problem: "chat takes on or off" } : { kind: "chat", on };
    }
    case "confirm":
    case "deny": {
      const token = rest.join("");
      if (token === "")
        return { kind: "usage", problem: `${verb.toLowerCase()} needs the code: \`/${verb.toLowerCase() === "confirm" ? "confirm" : "sandbox deny"} TOKEN\`` };
      return { kind: verb.toLowerCase() as "confirm" | "deny", token };
    }
  }
  return { kind: "usage", problem: `unknown subcommand "${verb.slice(0, 40)}"` };
}

/** Why a change is risky (confirmation needed), or null when it may apply at once. */
export function riskOf(request: SandboxRequest, homeDir: string, resolvedPath?: string): string | null {
  switch (request.kind) {
    case "grant": {
      const reasons: string[] = [];
      if (request.mode === "rw") reasons.push("it lets the assistant change files there");
      if (resolvedPath !== undefined && !within(homeDir, resolvedPath)) reasons.push(`it is outside your home directory (${homeDir})`);
      return reasons.length > 0 ? reasons.join(", and ") : null;
    }
    case "network":
      return request.on ? "commands could reach the network: download, upload, call services" : null;
    case "chat":
      return request.on
        ? "others in this chat write into the same conversation, and the assistant could change files, run commands and send things here"
        : null;
    case "env":
      return request.rule === "allow" && isSecretName(request.name) ? `${request.name} looks like a credential: commands would see it` : null;
    case "env-set":
      return isSecretName(request.name) ? `${request.name} looks like a credential: commands would see it` : null;
    case "preset": {
      const preset = findPreset(request.name);
      return request.on && preset?.network ? `the ${preset.name} preset turns the network on for commands` : null;
    }
    default:
      return null;
  }
}

const modeWords = (mode: GrantMode) => (mode === "rw" ? "read-write" : "read-only");
const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace("T", " ");

/** The command, in the shape of the command list's entries. */
export const SANDBOX_COMMAND = {
  name: "sandbox",
  aliases: ["grant", "revoke", "confirm"] as readonly string[],
  usage: "/sandbox",
  summary: "see and change what the assistant's workspace tools may reach; /confirm answers a code",
  operator: true,
  immediate: true,
  async run(ctx: SandboxCommandContext): Promise<void> {
    const control = ctx.sandbox;
    if (!control) {
      await ctx.reply("The workspace sandbox is not available here.");
      return;
    }
    const request = parseSandboxArgs(ctx.invokedAs ?? "sandbox", ctx.args);
    await ctx.reply(await handle(request, ctx, control));
  },
};

async function handle(request: SandboxRequest, ctx: SandboxCommandContext, control: SandboxControl): Promise<string> {
  const who = answererOf(ctx.message, ctx.role, ctx.conversation);
  switch (request.kind) {
    case "show":
      return status(control, who, ctx.message);
    case "usage":
      return `${request.problem ? `${request.problem}.\n\n` : ""}**/sandbox**\n${SANDBOX_USAGE}`;
    case "presets":
      return presetList(control);
    case "confirm":
    case "deny": {
      const result = request.kind === "confirm" ? control.confirmations.confirm(request.token, who) : control.confirmations.deny(request.token, who);
      control.telemetry.emit("sandbox.decision", {
        measurements: { count: 1 },
        metadata: {
          channel: ctx.message.channel,
          kind: result.kind ?? "proposal",
          outcome: result.ok ? (request.kind === "confirm" ? "confirmed" : "denied") : "refused",
          via: "text",
        },
      });
      return result.text;
    }
    case "revoke": {
      const path = grantedPathFor(control, request.path);
      if (!path) return `There is no grant for ${request.path}. \`/sandbox\` lists the grants.`;
      control.store.revoke(path);
      return `Revoked: the tools no longer reach ${path}.`;
    }
    case "grant": {
      const grantable = grantablePath(request.path, control.homeDir, control);
      if ("refused" in grantable) return `Not granted: ${grantable.refused}.`;
      const change: SandboxChange = { kind: "grant", path: grantable.path, mode: request.mode };
      return applyOrPropose(riskOf(request, control.homeDir, grantable.path), `${modeWords(request.mode)} access to ${grantable.path}`, change, ctx, control);
    }
    case "env":
      return applyOrPropose(riskOf(request, control.homeDir), `${request.rule} ${request.name} in the command environment`, request, ctx, control);
    case "env-set":
      return applyOrPropose(riskOf(request, control.homeDir), `set ${request.name} for commands`, request, ctx, control);
    case "env-clear":
      return control.store.clearEnv(request.name) ? `Dropped the rule for ${request.name}.` : `There is no rule for ${request.name}.`;
    case "preset": {
      const preset = findPreset(request.name);
      if (!preset) return `There is no preset "${request.name}". Presets: ${PRESETS.map((p) => p.name).join(", ")}.`;
      const change: SandboxChange = { kind: "preset", on: request.on, name: preset.name };
      return applyOrPropose(riskOf(request, control.homeDir), `the ${preset.name} preset ${request.on ? "on" : "off"}`, change, ctx, control);
    }
    case "network":
      return applyOrPropose(riskOf(request, control.homeDir), `the network ${request.on ? "on" : "off"} for commands`, request, ctx, control);
    case "chat": {
      if (isDirectChat(ctx.message)) return "This is a direct chat: your requests here have every tool already. `/sandbox chat` is for shared chats.";
      const change: SandboxChange = { kind: "shared-chat", channel: ctx.message.channel, chatId: ctx.message.chatId, on: request.on };
      return applyOrPropose(
        riskOf(request, control.homeDir),
        `changing and sending tools ${request.on ? "on" : "off"} in this shared chat`,
        change,
        ctx,
        control,
      );
    }
  }
}

/**
 * Apply a safe change now; open a code for a risky one and say how to
 * confirm it. The code keeps the change itself, so it can be confirmed
 * after a restart too.
 */
function applyOrPropose(risk: string | null, summary: string, change: SandboxChange, ctx: SandboxCommandContext, control: SandboxControl): string {
  const by = changedBy(ctx.message.channel, ctx.message.senderId);
  if (risk === null) {
    try {
      return applyChange(change, control, by);
    } catch (error) {
      return describeError(error);
    }
  }
  const token = control.confirmations.propose(
    { channel: ctx.message.channel, senderId: ctx.message.senderId, conversation: ctx.conversation },
    summary,
    change,
  );
  return `⚠️ **Risky change**: ${summary} — ${risk}.\n\nTo apply it, send \`/confirm ${token}\` here within ${control.confirmations.ttlWords}. Only you can, only in this conversation, once.`;
}

/** The stored grant a `/revoke PATH` means: as stored, or as the path resolves now. */
function grantedPathFor(control: SandboxControl, path: string): string | undefined {
  const grants = control.store.grants();
  const exact = grants.find((g) => g.path === path);
  if (exact) return exact.path;
  const resolved = grantablePath(path, control.homeDir, control);
  return "path" in resolved ? grants.find((g) => g.path === resolved.path)?.path : undefined;
}

function status(control: SandboxControl, who: Answerer, message: InboundMessage): string {
  const state = control.store.state();
  const network = effectiveNetwork(state, control.networkDefault);
  const chosen = state.network ?? control.networkDefault;
  const needing = activePresets(state)
    .filter((p) => p.network)
    .map((p) => p.name);
  const networkWhy =
    network && !chosen ? `the ${needing.join(", ")} preset needs it` : state.network === undefined ? "the config default" : "set with /sandbox network";
  const lines = [
    "**Sandbox**",
    `- Commands: ${control.backend ? `run in ${control.backend}` : `not available (no OS sandbox: ${control.installHint})`}`,
    `- Workspace: \`${control.workspace}\` (read-write; SOUL.md and skills/ read-only)`,
    `- Network for commands: ${network ? "on" : "off"} (${networkWhy})`,
    `- This chat: ${chatLine(control, message)}`,
    "",
    "**Grants**",
    ...(state.grants.length === 0 ? ["- none"] : state.grants.map((g) => `- \`${g.path}\` ${modeWords(g.mode)} — by ${g.grantedBy}, ${when(g.grantedAt)} UTC`)),
    "",
    "**Command environment**",
    `- Always: PATH, HOME (the workspace), TMPDIR; passed through when set: ${BASE_ALLOW.join(", ")}`,
    ...(state.env.length === 0
      ? []
      : state.env.map((r) =>
          r.rule === "set"
            ? `- set ${r.name}=${isSecretName(r.name) ? "••••••" : JSON.stringify(r.value ?? "")}`
            : `- ${r.rule === "allow" ? "passed through" : "kept out"}: ${r.name}`,
        )),
    "",
    `**Presets**: ${PRESETS.map((p) => `${p.name} (${state.presets.includes(p.name) ? "on" : "off"})`).join(", ")}`,
  ];
  const pending = control.confirmations.pendingFor(who);
  if (pending.length > 0) {
    lines.push("", "**Waiting for your answer**");
    for (const code of pending) {
      const left = Math.max(1, Math.round((code.expiresAt - Date.now()) / 60_000));
      const what = code.kind === "access" ? `the assistant asks for ${code.summary}` : `proposed: ${code.summary}`;
      const answer = code.kind === "proposal" || who.direct ? `\`/confirm ${code.token}\`` : "the buttons, or `/sandbox` in a direct message";
      lines.push(`- ${what} — answer with ${answer} (about ${left} min left)`);
    }
  }
  return lines.join("\n");
}

/** Whether the owner's requests in this chat get the tools that change or send anything. */
function chatLine(control: SandboxControl, message: InboundMessage): string {
  if (isDirectChat(message)) return "direct — every tool";
  return control.store.sharedToolsOn(message.channel, message.chatId)
    ? "shared — changing and sending tools on (`/sandbox chat off`)"
    : "shared — only reading tools (`/sandbox chat on` to change that)";
}

function presetList(control: SandboxControl): string {
  const on = control.store.presets();
  return ["**Presets** (`/sandbox preset on|off NAME`)", ...PRESETS.map((p) => `- ${p.name} (${on.includes(p.name) ? "on" : "off"}): ${p.summary}`)].join("\n");
}
