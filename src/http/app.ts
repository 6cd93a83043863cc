/**
 * The one HTTP application: a sub-app per concern mounted on one Elysia
 * instance, the one place where errors become HTTP responses, and the one
 * check of who may ask (src/http/access.ts) before any route runs.
 */
import { type AnyElysia, Elysia } from "elysia";
import { describeError } from "../kernel/errors.ts";
import type { HealthReport } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import { type AccessPolicy, checkAccess } from "./access.ts";
import { type DashboardSource, dashboardRoutes } from "./dashboard/index.ts";
import { healthRoutes, jsonResponse } from "./health.ts";
import { type MetricsSource, metricsRoutes } from "./metrics.ts";
import type { SocketRoute } from "./server.ts";
import { type SetupGate, type SetupService, setupRoutes } from "./setup/index.ts";
import { type TalkSource, talkRoutes, talkSocket } from "./talk/index.ts";

export interface AppDeps {
  /** The Host names answered and, beyond loopback, the dashboard tokens; read per request. */
  access: AccessPolicy;
  report: () => HealthReport;
  setupGate: SetupGate;
  /** What the setup page reads and applies; absent, an authorized session is told to use the terminal. */
  setup?: SetupService;
  /** The status dashboard's data (`/`, `/events`); absent, `/` is a plain pointer to the health report. */
  dashboard?: DashboardSource;
  /** The counters behind `GET /metrics`. */
  metrics?: MetricsSource;
  log: Logger;
  /** Extra route groups (webhooks, dashboard) mounted by the composition root. */
  mounts?: AnyElysia[];
  /** Realtime voice for the Talk page (`/talk`); absent, there is no such page. */
  talk?: TalkSource;
}

export function createApp(deps: AppDeps) {
  const app = new Elysia({ name: "fermix", precompile: true })
    // Before routing, for every route mounted below and for paths that match none.
    .onRequest(({ request }) => checkAccess(request, deps.access))
    .onError(({ code, error }) => {
      if (code === "NOT_FOUND") return jsonResponse({ error: "Not Found" }, 404);
      if (code === "PARSE" || code === "VALIDATION" || code === "INVALID_COOKIE_SIGNATURE") {
        return jsonResponse({ error: "Bad Request" }, 400);
      }
      deps.log.error("http handler failed", { code: String(code), error: describeError(error) });
      return jsonResponse({ error: "Internal Server Error" }, 500);
    })
    .use(healthRoutes(deps.report))
    .use(setupRoutes(deps.setupGate, deps.setup));
  if (deps.metrics) app.use(metricsRoutes(deps.metrics));
  if (deps.dashboard) app.use(dashboardRoutes(deps.dashboard));
  else {
    app.get(
      "/",
      () =>
        new Response(
          '<!doctype html><title>Fermix</title><h1>Fermix</h1><p>The daemon is running. Its health report is at <a href="/health/ready?pretty=1">/health/ready</a>.</p>\n',
          { headers: { "content-type": "text/html; charset=utf-8" } },
        ),
    );
  }
  if (deps.talk) app.use(talkRoutes(deps.talk));
  for (const mount of deps.mounts ?? []) app.use(mount);
  return app;
}

/** The WebSocket routes served beside the app (src/http/server.ts): the Talk page's, behind the same access check. */
export function socketRoutes(deps: Pick<AppDeps, "access" | "talk">): SocketRoute[] {
  return deps.talk ? [talkSocket(deps.talk, deps.access)] : [];
}

export type FermixApp = ReturnType<typeof createApp>;
