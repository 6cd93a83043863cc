/**
 * A `/metrics` body read back with a Prometheus text-format parser
 * (parse-prometheus-text-format, prom2json's output shape), so a test
 * checks what a scraper would see, not what prom-client meant to write.
 */
// @ts-expect-error: the package ships no types; its output shape is declared below.
import parsePrometheusTextFormat from "parse-prometheus-text-format";

export interface Sample {
  labels?: Record<string, string>;
  value?: string;
  /** Histograms: upper bound → cumulative count. */
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface Family {
  name: string;
  help: string;
  type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  metrics: Sample[];
}

/** Parse an exposition; throws on text a scraper would reject. */
export function parseMetrics(text: string): Family[] {
  return parsePrometheusTextFormat(text) as Family[];
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(families: Family[], name: string, labels: Record<string, string> = {}, field: "value" | "count" = "value"): number {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.[field] === undefined ? 0 : Number(sample[field]);
}
