/**
 * The interactive face of setup: provider, channels, transcription and
 * realtime voice, web search, computer use, then the service. Each step shows what is configured and can be skipped; the
 * answers become changes that src/setup/ validates and writes, exactly as
 * the flags and the web page do.
 */
import { desktopNeeds, INSTALL_DESKTOP } from "../agent/computer/requirements.ts";
import { ConfigError } from "../config/errors.ts";
import { PROVIDER_KEY_ENV, parseConfigText, type Resolved } from "../config/load.ts";
import { realtimeProviderName } from "../config/realtime.ts";
import type { Config, ProviderConfig } from "../config/schema.ts";
import { describeError } from "../kernel/errors.ts";
import {
  apiFor,
  changesFromFlags,
  fallbackOf,
  KNOWN_PROVIDERS,
  OPENAI_BASE_URL,
  type ProviderAnswer,
  primaryProviderName,
  providerChanges,
  providerNameFor,
} from "../setup/changes.ts";
import { checkProvider } from "../setup/check.ts";
import { coerceValue, isSecretPath, SETUP_CHANNELS } from "../setup/fields.ts";
import { planSetup, type SetupChange } from "../setup/plan.ts";
import { type LocalServer, probeLocalServers, probeTargets } from "../setup/probe.ts";
import { defaultServiceContext, installService, servicePlatform, serviceStatus } from "../setup/service.ts";
import { describeChannel, describeComputer, describeProvider, describeRealtime, describeTranscription, describeWebSearch } from "../setup/summary.ts";
import { applySetup, type CurrentSetup } from "../setup/write.ts";
import type { CliContext } from "./context.ts";
import { PAIR_TIMEOUT_SECONDS, type SetupArgs } from "./setup-args.ts";
import { channelsStep } from "./setup-channels.ts";
import { daemonRunning, describeReload, reloadDaemon } from "./setup-daemon.ts";
import { type Io, loaderCheck, type Prompts, prompts, WizardCancelled } from "./setup-prompts.ts";
import { webSearchStep } from "./setup-web.ts";

export interface WizardInput {
  ctx: CliContext;
  current: CurrentSetup;
  args: SetupArgs;
  terminal: Io;
}

const TRANSCRIPTION_MODELS: Record<string, string> = { openai: "gpt-4o-mini-transcribe", deepgram: "nova-3" };

export async function runWizard({ ctx, current, args, terminal }: WizardInput): Promise<number> {
  const ask = prompts(terminal);
  ask.intro("Fermix setup");
  const file = parseConfigText(current.text, current.paths.config);
  // Flags given without --yes preset their answers: the steps start from them.
  const presets = changesFromFlags(args.flags, file, false);
  let start: Resolved;
  try {
    start = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes: presets, filePath: current.paths.config }).resolved;
  } catch (error) {
    ask.log.error(describeError(error));
    ask.outro("Fix config.toml (or move it away), then run fermix setup again.");
    return 1;
  }
  try {
    if (current.exists && !args.reconfigure) {
      ask.note(summary(start.config), `Configured now (${current.paths.config})`);
      if (!(await ask.confirm("Change it? Every step starts from what is there and can be skipped."))) {
        ask.outro("Nothing changed.");
        return 0;
      }
    }
    const changes: SetupChange[] = [...presets];
    ask.log.step(`1/6 Model provider — now: ${describeProvider(start.config)}`);
    changes.push(...(await providerStep(ask, start.config, file, ctx.env)));
    ask.log.step("2/6 Channels");
    changes.push(
      ...(await channelsStep({
        ask,
        config: start.config,
        env: ctx.env,
        controlSocket: current.paths.controlSocket,
        pairTimeoutMs: (args.pairTimeoutSeconds ?? PAIR_TIMEOUT_SECONDS) * 1000,
      })),
    );
    ask.log.step(`3/6 Voice notes — now: ${describeTranscription(start.config)}`);
    changes.push(...(await transcriptionStep(ask, start.config)));
    // Offered through the provider chosen a moment ago, as it will be written.
    changes.push(...(await realtimeStep(ask, plannedConfig(current, changes) ?? start.config)));
    ask.log.step(`4/6 Web search — now: ${describeWebSearch(start.config)}`);
    changes.push(...(await webSearchStep(ask, start.config)));
    ask.log.step(`5/6 Computer use — now: ${describeComputer(start.config)}`);
    changes.push(...(await computerStep(ask, start.config, ctx.env)));
    const decision = await review(ask, current, changes);
    if (decision === "declined") {
      ask.outro("Nothing was written.");
      return 0;
    }
    const running = await daemonRunning(current.paths.controlSocket);
    if (decision === "write") {
      const applied = await applySetup(current, changes);
      ask.log.success(`Wrote ${applied.configPath}${applied.backupPath ? ` (the previous one is ${applied.backupPath})` : ""}`);
      const secrets = Object.keys(applied.plan.secrets).length;
      if (secrets > 0) ask.log.success(`Stored ${secrets} secret${secrets === 1 ? "" : "s"} in ${applied.secretStore}`);
      if (running) {
        const spin = ask.spinner();
        spin.start("Telling the running daemon to reload");
        const result = await reloadDaemon(current.paths.controlSocket);
        spin.stop(describeReload(result).trimEnd());
      }
    }
    ask.log.step("6/6 Background service");
    const service = args.noService ? "skipped" : await serviceStep(ask, ctx);
    ask.outro(nextStep(running, service));
    return 0;
  } catch (error) {
    if (error instanceof WizardCancelled) {
      ask.cancel("Setup cancelled; nothing was written.");
      return 130;
    }
    if (error instanceof ConfigError) {
      ask.log.error(error.message);
      ask.outro("Nothing was written.");
      return 1;
    }
    throw error;
  }
}

