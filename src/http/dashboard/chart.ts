/**
 * The last hour as an inline SVG: per minute, a bar for messages in and one
 * for messages out, and a line for turns. Pure and server-side: the page
 * needs no chart library and the numbers come from the metrics' own log.
 */
import type { ChartBucket } from "../../kernel/activity.ts";
import { type Html, html, raw } from "../html.ts";

const WIDTH = 600;
const HEIGHT = 120;
const TOP = 8;

export function hourChart(buckets: readonly ChartBucket[]): Html {
  const sum = (pick: (b: ChartBucket) => number) => buckets.reduce((n, b) => n + pick(b), 0);
  const turns = sum((b) => b.turns);
  const inbound = sum((b) => b.inbound);
  const outbound = sum((b) => b.outbound);
  const peak = Math.max(1, ...buckets.map((b) => Math.max(b.inbound, b.outbound, b.turns)));
  const slot = WIDTH / Math.max(1, buckets.length);
  const y = (n: number) => HEIGHT - (n / peak) * (HEIGHT - TOP);
  const bars: string[] = [];
  const points: string[] = [];
  buckets.forEach((b, i) => {
    const x = i * slot;
    if (b.inbound > 0)
      bars.push(
        `<rect class="k-in" x="${(x + slot * 0.1).toFixed(1)}" y="${y(b.inbound).toFixed(1)}" width="${(slot * 0.38).toFixed(1)}" height="${(HEIGHT - y(b.inbound)).toFixed(1)}" rx="1"/>`,
      );
    if (b.outbound > 0)
      bars.push(
        `<rect class="k-out" x="${(x + slot * 0.52).toFixed(1)}" y="${y(b.outbound).toFixed(1)}" width="${(slot * 0.38).toFixed(1)}" height="${(HEIGHT - y(b.outbound)).toFixed(1)}" rx="1"/>`,
      );
    points.push(`${(x + slot / 2).toFixed(1)},${y(b.turns).toFixed(1)}`);
  });
  const label = `Last hour: ${turns} turns, ${inbound} messages in, ${outbound} out`;
  const svg =
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="${label}">` +
    `<line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"/>` +
    bars.join("") +
    (turns > 0 ? `<polyline class="turnline" points="${points.join(" ")}"/>` : "") +
    `</svg>`;
  return html`<div class="chart">${raw(svg)}
<div class="legend"><span><i class="k-in"></i>${inbound} in</span><span><i class="k-out"></i>${outbound} out</span><span><i class="k-turn"></i>${turns} turns</span><span class="muted">per minute, last 60 min · peak ${peak}</span></div></div>`;
}
