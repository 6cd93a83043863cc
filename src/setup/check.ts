/**
 * The provider's live check: one cheap authenticated call, and a failure
 * named so a person can act on it — the server unreachable, the key refused,
 * or a model the server does not know. OpenAI and compatible servers are
 * asked for their model list (`GET {base_url}/models` with the Bearer key);
 * Anthropic's API for the model itself (`GET {base_url}/models/{model}` with
 * `x-api-key` and `anthropic-version`), which also resolves its aliases and
 * costs no tokens. Only the wizard, `fermix setup --check`, the setup page
 * and `fermix doctor --check` run it; flags alone contact nothing.
 */

import { ANTHROPIC_VERSION } from "../agent/providers/anthropic.ts";
import type { ProviderApi } from "../config/schema.ts";
import { describeError } from "../kernel/errors.ts";
import { modelIds } from "./probe.ts";

export type ProviderCheck =
  | { ok: true; models: string[] }
  | { ok: false; reason: "unreachable" | "unauthorized" | "unknown_model" | "http_error" | "not_a_model_list"; message: string; models?: string[] };

export interface ProviderCheckInput {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** The wire format, which says how to ask (default: OpenAI's). */
  api?: ProviderApi | undefined;
  /** api = anthropic: where the key goes (the provider's `auth_header`). */
  authHeader?: "x-api-key" | "bearer" | undefined;
}

export interface CheckOptions {
  fetch?: typeof fetch;
  /** Default 8 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The call that proves the key and the model: where, and with which headers. */
function probeRequest(input: ProviderCheckInput): { url: string; headers: Record<string, string> } {
  const base = input.baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { accept: "application/json" };
  if (input.api === "anthropic") {
    headers["anthropic-version"] = ANTHROPIC_VERSION;
    if (input.apiKey) {
      if (input.authHeader === "bearer") headers.authorization = `Bearer ${input.apiKey}`;
      else headers["x-api-key"] = input.apiKey;
    }
    return { url: `${base}/models/${encodeURIComponent(input.model)}`, headers };
  }
  if (input.apiKey) headers.authorization = `Bearer ${input.apiKey}`;
  return { url: `${base}/models`, headers };
}

export async function checkProvider(input: ProviderCheckInput, options: CheckOptions = {}): Promise<ProviderCheck> {
  const { url, headers } = probeRequest(input);
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
  if (input.api === "anthropic") return anthropicModel(response, input.model, url);
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

/** Anthropic's answer about one model: 200 knows it, 404 does not. */
async function anthropicModel(response: Response, model: string, url: string): Promise<ProviderCheck> {
  if (response.status === 404) {
    await response.body?.cancel();
    return { ok: false, reason: "unknown_model", message: `the API does not know the model "${model}" (HTTP 404 from ${url})` };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { ok: false, reason: "http_error", message: `${url} answered HTTP ${response.status}` };
  }
  const body = (await response.json().catch(() => undefined)) as { id?: unknown } | undefined;
  if (typeof body?.id !== "string")
    return { ok: false, reason: "not_a_model_list", message: `${url} did not answer with a model: is this Anthropic's API root?` };
  return { ok: true, models: [body.id] };
}