function summary(config: Config): string {
  return [
    `provider       ${describeProvider(config)}`,
    ...SETUP_CHANNELS.map((name) => `${name.padEnd(15)}${describeChannel(config, name)}`),
    `transcription  ${describeTranscription(config)}`,
    `realtime voice ${describeRealtime(config)}`,
    `web search     ${describeWebSearch(config)}`,
    `computer use   ${describeComputer(config)}`,
  ].join("\n");
}

async function providerStep(ask: Prompts, config: Config, file: Record<string, unknown>, env: Record<string, string | undefined>): Promise<SetupChange[]> {
  const primary = Object.entries(config.fermix_core.providers).find(([, p]) => p.primary);
  const spin = ask.spinner();
  spin.start("Looking for model servers on this machine");
  const servers = await probeLocalServers(probeTargets(env));
  spin.stop(
    servers.length === 0
      ? "No local model server answered"
      : `Found ${servers.map((s) => `${s.label} (${s.models.length} model${s.models.length === 1 ? "" : "s"})`).join(", ")}`,
  );
  const choice = await ask.select<string>(
    "Which model provider?",
    [
      ...(primary ? [{ value: "keep", label: `Keep ${primary[0]} (${primary[1].model})` }] : []),
      ...providerChoices(servers),
      ...(primary ? [{ value: "fallback", label: `Add a fallback provider (answers when ${primary[0]} cannot)` }] : []),
      ...(primary ? [] : [{ value: "skip", label: "Skip for now" }]),
    ],
    primary ? "keep" : servers.length > 0 ? "local:0" : "openai",
  );
  if (choice === "skip") return [];
  if (choice === "keep") return fallbackOrder(ask, config, file, []);
  if (choice === "fallback") {
    const which = await ask.select<string>("Which provider answers when the primary cannot?", providerChoices(servers), "anthropic");
    const answer = await checkedAnswer(ask, which, servers, undefined, env);
    if (!answer) return [];
    if (answer.name === primary?.[0]) {
      ask.log.warn(`${answer.name} is the primary provider already: a fallback is another one.`);
      return [];
    }
    return fallbackOrder(ask, config, file, providerChanges(file, answer, "fallback"), answer.name);
  }
  const answer = await checkedAnswer(ask, choice, servers, primary, env);
  return answer ? fallbackOrder(ask, config, file, providerChanges(file, answer), answer.name) : [];
}

/** The providers the wizard offers: the local servers that answered first, then the hosted ones, then any compatible server. */
function providerChoices(servers: LocalServer[]): Array<{ value: string; label: string; hint?: string }> {
  return [
    ...servers.map((s, i) => ({ value: `local:${i}`, label: `${s.label} at ${s.baseUrl}`, hint: s.models.slice(0, 3).join(", ") || "no models listed" })),
    { value: "openai", label: "OpenAI (Responses API)", hint: "needs an API key" },
    { value: "anthropic", label: KNOWN_PROVIDERS.anthropic.label, hint: "needs an API key" },
    { value: "custom", label: "Another OpenAI-compatible server", hint: "OpenRouter, vLLM, a remote Ollama… by its base URL" },
  ];
}

