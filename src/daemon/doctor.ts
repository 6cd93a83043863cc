/**
 * Checks, one row per concern. By default nothing here talks to a platform or
 * a model: it reads the config, the home and the database, and asks the OS
 * whether the port is free. With `check`, each provider gets one cheap
 * authenticated call (src/setup/check.ts: its model list, or Anthropic's
 * model lookup — no tokens spent), so a refused key is named before a turn
 * meets it.
 */
import { existsSync, statSync } from "node:fs";
import { detectBackend, INSTALL_BWRAP, probeBackend } from "../agent/sandbox/detect.ts";
import { rootWarning } from "../agent/sandbox/identity.ts";
import { profileOf } from "../channels/registry.ts";
import { channelReadiness } from "../config/channels.ts";
import { type HttpConfig, type HttpSettings, resolveHttp } from "../config/http.ts";
import { type LoadedConfig, loadConfig } from "../config/index.ts";
import { ConfigError, type Env, PROVIDER_KEY_ENV } from "../config/load.ts";
import { pathsFor, resolveHome } from "../config/paths.ts";
import { CHANNEL_NAMES, type ProviderConfig } from "../config/schema.ts";
import { transcriptionSettings } from "../config/transcription.ts";
import { describeError } from "../kernel/errors.ts";
import { formatMb } from "../kernel/sizes.ts";
import { checkProvider } from "../setup/check.ts";
import { defaultServiceContext, servicePlatform, serviceStatus } from "../setup/service.ts";
import { openDatabaseReadOnly, schemaVersion } from "../store/db.ts";
import { MIGRATIONS } from "../store/migrations.ts";
import { computerDoctorRows } from "./doctor-computer.ts";
import { discordDoctorRows } from "./doctor-discord.ts";
import { bindDoctorRow } from "./doctor-http.ts";
import { memoryAndJobRows } from "./doctor-memory.ts";
import { realtimeRows } from "./doctor-realtime.ts";
import { mcpDoctorRows, webDoctorRows } from "./doctor-tools.ts";
import { homeExposure, secretsExposure } from "./exposure.ts";
import { providerHealth } from "./health.ts";

export type RowStatus = "ok" | "warn" | "fail";

export interface DoctorRow {
  check: string;
  status: RowStatus;
  detail: string;
}

const row = (check: string, status: RowStatus, detail: string): DoctorRow => ({ check, status, detail });

export interface DoctorOptions {
  env: Env;
  /** Make one authenticated call per provider (`fermix doctor --check`). */
  check?: boolean;
  /** Reaches the providers for `check`; default fetch. */
  fetch?: typeof fetch;
  /** Whether something on the port is a fermix daemon; injected so tests need no real daemon. */
  probeDaemon?: (settings: HttpSettings) => Promise<boolean>;
}

export async function runDoctor({ env, probeDaemon = isFermixListening, check = false, fetch: fetchFn }: DoctorOptions): Promise<DoctorRow[]> {
  const paths = pathsFor(resolveHome(env));
  const rows: DoctorRow[] = [];

  let loaded: LoadedConfig | undefined;
  try {
    loaded = await loadConfig(env);
    rows.push(loaded.fileExists ? row("config", "ok", `${paths.config} is valid`) : row("config", "fail", `no ${paths.config}: run \`fermix setup\``));
    for (const warning of loaded.warnings) rows.push(row("config", "warn", warning));
  } catch (error) {
    rows.push(row("config", "fail", error instanceof ConfigError ? error.message : String(error)));
  }

  rows.push(homeRow(paths.home));
  if (loaded) rows.push(secretsRow(loaded));
  rows.push(databaseRow(paths.database));

  if (loaded) {
    const providers = Object.entries(loaded.config.fermix_core.providers);
    if (providers.length === 0) rows.push(row("providers", "fail", "no provider configured: run `fermix setup`"));
    const fallback = loaded.config.fermix_core.fallback;
    if (fallback.length > 0) rows.push(row("fallback", "ok", `when the primary cannot answer: ${fallback.join(", then ")}`));
    const liveRows = check ? await Promise.all(providers.map(([name, provider]) => liveProviderRow(name, provider, fetchFn))) : [];
    for (const [index, [name, provider]] of providers.entries()) {
      const health = providerHealth(name, provider);
      const role = health.primary ? "primary, " : fallback.includes(name) ? `fallback ${fallback.indexOf(name) + 1}, ` : "";
      rows.push(
        health.status === "ready"
          ? row(
              `provider ${name}`,
              "ok",
              `${role}${provider.model} via ${provider.base_url} (${health.auth_mode === "none" ? "no key: local server" : "api key set"})`,
            )
          : row(
              `provider ${name}`,
              "fail",
              `no api_key for ${provider.base_url}${PROVIDER_KEY_ENV[name] ? ` (set it with fermix setup or ${PROVIDER_KEY_ENV[name]})` : " (set it with fermix setup)"}`,
            ),
      );
      const live = liveRows[index];
      if (live) rows.push(live);
    }
    for (const name of CHANNEL_NAMES) {
      const profile = profileOf(name);
      const readiness = channelReadiness(loaded.config, name, profile);
      const check = `channel ${name}`;
      if (readiness.kind === "disabled") rows.push(row(check, "ok", "disabled"));
      else if (readiness.kind === "unconfigured") rows.push(row(check, "fail", `enabled but missing ${readiness.missing.join(", ")}`));
      else if (readiness.kind === "refused") rows.push(row(check, "fail", `enabled but refused: ${readiness.reason}`));
      else
        rows.push(row(check, "ok", profile.local ? "enabled (the socket's file mode is its authorization)" : "enabled, credentials and owner/allowlist set"));
      if (readiness.kind !== "disabled") rows.push(...(profile.doctor?.(loaded.config, env) ?? []));
      const streaming = (loaded.config.fermix_channels[name] as { streaming?: string }).streaming;
      if (readiness.kind !== "disabled" && streaming === "draft" && !profile.capabilities.edit) {
        rows.push(
          row(
            `${check} streaming`,
            "warn",
            `streaming = "draft" but ${name} cannot edit messages: replies will not stream at all (use "block", or remove the key)`,
          ),
        );
      }
    }
    rows.push(...discordDoctorRows(loaded.config, paths.database));
    rows.push(transcriptionRow(loaded));
    rows.push(...realtimeRows(loaded.config));
    rows.push(...memoryAndJobRows(loaded.config, paths.database));
    rows.push(...webDoctorRows(loaded.config), ...mcpDoctorRows(loaded.config, env, paths.home));
    rows.push(...computerDoctorRows(loaded.config, env));
  }

  rows.push(sandboxRow(env));
  rows.push(userRow());
  rows.push(await portRow(env, loaded?.config.fermix_core.http ?? {}, probeDaemon));
  const bind = bindDoctorRow(env, loaded?.config.fermix_core.http ?? {});
  if (bind) rows.push(bind);
  rows.push(await serviceRow(env));
  return rows;
}

