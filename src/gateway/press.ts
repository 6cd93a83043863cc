/**
 * A tap on one of our buttons, from any button channel: one call from the
 * adapter (`AdapterContext.press`) with the press as the platform delivered
 * it. The presser is authorized as a message from them in that chat would
 * be, and the press answers its code on the same path as `/confirm` and
 * `/sandbox deny` — single-use, time-limited, origin-bound, owner-only. It
 * never waits behind a turn: the turn waiting for this very answer is
 * usually the one running in that conversation.
 */
import type { Config } from "../config/schema.ts";
import type { Logger } from "../kernel/log.ts";
import { type ButtonPress, conversationKey, isDirectChat, type PressResult } from "../message/index.ts";
import type { ChannelLookup } from "./channel-facts.ts";
import { parseButtonData } from "./confirm.ts";
import type { SandboxControl } from "./sandbox-control.ts";
import { roleFor } from "./trust.ts";

export interface PressDeps {
  config: Config;
  /** Each channel's profile: who is authorized on it. */
  profiles: ChannelLookup;
  sandbox: SandboxControl | null;
  log: Logger;
}

/** Answer a press: what the presser is told, and whether the buttons have served. */
export function answerPress(press: ButtonPress, deps: PressDeps): PressResult {
  const parsed = parseButtonData(press.data);
  if (!parsed || !deps.sandbox) return { ok: false, done: true, text: "This button does nothing any more." };
  const role = roleFor(deps.config, deps.profiles(press.channel), press.senderId, press.senderAliases);
  const who = {
    channel: press.channel,
    senderId: press.senderId,
    role,
    conversation: conversationKey(press),
    direct: isDirectChat(press),
  };
  const { confirmations, telemetry } = deps.sandbox;
  const result = parsed.decision === "confirm" ? confirmations.confirm(parsed.token, who) : confirmations.deny(parsed.token, who);
  deps.log.info("confirmation button pressed", {
    channel: press.channel,
    sender: press.senderId,
    decision: parsed.decision,
    ok: result.ok,
    reply: result.text,
  });
  telemetry.emit("sandbox.decision", {
    measurements: { count: 1 },
    metadata: {
      channel: press.channel,
      kind: result.kind ?? "access",
      outcome: result.ok ? (parsed.decision === "confirm" ? "confirmed" : "denied") : "refused",
      via: "button",
    },
  });
  return { ok: result.ok, done: result.done, text: result.text };
}
