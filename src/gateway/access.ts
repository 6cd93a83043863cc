/**
 * The agent's access requests, answered by the owner: a code is opened on
 * the confirmation path (src/gateway/confirm.ts), the prompt goes to the
 * conversation whose turn asked, and the turn waits for the answer, the
 * timeout, or its own stop. On a button channel the prompt carries Approve
 * and Deny; in a shared chat there the code itself is withheld (answer by
 * button, from a direct message, or from the command line, where `/sandbox`
 * lists it). Elsewhere the prompt shows the `/confirm TOKEN` line. A surface
 * with a permission dialog of its own (an editor over ACP) asks there instead.
 * The code keeps the grant as data (`grantAccess` makes it), so the owner may
 * answer from another process; a request outlives neither its turn nor the
 * process that waits for it.
 */

import type { ToolContext } from "../agent/tools/types.ts";
import type { AccessBroker, AccessDecision, AccessRequest } from "../agent/tools/workspace/index.ts";
import type { Logger } from "../kernel/log.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import type { GrantMode, SandboxStore } from "../store/sandbox.ts";
import { buttonData, type CodeRecord, type Confirmations, durationWords } from "./confirm.ts";
import { ShutdownInterrupt } from "./queue.ts";
import type { SandboxChange } from "./sandbox-control.ts";

export interface AccessDeskDeps {
  confirmations: Confirmations<SandboxChange>;
  store: SandboxStore;
  /** How long a turn waits for the answer (access_request_timeout_seconds), ms. */
  timeoutMs: number;
  log: Logger;
  telemetry: Telemetry;
}

const modeWords = (mode: GrantMode) => (mode === "rw" ? "read-write" : "read-only");

/** Make the grant a confirmed access request asked for, in whichever process the answer arrived; returns what the owner is told. */
export function grantAccess(code: CodeRecord<SandboxChange>, deps: { store: SandboxStore; log: Logger }): string {
  const change = code.grants;
  // A go-ahead changes nothing: the turn that waits for it goes on (a provider's safety check on a desktop action).
  if (change.kind === "approve") return `Approved: ${code.summary}. The assistant goes on.`;
  if (change.kind !== "grant") throw new Error("That request asked for nothing that can be granted.");
  const who = `${code.channel}:${code.senderId}`;
  deps.store.grant(change.path, change.mode, `${who} (asked by the assistant)`);
  deps.log.info("access granted", { channel: code.channel, path: change.path, mode: change.mode, by: who });
  return `Approved: ${code.summary}. The assistant goes on.`;
}

/** The prompt's text; `token` is left out where the code is withheld. */
export function accessPrompt(request: AccessRequest, token: string | null, buttons: boolean, waitWords: string): string {
  const lines = [`🔐 **Access request**: the assistant asks for ${modeWords(request.mode)} access to \`${request.path}\`.`, "", `Why: ${request.reason}`, ""];
  if (token === null) {
    lines.push(
      `Approve or deny with the buttons below — or from a direct message to me or the command line, where \`/sandbox\` shows the code. It waits ${waitWords}.`,
    );
  } else {
    lines.push(
      `${buttons ? "Tap Approve, or send" : "To approve, send"} \`/confirm ${token}\` (to refuse: \`/sandbox deny ${token}\`). It waits ${waitWords}.`,
    );
  }
  return lines.join("\n");
}

/** A go-ahead the owner is asked for, which grants nothing: a provider's safety check on a desktop action. */
export interface ApprovalAsk {
  /** One line: what waits for the owner. */
  summary: string;
  /** Why, in the provider's words. */
  reason: string;
  /** The turn's chat is one-to-one with its owner: the prompt may show its code. */
  direct: boolean;
}

/** The prompt of a go-ahead; `token` is left out where the code is withheld. */
export function approvalPrompt(ask: ApprovalAsk, token: string | null, buttons: boolean, waitWords: string): string {
  const lines = [`⚠️ **Safety check**: ${ask.summary}.`, "", ask.reason, "", "The assistant waits for you before it goes on."];
  if (token === null) lines.push(`Approve or deny with the buttons below — or from a direct message to me or the command line. It waits ${waitWords}.`);
  else
    lines.push(
      `${buttons ? "Tap Approve, or send" : "To approve, send"} \`/confirm ${token}\` (to refuse: \`/sandbox deny ${token}\`). It waits ${waitWords}.`,
    );
  return lines.join("\n");
}

export class AccessDesk implements AccessBroker {
  constructor(private readonly deps: AccessDeskDeps) {}

  async request(request: AccessRequest, ctx: ToolContext): Promise<AccessDecision> {
    if (ctx.port.askPermission) return this.askEditor(request, ctx, ctx.port.askPermission.bind(ctx.port));
    const summary = `${modeWords(request.mode)} access to ${request.path}`;
    this.deps.log.info("access requested", { channel: ctx.channel, conversation: ctx.conversation, path: request.path, mode: request.mode });
    const decision = await this.wait(ctx, summary, { kind: "grant", path: request.path, mode: request.mode }, request.direct, (token, buttons) =>
      accessPrompt(request, token, buttons, this.waitWords()),
    );
    this.deps.log.info("access request answered", { channel: ctx.channel, path: request.path, decision });
    return decision;
  }