/**
 * `--check`: one authenticated call to the provider. A refused key is named
 * as such, with where a new one goes; the key itself is never shown.
 */
async function liveProviderRow(name: string, provider: ProviderConfig, fetchFn?: typeof fetch): Promise<DoctorRow> {
  const check = `provider ${name} (live)`;
  const result = await checkProvider(
    { baseUrl: provider.base_url, apiKey: provider.api_key, model: provider.model, api: provider.api, authHeader: provider.auth_header },
    fetchFn ? { fetch: fetchFn } : {},
  );
  if (result.ok) return row(check, "ok", `${provider.base_url} accepts the ${provider.api_key ? "key" : "request"} and knows ${provider.model}`);
  if (result.reason !== "unauthorized") return row(check, "fail", result.message);
  const variable = PROVIDER_KEY_ENV[name];
  const where = `fermix setup --reconfigure --provider-name ${name} --api-key …${variable ? `, or ${variable}` : ""}`;
  return row(
    check,
    "fail",
    provider.api_key ? `the key was refused: ${result.message}; set a new one with ${where}` : `${result.message}; set one with ${where}`,
  );
}

/** Whether the background service is installed, and whether its manager says it runs. */
async function serviceRow(env: Env): Promise<DoctorRow> {
  const platform = servicePlatform();
  if (!platform) return row("service", "ok", `no service manager on ${process.platform}: run fermix under your own supervisor`);
  const status = await serviceStatus(defaultServiceContext(env, platform));
  if (!status.installed) return row("service", "ok", "not installed: `fermix service install` runs fermix in the background and at boot");
  if (status.active === true) return row("service", "ok", `installed and active (${status.detail})`);
  if (status.active === undefined) return row("service", "warn", status.detail);
  return row("service", "warn", `installed but not running (${status.detail}): see fermix service status and fermix service logs`);
}

/** Whether run_command can run here: the OS sandbox found on PATH, and run once. */
function sandboxRow(env: Env, platform: NodeJS.Platform = process.platform): DoctorRow {
  const backend = detectBackend(platform, env.PATH);
  if (!backend) {
    return platform === "darwin"
      ? row("sandbox", "warn", "no sandbox-exec: run_command is not offered to the assistant")
      : row("sandbox", "warn", `no bubblewrap (bwrap) on PATH: run_command is not offered to the assistant; ${INSTALL_BWRAP}`);
  }
  const probe = probeBackend(backend);
  if (!probe.ok) return row("sandbox", "warn", `${backend.path} does not run here (${probe.reason}): run_command is not offered`);
  return row("sandbox", "ok", `${probe.version} (${backend.path}): run_command runs sandboxed`);
}

