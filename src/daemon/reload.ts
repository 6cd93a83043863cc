/**
 * A config reload for the running daemon (SIGHUP, the control socket's
 * `reload`, the setup page): re-read config.toml and the secrets; a config
 * that does not load changes nothing. Otherwise the core takes the new
 * config (the agent on the new primary provider, the gateway's trust and
 * streaming rules), each channel whose table changed is restarted, started
 * or stopped, and what only a restart applies — the listen address and
 * port, the album debounce the inbox dispatcher was built with — is named.
 */

import { profileOf } from "../channels/registry.ts";
import type { ChannelAdapter } from "../channels/types.ts";
import { channelReadiness } from "../config/channels.ts";
import { type HttpSettings, resolveHttp } from "../config/http.ts";
import { type LoadedConfig, loadConfig } from "../config/index.ts";
import type { Env } from "../config/load.ts";
import { CHANNEL_NAMES, type ChannelName, type Config } from "../config/schema.ts";
import { describeError } from "../kernel/errors.ts";
import type { HealthReport, ReloadResult } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { ChannelSupervisor } from "./channels.ts";
import type { Core } from "./core.ts";

export interface ReloadDeps {
  env: Env;
  log: Logger;
  /** Where the HTTP server listens now. */
  http: HttpSettings;
  current: () => LoadedConfig;
  /** Make `next` the config in force (health, the adapters' start context), before channels restart. */
  adopt: (next: LoadedConfig) => void;
  core: Core;
  channels: ChannelSupervisor;
  /** The daemon's adapters by channel, kept in step with the supervisor's. */
  adapters: Map<ChannelName, ChannelAdapter>;
  buildAdapter: (name: ChannelName, config: Config) => Promise<ChannelAdapter | undefined>;
  report: () => HealthReport;
}

export async function reloadDaemon(deps: ReloadDeps): Promise<ReloadResult> {
  const { log } = deps;
  const before = deps.current();
  const empty = { started: [], stopped: [], restarted: [] };
  let next: LoadedConfig;
  try {
    next = await loadConfig(deps.env);
  } catch (error) {
    const message = describeError(error);
    log.error("config reload failed; keeping the running config", { error: message });
    return { ok: false, error: message, restart_required: [], channels: empty, provider_changed: false, health: deps.report() };
  }
  log.redactor.add(...next.secretValues);
  for (const warning of next.warnings) log.warn(warning, { component: "config" });

  const providerChanged =
    !Bun.deepEquals(before.config.fermix_core.providers, next.config.fermix_core.providers) ||
    !Bun.deepEquals(before.config.fermix_core.compaction, next.config.fermix_core.compaction);
  deps.core.reconfigure(next);
  deps.adopt(next);

  const channels: ReloadResult["channels"] = { started: [], stopped: [], restarted: [] };
  for (const name of CHANNEL_NAMES) {
    const running = deps.adapters.has(name);
    const changed = !Bun.deepEquals(before.config.fermix_channels[name], next.config.fermix_channels[name]);
    if (running && !changed) continue;
    const servable = channelReadiness(next.config, name, profileOf(name)).kind === "servable";
    if (!running && !servable && !changed) continue;
    const adapter = await deps.buildAdapter(name, next.config);
    if (adapter) {
      deps.adapters.set(name, adapter);
      await deps.channels.replace(name, adapter);
      (running ? channels.restarted : channels.started).push(name);
    } else if (running) {
      deps.adapters.delete(name);
      await deps.channels.remove(name);
      channels.stopped.push(name);
    }
  }

  await settle(deps.channels, [...channels.started, ...channels.restarted]);

  const restartRequired: string[] = [];
  const wanted = resolveHttp(deps.env, next.config.fermix_core.http);
  if (wanted.hostname !== deps.http.hostname || wanted.port !== deps.http.port) {
    restartRequired.push(`listen on ${wanted.hostname}:${wanted.port} (now ${deps.http.hostname}:${deps.http.port})`);
  }
  // Album buffers are built at start, for the channels whose table has album_debounce_ms.
  for (const name of CHANNEL_NAMES) {
    const debounce = (config: Config) => (config.fermix_channels[name] as { album_debounce_ms?: number }).album_debounce_ms;
    if (debounce(before.config) !== debounce(next.config)) restartRequired.push(`${name} album_debounce_ms`);
  }
  log.info("config reloaded", {
    provider_changed: providerChanged,
    started: channels.started.join(","),
    stopped: channels.stopped.join(","),
    restarted: channels.restarted.join(","),
    restart_required: restartRequired.join("; "),
  });
  return { ok: true, restart_required: restartRequired, channels, provider_changed: providerChanged, health: deps.report() };
}

/** Give channels just (re)started a moment to leave "starting" (a first short poll), so the health shown is their real one. */
async function settle(channels: ChannelSupervisor, names: ChannelName[], patienceMs = 3000): Promise<void> {
  const deadline = Date.now() + patienceMs;
  while (names.some((name) => channels.state(name)?.status === "starting") && Date.now() < deadline) await Bun.sleep(25);
}
