/**
 * What the user is told when a turn fails: one short message per class of
 * fault, the same for every kind of turn (a conversation turn, `/ultra`,
 * `/background` work, a scheduled job's run) — punctuated once, without
 * hosts, URLs or the upstream's own words, which go to the log where an
 * operator reads them. Delivery has its own notices for what it could not send.
 */
import type { ProviderFault } from "../../agent/providers/types.ts";

/** Every way a turn can fail that the user is told about: the provider's classes, and the engine's own. */
export type TurnFaultClass = ProviderFault | "no_provider" | "restarting" | "internal" | "empty";

export const FAULT_MESSAGES: Readonly<Record<TurnFaultClass, string>> = {
  unreachable: "⚠️ I couldn't reach the model provider. Please try again in a moment.",
  auth: "⚠️ The model provider refused the key. Please run `fermix doctor` on the machine running Fermix.",
  quota: "⚠️ The model provider account is out of quota. Please check its plan or billing, then try again.",
  rate_limited: "⚠️ The model provider is limiting how fast I can ask. Please try again in a minute.",
  server: "⚠️ The model provider had an error on its side. Please try again in a moment.",
  timeout: "⚠️ The model took too long to start answering. Please try again.",
  cut_off: "⚠️ The answer was cut off before it finished. Please try again.",
  rejected: "⚠️ The model provider refused the request. Please run `fermix doctor` on the machine running Fermix.",
  no_provider: "No model provider is configured yet — run `fermix setup` on the machine running Fermix.",
  restarting: "The assistant is restarting (restart in progress) — please send that again in a moment.",
  internal: "Something went wrong on my side and the assistant is restarting — please try again in a moment.",
  empty: "I got an empty answer from the model — please try again.",
};

/** The message for a fault; an answer "cut off" before anything was shown is a provider error to the reader. */
export function faultMessage(fault: TurnFaultClass | undefined, shownAnything: boolean): string {
  if (fault === "cut_off" && !shownAnything) return FAULT_MESSAGES.server;
  return FAULT_MESSAGES[fault ?? "server"];
}

/** What closes an answer the agent ended because it ran out of tool steps. */
export const STEP_LIMIT_NOTE = "_(I stopped after too many tool steps.)_";

/** The interim status a reader sees while the model has said nothing for a while. */
export const WAITING_NOTICE = "💭 Still waiting for the model…";
