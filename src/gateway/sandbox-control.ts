/**
 * What `/sandbox` and button presses work with: the sandbox's stored state,
 * the confirmation codes, and the facts a change is judged by (the Fermix
 * home, the workspace, the user's home directory, the network default).
 * Built once by the composition root; the command and the press handler
 * only read and change it through here. A change is data (`SandboxChange`),
 * so a proposed one can wait in a stored confirmation code and be applied
 * by `applyChange` when it is confirmed, after a restart too.
 */
import { grantablePath } from "../agent/sandbox/paths.ts";
import { effectiveNetwork, isSecretName } from "../agent/sandbox/policy.ts";
import type { Telemetry } from "../kernel/telemetry.ts";
import { type GatewayChannel, type InboundMessage, isDirectChat } from "../message/index.ts";
import type { GrantMode, SandboxStore } from "../store/sandbox.ts";
import type { Answerer, Confirmations } from "./confirm.ts";
import type { Role } from "./trust.ts";

/** One change to the sandbox, as a `/sandbox` command or an access request asks for it. */
export type SandboxChange =
  | { kind: "grant"; path: string; mode: GrantMode }
  | { kind: "env"; rule: "allow" | "deny"; name: string }
  | { kind: "env-set"; name: string; value: string }
  | { kind: "preset"; on: boolean; name: string }
  | { kind: "network"; on: boolean }
  | { kind: "shared-chat"; channel: GatewayChannel; chatId: string; on: boolean }
  /** A go-ahead a waiting turn asked the owner for, which changes nothing (a provider's safety check on a desktop action). */
  | { kind: "approve" };

export interface SandboxControl {
  store: SandboxStore;
  confirmations: Confirmations<SandboxChange>;
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

const modeWords = (mode: GrantMode) => (mode === "rw" ? "read-write" : "read-only");

/**
 * Make a change, recorded as made by `by`; returns what to tell the owner.
 * Throws when it is no longer possible (a granted path that now resolves
 * somewhere refused).
 */
export function applyChange(change: SandboxChange, control: SandboxControl, by: string): string {
  const { store } = control;
  switch (change.kind) {
    case "grant": {
      const grantable = grantablePath(change.path, control.homeDir, control);
      if ("refused" in grantable) throw new Error(`Not granted: ${grantable.refused}.`);
      store.grant(grantable.path, change.mode, by);
      return `Granted: ${modeWords(change.mode)} access to ${grantable.path}.`;
    }
    case "env":
      store.setEnv(change.name, change.rule, by);
      return change.rule === "allow" ? `Commands now get ${change.name} from the daemon's environment (when it is set).` : `Commands never get ${change.name}.`;
    case "env-set": {
      const secret = isSecretName(change.name);
      if (secret) control.redact(change.value);
      store.setEnv(change.name, "set", by, change.value);
      return `Commands now get ${change.name} set${secret ? " (its value is kept out of logs)" : ` to "${change.value}"`}.`;
    }
    case "preset": {
      const changed = store.setPreset(change.name, change.on, by);
      return changed ? `Preset ${change.name} is ${change.on ? "on" : "off"}.` : `Preset ${change.name} was already ${change.on ? "on" : "off"}.`;
    }
    case "shared-chat": {
      const changed = store.setSharedTools(change.channel, change.chatId, change.on, by);
      const now = change.on
        ? "On: in this chat my owner's requests may now change files, run commands and send things."
        : "Off: in this chat I only read and answer now; nothing is changed or sent on anyone's word.";
      return changed ? now : `That was already ${change.on ? "on" : "off"} here.`;
    }
    case "approve":
      return "Approved: the assistant goes on.";
    case "network": {
      store.setNetwork(change.on, by);
      const still = !change.on && effectiveNetwork(store.state(), control.networkDefault);
      return `Network ${change.on ? "on" : "off"} for commands.${still ? " (A preset that is on still needs it: switch it off too.)" : ""}`;
    }
  }
}