  /** Ask the owner for a go-ahead and wait for it, as for an access request; nothing is granted by it. */
  async approve(ask: ApprovalAsk, ctx: ToolContext): Promise<AccessDecision> {
    if (ctx.port.askPermission) {
      const timeout = AbortSignal.timeout(this.deps.timeoutMs);
      const answer = await ctx.port.askPermission(
        { title: `Approve: ${ask.summary}?`, reason: ask.reason, path: "", kind: "edit" },
        AbortSignal.any([timeout, ctx.signal]),
      );
      if (ctx.signal.aborted) throw ctx.signal.reason ?? new DOMException("stopped", "AbortError");
      return answer === "allow" ? "granted" : answer === "deny" ? "denied" : timeout.aborted ? "timed_out" : "denied";
    }
    const decision = await this.wait(ctx, ask.summary, { kind: "approve" }, ask.direct, (token, buttons) =>
      approvalPrompt(ask, token, buttons, this.waitWords()),
    );
    this.deps.log.info("approval answered", { channel: ctx.channel, what: ask.summary, decision });
    return decision;
  }

  /** Open a code for `grants`, show the prompt, and wait for the answer, the timeout, or the turn's stop. */
  private async wait(
    ctx: ToolContext,
    summary: string,
    grants: SandboxChange,
    direct: boolean,
    promptFor: (token: string | null, buttons: boolean) => string,
  ): Promise<AccessDecision> {
    const { confirmations, log, telemetry } = this.deps;
    const code = confirmations.openAccess(
      { channel: ctx.channel, senderId: ctx.senderId, conversation: ctx.conversation },
      summary,
      this.deps.timeoutMs,
      grants,
    );
    const buttons = ctx.port.capabilities.buttons === true;
    const withheld = buttons && !direct;
    const prompt = promptFor(withheld ? null : code.token, buttons);
    log.info("waiting for the owner", { channel: ctx.channel, conversation: ctx.conversation, what: summary, code_shown: !withheld });
    let onStop!: () => void;
    const stopped = new Promise<never>((_, reject) => {
      onStop = () => {
        code.withdraw(ctx.signal.reason instanceof ShutdownInterrupt ? "shutdown" : "stopped");
        reject(ctx.signal.reason ?? new DOMException("stopped", "AbortError"));
      };
    });
    stopped.catch(() => {});
    if (ctx.signal.aborted) onStop();
    else ctx.signal.addEventListener("abort", onStop, { once: true });
    try {
      await ctx.say(
        prompt,
        buttons
          ? [
              { label: "✅ Approve", data: buttonData("confirm", code.token) },
              { label: "✖️ Deny", data: buttonData("deny", code.token) },
            ]
          : undefined,
      );
      const state = await Promise.race([code.decided, stopped]);
      const decision: AccessDecision = state === "confirmed" ? "granted" : state === "denied" ? "denied" : "timed_out";
      if (decision === "timed_out") {
        telemetry.emit("sandbox.decision", {
          measurements: { count: 1 },
          metadata: { channel: ctx.channel, kind: "access", outcome: "timed_out", via: "timeout" },
        });
      }
      return decision;
    } finally {
      ctx.signal.removeEventListener("abort", onStop);
      code.withdraw();
    }
  }

  /** A surface with its own permission dialog (an editor over ACP) asks its user there, for as long as a code would wait. */
  private async askEditor(request: AccessRequest, ctx: ToolContext, ask: NonNullable<ToolContext["port"]["askPermission"]>): Promise<AccessDecision> {
    const { store, log, telemetry } = this.deps;
    const timeout = AbortSignal.timeout(this.deps.timeoutMs);
    const answer = await ask(
      {
        title: `Allow ${modeWords(request.mode)} access to ${request.path}?`,
        reason: request.reason,
        path: request.path,
        kind: request.mode === "rw" ? "edit" : "read",
      },
      AbortSignal.any([timeout, ctx.signal]),
    );
    if (ctx.signal.aborted) throw ctx.signal.reason ?? new DOMException("stopped", "AbortError");
    const decision: AccessDecision = answer === "allow" ? "granted" : answer === "deny" ? "denied" : timeout.aborted ? "timed_out" : "denied";
    if (decision === "granted") store.grant(request.path, request.mode, `${ctx.channel}:${ctx.senderId} (asked by the assistant)`);
    const outcome = decision === "granted" ? "confirmed" : decision === "denied" ? "denied" : "timed_out";
    telemetry.emit("sandbox.decision", {
      measurements: { count: 1 },
      metadata: { channel: ctx.channel, kind: "access", outcome, via: decision === "timed_out" ? "timeout" : "editor" },
    });
    log.info("access request answered in the editor", { channel: ctx.channel, path: request.path, decision });
    return decision;
  }

  private waitWords(): string {
    return durationWords(this.deps.timeoutMs);
  }
}
