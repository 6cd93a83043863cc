/**
 * What the user is told when something fails: one short message per class of
 * fault, punctuated once, without hosts, URLs or the upstream's own words —
 * those go to the log, where an operator reads them. The turn runner uses the
 * provider classes; delivery has its own notices for what it could not send.
 */
import type { ProviderFault } from "../agent/providers/types.ts";

export const FAULT_MESSAGES: Readonly<Record<ProviderFault, string>> = {
  unreachable: "⚠️ I couldn't reach the model provider. Please try again in a moment.",
  auth: "⚠️ The model provider did not accept my credentials. Please run `fermix doctor` on the machine running Fermix.",
  quota: "⚠️ The model provider account is out of quota. Please check its plan or billing, then try again.",
  rate_limited: "⚠️ The model provider is limiting how fast I can ask. Please try again in a minute.",
  server: "⚠️ The model provider had an error on its side. Please try again in a moment.",
  timeout: "⚠️ The model took too long to start answering. Please try again.",
  cut_off: "⚠️ The answer was cut off before it finished. Please try again.",
  rejected: "⚠️ The model provider refused the request. Please run `fermix doctor` on the machine running Fermix.",
};

/** The message for a failed turn; an answer "cut off" before anything was shown is a provider error to the reader. */
export function faultMessage(fault: ProviderFault | undefined, shownAnything: boolean): string {
  if (fault === "cut_off" && !shownAnything) return FAULT_MESSAGES.server;
  return FAULT_MESSAGES[fault ?? "server"];
}

/** The interim status a reader sees while a model has said nothing for a while. */
export const WAITING_NOTICE = "💭 Still waiting for the model…";