/** A provider's answers, checked live if the owner wants; undefined when they skip it. */
async function checkedAnswer(
  ask: Prompts,
  choice: string,
  servers: LocalServer[],
  primary: [string, ProviderConfig] | undefined,
  env: Record<string, string | undefined>,
): Promise<ProviderAnswer | undefined> {
  for (;;) {
    const answer = await providerAnswer(ask, choice, servers, primary, env);
    const how = answer.api === "anthropic" ? `GET ${answer.base_url}/models/${answer.model}` : `GET ${answer.base_url}/models`;
    const check = await ask.confirm(`Check the connection now (${how})?`);
    if (!check) return answer;
    const spinCheck = ask.spinner();
    spinCheck.start(`Asking ${answer.base_url} for ${answer.api === "anthropic" ? "the model" : "its models"}`);
    const stored = primary && primary[0] === answer.name ? primary[1].api_key : undefined;
    const envKey = PROVIDER_KEY_ENV[answer.name] ? env[PROVIDER_KEY_ENV[answer.name]!] : undefined;
    const result = await checkProvider({ baseUrl: answer.base_url, apiKey: answer.api_key ?? stored ?? envKey, model: answer.model, api: answer.api });
    if (result.ok) {
      spinCheck.stop(`${answer.base_url} answers and has ${answer.model}`);
      return answer;
    }
    spinCheck.error(result.message);
    const next = await ask.select("What now?", [
      { value: "again", label: "Enter the provider again" },
      { value: "keep", label: "Keep these values anyway" },
      { value: "skip", label: "Skip the provider for now" },
    ]);
    if (next === "keep") return answer;
    if (next === "skip") return undefined;
  }
}

/**
 * With more than one provider, the order the others stand in when the primary
 * cannot answer (`[fermix_core] fallback`). Asked only then: one provider has
 * nothing to fail over to.
 */
async function fallbackOrder(ask: Prompts, config: Config, file: Record<string, unknown>, changes: SetupChange[], added?: string): Promise<SetupChange[]> {
  const primary = changes.some((c) => c.path.endsWith(".primary") && c.value === true) ? added : primaryProviderName(file);
  const names = [...new Set([...Object.keys(config.fermix_core.providers), ...(added ? [added] : [])])].filter((name) => name !== primary);
  if (names.length === 0 || !primary) return changes;
  const planned = changes.find((c) => c.path === "fermix_core.fallback")?.value as string[] | undefined;
  const current = (planned ?? fallbackOf(file)).filter((name) => name !== primary);
  const order = await ask.text(`Fallback providers when ${primary} cannot answer, in order (of ${names.join(", ")}; empty: none)`, {
    initial: current.join(", "),
    validate: (raw) => {
      const list = coerceValue("list", raw) as string[];
      const unknown = list.find((n) => !names.includes(n));
      if (unknown) return `"${unknown}" is not one of ${names.join(", ")}`;
      return new Set(list).size === list.length ? undefined : "each provider once";
    },
  });
  const list = coerceValue("list", order) as string[];
  const rest = changes.filter((c) => c.path !== "fermix_core.fallback");
  return Bun.deepEquals(list, fallbackOf(file)) ? rest : [...rest, { path: "fermix_core.fallback", value: list }];
}

