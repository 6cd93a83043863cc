/**
 * `/setup`, the web face of `fermix setup`. `GET /setup?t=<launch token>`
 * spends the token for a session cookie and redirects to `/setup` (the
 * token leaves the address bar and history); `GET /setup` with the cookie
 * shows the form; `POST /setup` with the cookie and the form's CSRF token
 * validates, writes config and secrets exactly as the terminal does
 * (src/setup/), applies them through the daemon's reload, shows the result
 * and ends the session. Anything else is `403 setup authorization required`.
 *
 * Two steps wait on the world, as in the terminal: the form offers the
 * model servers found on this machine (probed in parallel as the page is
 * made, never for more than PROBE_TIMEOUT_MS), and `POST /setup` with
 * `pair=<channel>` (a channel whose profile offers owner pairing: Telegram)
 * waits for a message to the bot and shows the form again with its sender
 * as the owner (the page streams a waiting line first).
 */
import { Elysia } from "elysia";
import { profileOf } from "../../channels/registry.ts";
import { SetupCheckError } from "../../channels/setup.ts";
import { ConfigError } from "../../config/errors.ts";
import { type Env, parseConfigText } from "../../config/load.ts";
import type { ChannelName } from "../../config/schema.ts";
import { describeError } from "../../kernel/errors.ts";
import type { ReloadResult } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import { checkProvider, type ProviderCheckInput } from "../../setup/check.ts";
import { SETUP_CHANNELS, type SetupChannel } from "../../setup/fields.ts";
import type { DaemonPairing } from "../../setup/pairing.ts";
import { planSetup } from "../../setup/plan.ts";
import { type LocalServer, probeLocalServers, probeTargets } from "../../setup/probe.ts";
import { applySetup, type CurrentSetup } from "../../setup/write.ts";
import { cookieValue, overHttps } from "../cookies.ts";
import { html } from "../html.ts";
import { page, streamedPage } from "../page.ts";
import { type FormContext, type FormState, formNameFor, initialForm, submittedForm } from "./form.ts";
import { SESSION_COOKIE, SESSION_TTL_MS, type SetupGate, type SetupSession, sameSecret } from "./gate.ts";
import { botFor, pairIntoForm, pairingOf, pairTarget, tokenField } from "./pair.ts";
import { renderDone, renderPairWaiting, renderWizard, WIZARD_SCRIPT } from "./render.ts";

/** How long each local model server has to answer as the page is made (they are asked in parallel). */
export const PROBE_TIMEOUT_MS = 800;
/** How long pairing waits for a message when the service names no time. */
export const PAIR_TIMEOUT_MS = 90_000;
/** How long the page waits on the bot check to name the bot on the Pair button. */
const BOT_NAME_TIMEOUT_MS = 1000;

export { randomToken, SetupGate } from "./gate.ts";

/** What the composition root hands the page: what is on disk, and how to apply it. */
export interface SetupService {
  /** config.toml's text, the secret store and the secrets in it (readCurrentSetup). */
  current(): Promise<CurrentSetup>;
  /** Apply what was written to the running daemon (its reload). */
  reload(): Promise<ReloadResult>;
  log: Logger;
  /**
   * Live checks: the provider's model list, and by channel name the token of
   * each channel that pairs its owner (Telegram's getMe). Each resolves to a
   * problem or undefined.
   */
  checks?: { provider(input: ProviderCheckInput): Promise<string | undefined> } & {
    [C in ChannelName]?: (token: string, apiRoot: string) => Promise<string | undefined>;
  };
  /** The daemon's environment: FERMIX_SETUP_PROBES names the local model servers to look for. Without it, none is looked for. */
  env?: Env;
  /** How long owner pairing waits for a message, in ms (default PAIR_TIMEOUT_MS). */
  pairTimeoutMs?: () => number;
  /**
   * The running daemon's next unknown sender on the pairing channel, when it
   * polls this very token ("unavailable" otherwise: then the page polls the
   * platform itself).
   */
  pairThroughDaemon?: (token: string, timeoutMs: number, signal?: AbortSignal) => Promise<DaemonPairing>;
  /** Reaches the platforms and local servers (tests); default fetch. */
  fetch?: typeof fetch;
}

