/**
 * The wizard's web search step: which backend web_search asks (the Brave
 * Search API with its key, a SearXNG instance by its URL), or none.
 * web_fetch needs nothing to set up. Values are checked by the config
 * loader, and the key goes to the secret store like every credential.
 */
import type { Config } from "../config/schema.ts";
import type { SetupChange } from "../setup/plan.ts";
import { describeWebSearch } from "../setup/summary.ts";
import { loaderCheck, type Prompts } from "./setup-prompts.ts";

const at = (key: string) => `fermix_core.web.${key}`;

export async function webSearchStep(ask: Prompts, config: Config): Promise<SetupChange[]> {
  const web = config.fermix_core.web;
  const configured = web.search_backend !== "";
  const choice = await ask.select<string>(
    "Web search for the assistant?",
    [
      ...(configured
        ? [{ value: "keep", label: `Keep ${describeWebSearch(config)}` }]
        : [{ value: "off", label: "No web search for now (it can still read links)" }]),
      { value: "brave", label: "Brave Search API", hint: "needs an API key" },
      { value: "searxng", label: "A SearXNG instance", hint: "its URL; JSON output allowed" },
      ...(configured ? [{ value: "off", label: "Turn web search off" }] : []),
    ],
    configured ? "keep" : "off",
  );
  if (choice === "keep") return [];
  if (choice === "off") return configured ? [{ path: at("search_backend"), value: undefined }] : [];
  if (choice === "brave") {
    const stored = Boolean(web.brave_api_key);
    const key = await ask.secret(`Brave Search API key (${stored ? "leave empty to keep the stored one" : "leave empty to use BRAVE_API_KEY"})`, {
      validate: loaderCheck(at("brave_api_key"), (raw) => raw.trim(), true),
    });
    return [{ path: at("search_backend"), value: "brave" }, ...(key ? [{ path: at("brave_api_key"), value: key }] : [])];
  }
  const url = await ask.text("SearXNG URL (its root; the instance must allow format=json)", {
    initial: web.searxng_url ?? "http://127.0.0.1:8888",
    validate: loaderCheck(at("searxng_url")),
  });
  return [
    { path: at("search_backend"), value: "searxng" },
    { path: at("searxng_url"), value: url.trim() },
  ];
}