async function providerAnswer(
  ask: Prompts,
  choice: string,
  servers: LocalServer[],
  primary: [string, ProviderConfig] | undefined,
  env: Record<string, string | undefined>,
): Promise<ProviderAnswer> {
  const server = choice.startsWith("local:") ? servers[Number(choice.slice(6))] : undefined;
  const known = choice === "openai" || choice === "anthropic" ? KNOWN_PROVIDERS[choice] : undefined;
  let baseUrl = server?.baseUrl ?? known?.base_url ?? OPENAI_BASE_URL;
  if (choice === "custom") {
    baseUrl = await ask.text("Base URL of the API (including /v1)", {
      ...(primary && primary[1].base_url !== OPENAI_BASE_URL ? { initial: primary[1].base_url } : { placeholder: "https://openrouter.ai/api/v1" }),
      validate: loaderCheck("fermix_core.providers.custom.base_url"),
    });
  }
  const same = primary && primary[1].base_url === baseUrl ? primary : undefined;
  const name = same?.[0] ?? server?.id ?? providerNameFor(baseUrl);
  const at = (key: string) => `fermix_core.providers.${name}.${key}`;
  const api =
    choice === "custom"
      ? await ask.select(
          "Which API does it speak?",
          [
            { value: "chat" as const, label: "Chat completions (/chat/completions)", hint: "almost every compatible server" },
            { value: "responses" as const, label: "Responses (/responses)", hint: "OpenAI's newer API" },
            { value: "anthropic" as const, label: "Anthropic Messages (/messages)", hint: "an Anthropic-compatible gateway" },
          ],
          same?.[1].api ?? "chat",
        )
      : apiFor(baseUrl);
  const model =
    server && server.models.length > 0
      ? await ask.select(
          "Which model?",
          server.models.map((m) => ({ value: m, label: m })),
          same?.[1].model ?? server.models[0],
        )
      : await ask.text("Model", { initial: same?.[1].model ?? known?.model ?? "", validate: loaderCheck(at("model")) });
  const keyVariable = PROVIDER_KEY_ENV[name];
  const keyNote = same?.[1].api_key
    ? "leave empty to keep the stored key"
    : keyVariable && env[keyVariable]
      ? `leave empty to use ${keyVariable}`
      : server || choice === "custom"
        ? "leave empty if the server needs none"
        : "";
  const key = await ask.secret(`API key${keyNote ? ` (${keyNote})` : ""}`, { validate: loaderCheck(at("api_key"), (raw) => raw.trim(), true) });
  const vision = await ask.confirm("Does the model understand images (vision)?", same?.[1].vision ?? !server);
  const window = await ask.text("Context window, in tokens", {
    initial: String(same?.[1].context_window ?? known?.context_window ?? (server ? 32_768 : 128_000)),
    validate: loaderCheck(at("context_window"), (raw) => (/^\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw.trim())),
  });
  return { name, api, base_url: baseUrl, model, ...(key ? { api_key: key } : {}), vision, context_window: Number(window) };
}

async function transcriptionStep(ask: Prompts, config: Config): Promise<SetupChange[]> {
  const now = config.fermix_core.transcription;
  const configured = Boolean(now.backend || now.model || now.api_key);
  const backend = await ask.select<string>(
    "Which speech-to-text backend transcribes voice notes?",
    [
      ...(configured ? [{ value: "keep", label: `Keep ${describeTranscription(config)}` }] : []),
      { value: "openai", label: "OpenAI", hint: "gpt-4o-mini-transcribe" },
      { value: "deepgram", label: "Deepgram", hint: "nova-3" },
      { value: "xai", label: "xAI" },
      ...(configured ? [] : [{ value: "skip", label: "Skip (voice notes are refused with a reply until a key is set)" }]),
    ],
    configured ? "keep" : "openai",
  );
  if (backend === "keep" || backend === "skip") return [];
  const at = (key: string) => `fermix_core.transcription.${key}`;
  const model = await ask.text("Model (empty: the backend's default)", {
    initial: now.backend === backend && now.model ? now.model : (TRANSCRIPTION_MODELS[backend] ?? ""),
    validate: loaderCheck(at("model"), (raw) => raw.trim(), true),
  });
  const fallback = backend === "openai" ? "the openai provider's key, or OPENAI_API_KEY" : backend === "xai" ? "XAI_API_KEY" : "DEEPGRAM_API_KEY";
  const key = await ask.secret(`API key (${now.api_key ? "leave empty to keep the stored one" : `leave empty to use ${fallback}`})`, {
    validate: loaderCheck(at("api_key"), (raw) => raw.trim(), true),
  });
  return [
    { path: at("backend"), value: backend },
    { path: at("model"), value: model === "" ? undefined : model },
    ...(key ? [{ path: at("api_key"), value: key }] : []),
  ];
}

