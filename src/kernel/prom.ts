/**
 * The four prom-client classes the metrics use, loaded from their own files.
 * prom-client's index also loads its push gateway (node:http, node:https,
 * node:zlib, node:url) and its default collectors (node:cluster, perf_hooks):
 * about 8 MB of resident memory for code the daemon never calls. These are
 * the very classes the index re-exports, typed by its declarations.
 */
import type * as PromClient from "prom-client";

export const Registry: typeof PromClient.Registry = require("prom-client/lib/registry.js");
export const Counter: typeof PromClient.Counter = require("prom-client/lib/counter.js");
export const Gauge: typeof PromClient.Gauge = require("prom-client/lib/gauge.js");
export const Histogram: typeof PromClient.Histogram = require("prom-client/lib/histogram.js");
export type Registry = PromClient.Registry;
export type Counter<L extends string = string> = PromClient.Counter<L>;
export type Gauge<L extends string = string> = PromClient.Gauge<L>;
export type Histogram<L extends string = string> = PromClient.Histogram<L>;