/** Who fermix runs as: root is a warning (commands are mapped to an unprivileged id on Linux, but the daemon is not). */
function userRow(uid: number = process.getuid?.() ?? -1, platform: NodeJS.Platform = process.platform): DoctorRow {
  const warning = rootWarning(uid, platform);
  if (warning) return row("user", "warn", warning);
  return row("user", "ok", `fermix runs as uid ${uid}, not root: run_command's commands run as that user, in the sandbox`);
}

function homeRow(home: string): DoctorRow {
  if (!existsSync(home)) return row("home", "warn", `${home} does not exist yet; \`fermix run\` creates it (0700)`);
  const exposed = homeExposure(home);
  if (exposed) return row("home", "fail", exposed);
  return row("home", "ok", `${home} (mode ${(statSync(home).mode & 0o777).toString(8)})`);
}

function secretsRow(loaded: LoadedConfig): DoctorRow {
  const store = loaded.secretStore;
  if (store.kind === "keychain") return row("secrets", "ok", store.location);
  if (!existsSync(store.location)) return row("secrets", "ok", `file ${store.location} (no OS keychain here; none stored yet)`);
  const exposed = secretsExposure(loaded);
  if (exposed) return row("secrets", "fail", exposed);
  return row("secrets", "ok", `file ${store.location} (mode 600; no OS keychain here)`);
}

function databaseRow(path: string): DoctorRow {
  if (!existsSync(path)) return row("database", "ok", `${path} will be created at first run`);
  try {
    const db = openDatabaseReadOnly(path);
    try {
      const user_version = schemaVersion(db);
      const latest = MIGRATIONS.at(-1)?.version ?? 0;
      if (user_version > latest) {
        return row("database", "fail", `${path} has schema ${user_version}, newer than this fermix (${latest})`);
      }
      const size = databaseSize(path);
      return row(
        "database",
        "ok",
        `${path} opens (schema ${user_version}${user_version < latest ? `, migrates to ${latest} at next start` : ""}; ${formatMb(size)} on disk)`,
      );
    } finally {
      db.close();
    }
  } catch (error) {
    return row("database", "fail", `${path} does not open: ${describeError(error)}`);
  }
}

/** The database's bytes on disk, its write-ahead log included. */
function databaseSize(path: string): number {
  let bytes = 0;
  for (const file of [path, `${path}-wal`]) if (existsSync(file)) bytes += statSync(file).size;
  return bytes;
}

/** The backend voice notes go to, and whether its credential is there (present, not proven: nothing is sent). */
function transcriptionRow(loaded: LoadedConfig): DoctorRow {
  const t = transcriptionSettings(loaded.config);
  const what = `${t.backend}${t.model ? ` (${t.model})` : " (modelless)"} via ${t.baseUrl}`;
  const ignored = t.ignoredModel ? `; model = "${t.ignoredModel}" is ignored` : "";
  switch (t.keySource) {
    case "transcription":
      return row("transcription", "ok", `${what}: api key set${ignored}`);
    case "provider openai":
      return row("transcription", "ok", `${what}: api key of the openai provider${ignored}`);
    case "none (local server)":
      return row("transcription", "ok", `${what}: no key (local server)${ignored}`);
    case "missing": {
      const sources = [`[fermix_core.transcription] api_key`, PROVIDER_KEY_ENV[t.backend]];
      if (t.backend === "openai") sources.push("an openai provider's key for the same base_url");
      return row(
        "transcription",
        "warn",
        `${what} has no api key: voice notes will be refused with a reply (run \`fermix setup\`, or set ${sources.filter(Boolean).join(" or ")})${ignored}`,
      );
    }
  }
}

async function portRow(env: Env, fromConfig: HttpConfig, probeDaemon: (settings: HttpSettings) => Promise<boolean>): Promise<DoctorRow> {
  let settings: HttpSettings;
  try {
    settings = resolveHttp(env, fromConfig);
  } catch (error) {
    return row("port", "fail", describeError(error));
  }
  const where = `${settings.hostname}:${settings.port}`;
  if (portIsFree(settings)) return row("port", "ok", `${where} is free`);
  if (await probeDaemon(settings)) return row("port", "ok", `${where} is served by a running fermix daemon`);
  return row("port", "fail", `${where} is taken by another program: stop it or set PORT`);
}

function portIsFree({ hostname, port }: HttpSettings): boolean {
  try {
    const listener = Bun.listen({ hostname, port, socket: { data() {} } });
    listener.stop(true);
    return true;
  } catch {
    return false;
  }
}

async function isFermixListening({ hostname, port }: HttpSettings): Promise<boolean> {
  const host = hostname === "0.0.0.0" ? "127.0.0.1" : hostname.includes(":") ? `[${hostname}]` : hostname;
  try {
    // Host: localhost, which the server always answers (a bind by name is not one it need know).
    const response = await fetch(`http://${host}:${port}/health/live`, { headers: { host: "localhost" }, signal: AbortSignal.timeout(1000) });
    const body = (await response.json()) as { app?: string };
    return body.app === "fermix";
  } catch {
    return false;
  }
}
