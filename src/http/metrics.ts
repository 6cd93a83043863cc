/** `GET /metrics`: the daemon's counters in the Prometheus text format, from the registry it is handed. */
import { Elysia } from "elysia";

export interface MetricsSource {
  /** The exposition's content type (prom-client's registry says which format version). */
  readonly contentType: string;
  text(): Promise<string>;
}

export function metricsRoutes(source: MetricsSource) {
  return new Elysia({ name: "metrics" }).get(
    "/metrics",
    async () => new Response(await source.text(), { headers: { "content-type": source.contentType, "cache-control": "no-store" } }),
  );
}
