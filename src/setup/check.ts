/**
 * The provider's live check: `GET {base_url}/models` with the key, and a
 * failure named so a person can act on it — the server unreachable, the key
 * refused, or a model the server does not list. Only the wizard and
 * `fermix setup --check` run it; flags alone contact nothing.
 */

import { describeError } from "../kernel/errors.ts";
import { modelIds } from "./probe.ts";

export type ProviderCheck =
  | { ok: true; models: string[] }
  | { ok: false; reason: "unreachable" | "unauthorized" | "unknown_model" | "http_error" | "not_a_model_list"; message: string; models?: string[] };

export interface ProviderCheckInput {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
}

export interface CheckOptions {
  fetch?: typeof fetch;
  /** Default 8 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function checkProvider(input: ProviderCheckInput, options: CheckOptions = {}): Promise<ProviderCheck> {
  const url = `${input.baseUrl.replace(/\/+$/, "")}/models`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (input.apiKey) headers.authorization = `Bearer ${input.apiKey}`;
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 8000), ...(options.signal ? [options.signal] : [])];
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, { headers, signal: AbortSignal.any(signals) });
  } catch (error) {
    const why = error instanceof Error && error.name === "TimeoutError" ? "no answer in time" : describeError(error);
    return { ok: false, reason: "unreachable", message: `cannot reach ${url}: ${why}` };
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    return {
      ok: false,
      reason: "unauthorized",
      message: input.apiKey
        ? `the server refused the API key (HTTP ${response.status} from ${url})`
        : `the server wants an API key (HTTP ${response.status} from ${url})`,
    };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { ok: false, reason: "http_error", message: `${url} answered HTTP ${response.status}` };
  }
  let models: string[] | undefined;
  try {
    models = modelIds(await response.json());
  } catch {
    models = undefined;
  }
  if (models === undefined)
    return { ok: false, reason: "not_a_model_list", message: `${url} did not answer with a model list: is this an OpenAI-compatible API root?` };
  if (models.length > 0 && !models.includes(input.model)) {
    const shown = models.slice(0, 8).join(", ") + (models.length > 8 ? `, … (${models.length} in all)` : "");
    return { ok: false, reason: "unknown_model", message: `the server does not list the model "${input.model}" (it has: ${shown})`, models };
  }
  return { ok: true, models };
}
