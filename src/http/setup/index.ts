/**
 * `/setup`, the web face of `fermix setup`. `GET /setup?t=<launch token>`
 * spends the token for a session cookie and redirects to `/setup` (the
 * token leaves the address bar and history); `GET /setup` with the cookie
 * shows the form; `POST /setup` with the cookie and the form's CSRF token
 * validates, writes config and secrets exactly as the terminal does
 * (src/setup/), applies them through the daemon's reload, shows the result
 * and ends the session. Anything else is `403 setup authorization required`.
 */
import { Elysia } from "elysia";
import { ConfigError } from "../../config/errors.ts";
import { parseConfigText } from "../../config/load.ts";
import type { ReloadResult } from "../../kernel/health.ts";
import type { Logger } from "../../kernel/log.ts";
import { checkProvider } from "../../setup/check.ts";
import { planSetup } from "../../setup/plan.ts";
import { telegramGetMe, TelegramSetupError } from "../../setup/telegram.ts";
import { applySetup, type CurrentSetup } from "../../setup/write.ts";
import { html } from "../html.ts";
import { page } from "../page.ts";
import { type FormContext, type FormState, formNameFor, initialForm, submittedForm } from "./form.ts";
import { SESSION_COOKIE, SESSION_TTL_MS, type SetupGate, type SetupSession, sameSecret } from "./gate.ts";
import { renderDone, renderWizard } from "./render.ts";

export { SetupGate } from "./gate.ts";

/** What the composition root hands the page: what is on disk, and how to apply it. */
export interface SetupService {
  /** config.toml's text, the secret store and the secrets in it (readCurrentSetup). */
  current(): Promise<CurrentSetup>;
  /** Apply what was written to the running daemon (its reload). */
  reload(): Promise<ReloadResult>;
  log: Logger;
  /** Live checks (the provider's model list, Telegram's getMe); each resolves to a problem or undefined. */
  checks?: {
    provider(input: { baseUrl: string; apiKey?: string | undefined; model: string }): Promise<string | undefined>;
    telegram(token: string, apiRoot: string): Promise<string | undefined>;
  };
}

const defaultChecks: NonNullable<SetupService["checks"]> = {
  async provider(input) {
    const result = await checkProvider(input);
    return result.ok ? undefined : result.message;
  },
  async telegram(token, apiRoot) {
    try {
      await telegramGetMe(token, { apiRoot });
      return undefined;
    } catch (error) {
      return error instanceof TelegramSetupError ? error.message : String(error);
    }
  },
};

const forbidden = () =>
  new Response("setup authorization required\n", {
    status: 403,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });

function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

/** Whether the browser reached us over HTTPS (directly, or through a proxy that says so). */
function overHttps(request: Request): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return forwarded === "https" || new URL(request.url).protocol === "https:";
}

function sessionCookie(request: Request, value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/setup; Max-Age=${maxAgeSeconds}${overHttps(request) ? "; Secure" : ""}`;
}

/** Per session: secrets typed in an attempt that failed, kept here (never in a page) until it succeeds. */
const typedBySession = new WeakMap<SetupSession, Record<string, string>>();

export function setupRoutes(gate: SetupGate, service?: SetupService) {
  const checks = service?.checks ?? defaultChecks;

  const context = (current: CurrentSetup, typed: Record<string, string>): { ctx: FormContext } | { error: string } => {
    try {
      const file = parseConfigText(current.text, current.paths.config);
      const { resolved } = planSetup({ currentText: current.text, currentSecrets: current.secrets, changes: [], filePath: current.paths.config });
      return { ctx: { file, config: resolved.config, exists: current.exists, secrets: current.secrets, typed } };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  };

  const wizard = (form: FormState, ctx: FormContext, session: SetupSession, current: CurrentSetup, status = 200) =>
    page({ title: "Fermix setup", body: renderWizard({ form, config: ctx.config, csrf: session.csrf, configPath: current.paths.config }), status });

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
    const form = initialForm(made.ctx);
    form.checked.check = true;
    return wizard(form, made.ctx, session, current);
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
    const retry = () => wizard(form, { ...ctx, typed: typedBySession.get(session)! }, session, current, 422);
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
        const problem = await checks.provider({ baseUrl: primary[1].base_url, apiKey: primary[1].api_key, model: primary[1].model });
        if (problem) form.errors["provider.model"] = `check failed: ${problem}`;
      }
      const telegram = config.fermix_channels.telegram;
      if (telegram.enabled && telegram.bot_token && submitted.telegramChanged) {
        const problem = await checks.telegram(telegram.bot_token, telegram.api_root);
        if (problem) form.errors["fermix_channels.telegram.bot_token"] = `check failed: ${problem}`;
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
  return error.message.split("\n").find((line) => line.trim().startsWith(`${key} `))?.trim() ?? error.message;
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
