/**
 * What `/sandbox` and button presses work with: the sandbox's stored state,
 * the confirmation codes, and the facts a change is judged by (the Fermix
 * home, the workspace, the user's home directory, the network default).
 * Built once by the composition root; the command and the press handler
 * only read and change it through here.
 */
import type { Telemetry } from "../kernel/telemetry.ts";
import { type GatewayChannel, type InboundMessage, isDirectChat } from "../message/index.ts";
import type { SandboxStore } from "../store/sandbox.ts";
import type { Answerer, Confirmations } from "./confirm.ts";
import type { Role } from "./trust.ts";

export interface SandboxControl {
  store: SandboxStore;
  confirmations: Confirmations;
  /** `[fermix_core.sandbox] network`, which applies until /sandbox network sets it. */
  networkDefault: boolean;
  fermixHome: string;
  workspace: string;
  /** `$HOME`: a grant outside it is a risky change. */
  homeDir: string;
  /** What runs commands here ("bubblewrap 0.8.0", "sandbox-exec"), or null: run_command is not offered. */
  backend: string | null;
  /** How to get a sandbox where there is none, for the status. */
  installHint: string;
  /** Blank this value in every log line from now on (an environment value set under a secret-looking name). */
  redact(value: string): void;
  telemetry: Telemetry;
}

/** The person answering a code from a message. */
export function answererOf(message: Pick<InboundMessage, "channel" | "chatId" | "senderId" | "direct">, role: Role | null, conversation: string): Answerer {
  return { channel: message.channel, senderId: message.senderId, role, conversation, direct: isDirectChat(message) };
}

/** Who made a change, as stored beside it. */
export function changedBy(channel: GatewayChannel, senderId: string): string {
  return `${channel}:${senderId}`;
}
