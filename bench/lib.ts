/**
 * Benchmark reporting: every figure is printed beside a baseline measured in
 * the same run, with their ratio. Benchmarks never assert; machines are noisy.
 */

export interface Figure {
  /** What was measured, e.g. "cold start: dist/fermix --version". */
  name: string;
  value: number;
  baseline: number;
  /** What the baseline is, e.g. "bare bun -e ''". */
  baselineName: string;
  unit: string;
  /** When smaller is better (time, memory), the ratio reads value/baseline; else the same, and the reader knows. */
  lowerIsBetter: boolean;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));

export function printFigure(f: Figure): void {
  const ratio = f.baseline === 0 ? Number.NaN : f.value / f.baseline;
  console.log(
    `${f.name.padEnd(58)} ${fmt(f.value).padStart(9)} ${f.unit.padEnd(7)} | ${f.baselineName}: ${fmt(f.baseline)} ${f.unit} | ratio ${ratio.toFixed(2)}x ${f.lowerIsBetter ? "(lower is better)" : "(higher is better)"}`,
  );
}

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A quantile (0..1) of a list of numbers. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