/** The checks when the service names none: the provider's model list, and each pairing channel's own bot check. */
const defaultChecks: NonNullable<SetupService["checks"]> = {
  async provider(input) {
    const result = await checkProvider(input);
    return result.ok ? undefined : result.message;
  },
  ...Object.fromEntries(
    SETUP_CHANNELS.flatMap((name) => {
      const pairing = profileOf(name).setup?.pairing;
      if (!pairing) return [];
      const check = async (token: string, apiRoot: string) => {
        try {
          await pairing.bot(token, { apiRoot });
          return undefined;
        } catch (error) {
          return error instanceof SetupCheckError ? error.message : String(error);
        }
      };
      return [[name, check]];
    }),
  ),
};

const forbidden = () =>
  new Response("setup authorization required\n", {
    status: 403,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });

function sessionCookie(request: Request, value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/setup; Max-Age=${maxAgeSeconds}${overHttps(request) ? "; Secure" : ""}`;
}

/** Per session: secrets typed in an attempt that failed, kept here (never in a page) until it succeeds. */
const typedBySession = new WeakMap<SetupSession, Record<string, string>>();
/** Per session and pairing channel: the bot its token belongs to, once checked (keyed by the token, so a new token asks again). */
const botBySession = new WeakMap<SetupSession, Map<SetupChannel, { token: string; username: string }>>();
const botsOf = (session: SetupSession) => botBySession.getOrInsertComputed(session, () => new Map());
/** Per session: the pairing waiting now; a second Pair ends the first (one poller per token). */
const pairingBySession = new WeakMap<SetupSession, AbortController>();

export function setupRoutes(gate: SetupGate, service?: SetupService) {
  const checks = service?.checks ?? defaultChecks;

  const context = (current: CurrentSetup, typed: Record<string, string>): { ctx: FormContext } | { error: string } => {
    try {
      const file = parseConfigText(current.text, current.paths.config);
      const { resolved } = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes: [], filePath: current.paths.config });
      return { ctx: { file, config: resolved.config, exists: current.exists, secrets: current.secrets, typed } };
    } catch (error) {
      return { error: describeError(error) };
    }
  };

  const pairSeconds = () => Math.round((service?.pairTimeoutMs?.() ?? PAIR_TIMEOUT_MS) / 1000);

  /** Ask the usual ports (or FERMIX_SETUP_PROBES) for their models, all at once, briefly. */
  const probe = (): Promise<LocalServer[]> =>
    service?.env
      ? probeLocalServers(probeTargets(service.env), { timeoutMs: PROBE_TIMEOUT_MS, ...(service.fetch ? { fetch: service.fetch } : {}) })
      : Promise.resolve([]);

  /** The bots' usernames for the Pair buttons, where a token is known (asked once per token and session, briefly). */
  const botNames = async (session: SetupSession, ctx: FormContext, form: FormState): Promise<void> => {
    for (const name of SETUP_CHANNELS) {
      const pairing = profileOf(name).setup?.pairing;
      const target = pairing && pairTarget(name, pairing, form, ctx.typed, ctx.config);
      if (!target || botsOf(session).get(name)?.token === target.token) continue;
      const bot = await botFor(target, service?.fetch, BOT_NAME_TIMEOUT_MS);
      if ("username" in bot) botsOf(session).set(name, { token: target.token, username: bot.username });
    }
  };

  const renderFor = (form: FormState, ctx: FormContext, session: SetupSession, current: CurrentSetup, servers: readonly LocalServer[]) =>
    renderWizard({
      form,
      config: ctx.config,
      csrf: session.csrf,
      configPath: current.paths.config,
      servers,
      pairing: { seconds: pairSeconds(), bots: Object.fromEntries([...botsOf(session)].map(([name, bot]) => [name, bot.username])) },
    });

  const wizard = (form: FormState, ctx: FormContext, session: SetupSession, current: CurrentSetup, servers: readonly LocalServer[], status = 200) =>
    page({ title: "Fermix setup", body: renderFor(form, ctx, session, current, servers), script: WIZARD_SCRIPT, status });

  const brokenConfig = (message: string, current: CurrentSetup) =>
    page({
      title: "Fermix setup",
      status: 409,
      body: renderBroken(message, current.paths.config),
    });

  const show = async (session: SetupSession) => {
    if (!service) return unavailable();
    const current = await service.current();
    const made = context(current, typedBySession.get(session) ?? {});
    if ("error" in made) return brokenConfig(made.error, current);
    const servers = await probe();
    const ctx = { ...made.ctx, servers };
    const form = initialForm(ctx);
    form.checked.check = true;
    await botNames(session, ctx, form);
    return wizard(form, ctx, session, current, servers);
  };

  /** Pair a channel's owner by a message to the bot: the form comes back with the sender filled in, or a line saying why not. */
  const pair = async (session: SetupSession, request: Request, input: Record<string, string>, channel: NonNullable<ReturnType<typeof pairingOf>>) => {
    if (!service) return unavailable();
    const current = await service.current();
    const earlier = typedBySession.get(session) ?? {};
    const made = context(current, earlier);
    if ("error" in made) return brokenConfig(made.error, current);
    const servers = probe();
    const submitted = submittedForm(input, made.ctx);
    const { form } = submitted;
    // Nothing is saved by pairing: the form's problems wait for the save.
    form.errors = {};
    form.general = [];
    form.checked.check = input.check !== undefined;
    const typed = { ...earlier, ...submitted.typed };
    typedBySession.set(session, typed);
    const ctx = { ...made.ctx, typed, servers: await servers };
    const again = (status: number) => wizard(form, ctx, session, current, ctx.servers, status);

    const target = pairTarget(channel.name, channel.pairing, form, typed, ctx.config);
    const tokenName = tokenField(channel.name, channel.pairing);
    if (!target) {
      form.errors[tokenName] = "Enter the bot token first: pairing waits for a message to that bot.";
      return again(422);
    }
    const bot = await botFor(target, service.fetch);
    if ("problem" in bot) {
      form.errors[tokenName] = bot.problem;
      return again(422);
    }
    botsOf(session).set(channel.name, { token: target.token, username: bot.username });
    pairingBySession.get(session)?.abort();
    const waiting = new AbortController();
    pairingBySession.set(session, waiting);
    const timeoutMs = service.pairTimeoutMs?.() ?? PAIR_TIMEOUT_MS;
    const rest = (async () => {
      const outcome = await pairIntoForm(form, {
        target,
        bot: bot.username,
        timeoutMs,
        signal: AbortSignal.any([waiting.signal, request.signal]),
        ...(service.pairThroughDaemon ? { throughDaemon: service.pairThroughDaemon } : {}),
        ...(service.fetch ? { fetch: service.fetch } : {}),
      });
      if (pairingBySession.get(session) === waiting) pairingBySession.delete(session);
      service.log.info("owner pairing from the web page", { channel: channel.name, outcome });
      return renderFor(form, ctx, session, current, ctx.servers);
    })();
    return streamedPage({
      title: "Fermix setup",
      first: renderPairWaiting(channel.name, bot.username, Math.round(timeoutMs / 1000)),
      rest,
      script: WIZARD_SCRIPT,
    });
  };

  const save = async (session: SetupSession, request: Request, input: Record<string, string>) => {
    if (!service) return unavailable();
    const current = await service.current();
    const earlier = typedBySession.get(session) ?? {};
    const made = context(current, earlier);
    if ("error" in made) return brokenConfig(made.error, current);
    const { ctx } = made;
    const submitted = submittedForm(input, ctx);
    const { form } = submitted;
    form.checked.check = input.check !== undefined;
    // Typed secrets stay with the session (server side) so a failed attempt does not ask for them again.
    typedBySession.set(session, { ...earlier, ...submitted.typed });
    // Shown again: the local servers are asked again (a server started meanwhile is offered).
    const retry = async () => wizard(form, { ...ctx, typed: typedBySession.get(session)! }, session, current, await probe(), 422);
    if (Object.keys(form.errors).length > 0) return retry();

    let plan: ReturnType<typeof planSetup>;
    try {
      plan = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes: submitted.changes, filePath: current.paths.config });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of error.issues) form.errors[formNameFor(issue.key)] = error.message.includes("\n") ? issueText(error, issue.key) : error.message;
      if (error.issues.length === 0) form.general.push(error.message);
      return retry();
    }

    if (form.checked.check) {
      const config = plan.resolved.config;
      const primary = Object.entries(config.fermix_core.providers).find(([, p]) => p.primary);
      if (primary && submitted.providerChanged) {
        const problem = await checks.provider({
          baseUrl: primary[1].base_url,
          apiKey: primary[1].api_key,
          model: primary[1].model,
          api: primary[1].api,
          authHeader: primary[1].auth_header,
        });
        if (problem) form.errors["provider.model"] = `check failed: ${problem}`;
      }
      for (const name of submitted.channelsChanged) {
        const pairing = profileOf(name).setup?.pairing;
        const check = checks[name];
        const section = config.fermix_channels[name] as Record<string, unknown> & { enabled: boolean };
        const token = pairing ? section[pairing.tokenKey] : undefined;
        if (!pairing || !check || !section.enabled || typeof token !== "string" || token === "") continue;
        const problem = await check(token, String(section[pairing.apiRootKey]));
        if (problem) form.errors[tokenField(name, pairing)] = `check failed: ${problem}`;
      }
      if (Object.keys(form.errors).length > 0) {
        form.general.push("A live check failed (untick the check to save anyway).");
        return retry();
      }
    }

    const applied = await applySetup(current, submitted.changes);
    const reload = await service.reload();
    service.log.info("setup saved from the web page", {
      wrote: applied.wrote,
      changed: applied.plan.changed.length,
      health: reload.health.status,
      restart_required: reload.restart_required.join("; "),
    });
    typedBySession.delete(session);
    botBySession.delete(session);
    pairingBySession.get(session)?.abort();
    gate.end(session.id);
    return page({
      title: "Fermix setup",
      body: renderDone({
        configPath: applied.configPath,
        ...(applied.backupPath ? { backupPath: applied.backupPath } : {}),
        secretStore: applied.secretStore,
        secretsStored: Object.keys(applied.plan.secrets).length,
        wrote: applied.wrote,
        reload,
      }),
      headers: { "set-cookie": sessionCookie(request, "", 0) },
    });
  };

  return new Elysia({ name: "setup" }).all("/setup", async ({ request }) => {
    const url = new URL(request.url);
    const session = gate.session(cookieValue(request.headers.get("cookie"), SESSION_COOKIE));
    const token = url.searchParams.get("t");
    if (request.method === "GET" && token !== null) {
      // A launch link: spend the token (even with a session open) and drop it from the address bar.
      const opened = gate.redeem(token);
      if (!opened) return forbidden();
      return new Response(null, {
        status: 303,
        headers: { location: "/setup", "cache-control": "no-store", "set-cookie": sessionCookie(request, opened.id, SESSION_TTL_MS / 1000) },
      });
    }
    if (!session) return forbidden();
    if (request.method === "GET" || request.method === "HEAD") return show(session);
    if (request.method !== "POST") return forbidden();
    const input = await formFields(request);
    if (!input || typeof input.csrf !== "string" || !sameSecret(input.csrf, session.csrf)) return forbidden();
    const pairing = input.pair ? pairingOf(input.pair) : undefined;
    if (pairing) return pair(session, request, input, pairing);
    return save(session, request, input);
  });
}

/** A urlencoded (or multipart) form body as name → value; undefined when it is not a form. */
async function formFields(request: Request): Promise<Record<string, string> | undefined> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")) return undefined;
  try {
    const data = await request.formData();
    const fields: Record<string, string> = {};
    for (const [name, value] of data) if (typeof value === "string") fields[name] = value;
    return fields;
  } catch {
    return undefined;
  }
}

/** The loader's line for one key (its message lists every issue). */
function issueText(error: ConfigError, key: string): string {
  return (
    error.message
      .split("\n")
      .find((line) => line.trim().startsWith(`${key} `))
      ?.trim() ?? error.message
  );
}

function unavailable(): Response {
  return page({
    title: "Fermix setup",
    status: 503,
    body: renderBroken("The setup page is not available in this process. Run `fermix setup` in a terminal.", ""),
  });
}

function renderBroken(message: string, configPath: string) {
  return html`<header class="top"><h1 class="brand"><span class="mark"></span>Fermix setup</h1></header>
<main><div class="banner bad" role="alert">${message}</div>
${configPath ? html`<p class="lead">Fix <code>${configPath}</code> by hand (or move it away), then reload this page.</p>` : ""}</main>`;
}