/** Computer use: on or off, and which display; what the desktop needs that is not installed is said, not refused. */
async function computerStep(ask: Prompts, config: Config, env: Record<string, string | undefined>): Promise<SetupChange[]> {
  const now = config.fermix_core.computer;
  const on = await ask.confirm(
    "Let the assistant drive a desktop (computer use: it sees the screen, clicks and types; yours alone, in your direct chats)?",
    now.enabled,
  );
  if (!on) return now.enabled ? [{ path: "fermix_core.computer.enabled", value: false }] : [];
  const display = await ask.select<"virtual" | "host">(
    "Which display?",
    [
      { value: "virtual", label: "A private virtual display (Xvfb), started for each session", hint: "works on a server" },
      { value: "host", label: "This machine's own X11 display (DISPLAY)", hint: "everything on your desktop" },
    ],
    now.display,
  );
  const needs = desktopNeeds({ display, start: now.start }, (command) => Bun.which(command, { PATH: env.PATH ?? "" }), { platform: process.platform, env });
  if (needs.hostProblem) ask.log.warn(`The host display cannot be driven here: ${needs.hostProblem}.`);
  if (needs.missing.length > 0) ask.log.warn(`Missing ${needs.missing.join(", ")}: ${INSTALL_DESKTOP}. \`fermix doctor\` checks again.`);
  return [
    ...(now.enabled ? [] : [{ path: "fermix_core.computer.enabled", value: true }]),
    ...(display === now.display ? [] : [{ path: "fermix_core.computer.display", value: display }]),
  ];
}

/** The config the changes so far would make, or undefined when they would not load (the review says why). */
function plannedConfig(current: CurrentSetup, changes: SetupChange[]): Config | undefined {
  try {
    return planSetup({ currentText: current.text, currentSecrets: current.secrets, changes, filePath: current.paths.config }).resolved.config;
  } catch {
    return undefined;
  }
}

/** Realtime voice on or off, through the primary provider unless config.toml names another; Enter keeps what is there. */
async function realtimeStep(ask: Prompts, config: Config): Promise<SetupChange[]> {
  const on = config.fermix_core.realtime.enabled;
  const through = realtimeProviderName(config);
  const { model, voice } = config.fermix_core.realtime;
  const choice = await ask.select<string>(
    "Talk with Fermix live, by voice (`fermix talk`, the /talk page)?",
    on
      ? [
          { value: "keep", label: `Keep it on (${through ?? "no provider yet"}, ${model}, voice ${voice})` },
          { value: "off", label: "Turn it off" },
        ]
      : [
          { value: "keep", label: "Not now" },
          { value: "on", label: `Turn it on${through ? `, through ${through}` : ""}`, hint: `${model}, voice ${voice}; the provider's realtime API` },
        ],
    "keep",
  );
  if (choice === "keep") return [];
  return [{ path: "fermix_core.realtime.enabled", value: choice === "on" }];
}

/** Show what will change (secrets by name only) and ask before writing. */
async function review(ask: Prompts, current: CurrentSetup, changes: SetupChange[]): Promise<"write" | "unchanged" | "declined"> {
  const plan = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes, filePath: current.paths.config });
  if (plan.changed.length === 0 && current.exists) {
    ask.log.info("Nothing to change in config.toml.");
    return "unchanged";
  }
  const written = Bun.TOML.parse(plan.text) as Record<string, unknown>;
  const lines = plan.changed.map((path) => {
    if (isSecretPath(path)) return `${path} = (secret, to ${current.store.kind === "keychain" ? "the keychain" : "secrets.toml"})`;
    const value = path.split(".").reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], written);
    return `${path} = ${value === undefined ? "(removed)" : JSON.stringify(value)}`;
  });
  ask.note(lines.join("\n"), `Changes to ${current.paths.config}`);
  return (await ask.confirm("Write them?")) ? "write" : "declined";
}

async function serviceStep(ask: Prompts, ctx: CliContext): Promise<"installed" | "running" | "skipped" | "unsupported"> {
  const platform = servicePlatform();
  if (!platform) {
    ask.log.info("No service manager here (systemd or launchd): run `fermix run` under your own supervisor.");
    return "unsupported";
  }
  const service = defaultServiceContext(ctx.env, platform);
  const status = await serviceStatus(service);
  if (status.installed && status.active) {
    ask.log.info(`The service is installed and running (${status.detail}).`);
    return "running";
  }
  const what = platform === "systemd" ? "a systemd user service" : "a launchd agent";
  if (!(await ask.confirm(`Run Fermix in the background, now and at every login or boot (${what})?`, false))) return "skipped";
  const report = await installService(service);
  for (const line of report.lines) (report.ok ? ask.log.info : ask.log.warn)(line);
  return report.ok ? "installed" : "skipped";
}

function nextStep(daemonRunning: boolean, service: string): string {
  if (daemonRunning) return "Done. The daemon is running with this configuration: send your bot a message.";
  if (service === "installed" || service === "running") return "Done. Fermix runs as a service: `fermix service status`, `fermix service logs`.";
  return "Done. Next: `fermix run` (or `fermix service install` to run it in the background).";
}
