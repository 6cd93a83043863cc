/**
 * Local model servers that answer on their usual ports (Ollama 11434,
 * llama.cpp 8080, LM Studio 1234, vLLM 8000), found by asking each for its
 * model list at `http://<host>:<port>/v1/models`. Which addresses are asked
 * comes from `FERMIX_SETUP_PROBES=host:port,…` when set (tests point it at a
 * fake), else the usual ports on 127.0.0.1.
 */
import type { Env } from "../config/load.ts";

export interface ServerKind {
  /** Used as the provider's table name. */
  id: string;
  label: string;
  port: number;
}

export const KNOWN_SERVERS: readonly ServerKind[] = [
  { id: "ollama", label: "Ollama", port: 11434 },
  { id: "llamacpp", label: "llama.cpp", port: 8080 },
  { id: "lmstudio", label: "LM Studio", port: 1234 },
  { id: "vllm", label: "vLLM", port: 8000 },
];

export function serverKindFor(port: number): ServerKind | undefined {
  return KNOWN_SERVERS.find((k) => k.port === port);
}

export interface LocalServer {
  /** "Ollama", or "OpenAI-compatible server" for a port that is not one of the usual ones. */
  label: string;
  /** The provider name to configure it under. */
  id: string;
  baseUrl: string;
  models: string[];
}

/** The addresses to probe: FERMIX_SETUP_PROBES, else the usual ports on loopback. */
export function probeTargets(env: Env): string[] {
  const raw = env.FERMIX_SETUP_PROBES?.trim();
  if (raw !== undefined && raw !== "") {
    return raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  }
  return KNOWN_SERVERS.map((k) => `127.0.0.1:${k.port}`);
}

export interface ProbeOptions {
  fetch?: typeof fetch;
  /** How long each server has to answer (default 800 ms); they are asked in parallel. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Every target that answers with an OpenAI-style model list, in the order given. */
export async function probeLocalServers(targets: readonly string[], options: ProbeOptions = {}): Promise<LocalServer[]> {
  const found = await Promise.all(targets.map((target) => probeOne(target, options)));
  return found.filter((s): s is LocalServer => s !== undefined);
}

async function probeOne(target: string, options: ProbeOptions): Promise<LocalServer | undefined> {
  const baseUrl = `http://${target}/v1`;
  const doFetch = options.fetch ?? fetch;
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 800), ...(options.signal ? [options.signal] : [])];
  try {
    const response = await doFetch(`${baseUrl}/models`, { signal: AbortSignal.any(signals) });
    if (!response.ok) return undefined;
    const models = modelIds(await response.json());
    if (models === undefined) return undefined;
    const kind = serverKindFor(Number(target.split(":").at(-1)));
    return { label: kind?.label ?? "OpenAI-compatible server", id: kind?.id ?? "local", baseUrl, models };
  } catch {
    return undefined;
  }
}

/** The model ids of an OpenAI-style `{data:[{id}]}` list; undefined when the body is not one. */
export function modelIds(body: unknown): string[] | undefined {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data)) return undefined;
  return data.flatMap((m) => (typeof (m as { id?: unknown })?.id === "string" ? [(m as { id: string }).id] : []));
}
