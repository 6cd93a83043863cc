/** The three health probes: `/health/live` (process only), `/health/ready` and `/health` (the report). */
import { Elysia } from "elysia";
import { type HealthReport, healthHttpStatus } from "../kernel/health.ts";

export function jsonResponse(body: unknown, status: number, pretty = false): Response {
  return new Response(pretty ? `${JSON.stringify(body, null, 2)}\n` : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

const isPretty = (query: Record<string, string | undefined>) => query.pretty === "1" || query.pretty === "true";

export function healthRoutes(report: () => HealthReport) {
  const ready = ({ query }: { query: Record<string, string | undefined> }) => {
    const current = report();
    return jsonResponse(current, healthHttpStatus(current), isPretty(query));
  };
  return new Elysia({ name: "health", precompile: true })
    .get("/health/live", ({ query }) => jsonResponse({ status: "alive", app: "fermix" }, 200, isPretty(query)))
    .get("/health/ready", ready)
    .get("/health", ready);
}
