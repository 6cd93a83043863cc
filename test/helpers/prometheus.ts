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

/**
 * One series of a labelled histogram: its buckets, count and sum, for the
 * series whose labels (besides `le`) are exactly `labels`. The parser folds
 * every series of a histogram into one and drops labelled counts, so it is
 * handed the family's HELP and TYPE lines and that series' sample lines
 * with their other labels taken off.
 */
export function histogramSeries(text: string, name: string, labels: Record<string, string>): Sample | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const kept: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(`# HELP ${name} `) || line === `# TYPE ${name} histogram`) {
      kept.push(line);
      continue;
    }
    const sample = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!sample || ![`${name}_bucket`, `${name}_count`, `${name}_sum`].includes(sample[1]!)) continue;
    const pairs = [...sample[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!] as [string, string]);
    if (JSON.stringify(pairs.filter(([k]) => k !== "le").sort()) !== wanted) continue;
    const le = pairs.find(([k]) => k === "le");
    kept.push(`${sample[1]}${le ? `{le="${le[1]}"}` : ""} ${sample[3]}`);
  }
  const sample = parseMetrics(`${kept.join("\n")}\n`).find((f) => f.name === name)?.metrics[0];
  return sample?.count !== undefined ? sample : undefined;
}
