/**
 * The architecture test: src/ keeps its floors (docs/architecture.md) and has no import
 * cycle. A failure names the file, what it imports and the rule it breaks.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cycles, type ImportEdge, importGraph, ruleBroken, scanImports, violations } from "./layers.ts";

const SRC = join(import.meta.dir, "../../src");

test("every import in src/ points down a floor, and no channel adapter imports another", () => {
  const found = violations(importGraph(SRC)).map((v) => `${v.file} imports ${v.imports}: ${v.rule}`);
  expect(found).toEqual([]);
});

test("src/ has no import cycle", () => {
  expect(cycles(importGraph(SRC)).map((c) => c.join(" ↔ "))).toEqual([]);
});

describe("the rules themselves", () => {
  const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });
  test("a deliberate bad import is named with its rule", () => {
    const bad = [edge("store/inbox.ts", "gateway/ingest.ts", true), edge("gateway/dispatch.ts", "channels/types.ts")];
    expect(violations(bad)).toEqual([
      { file: "store/inbox.ts", imports: "gateway/ingest.ts", rule: expect.stringContaining("store is below gateway") },
      { file: "gateway/dispatch.ts", imports: "channels/types.ts", rule: expect.stringContaining("gateway is below channels") },
    ]);
  });
  test("each sharp rule holds", () => {
    expect(ruleBroken(edge("present/render.ts", "store/outbox.ts"))).toContain("pure");
    expect(ruleBroken(edge("present/stream.ts", "agent/agent.ts"))).toContain("siblings");
    expect(ruleBroken(edge("agent/agent.ts", "present/render.ts"))).toContain("siblings");
    expect(ruleBroken(edge("agent/agent.ts", "channels/types.ts"))).toContain("below");
    expect(ruleBroken(edge("agent/agent.ts", "http/app.ts"))).toContain("below");
    expect(ruleBroken(edge("http/app.ts", "daemon/core.ts"))).toContain("composition root");
    expect(ruleBroken(edge("main.ts", "daemon/daemon.ts"))).toContain("composition root");
    expect(ruleBroken(edge("gateway/ingest.ts", "cli/chat.ts"))).toContain("below");
    expect(ruleBroken(edge("channels/slack/index.ts", "channels/telegram/api.ts"))).toContain("another adapter");
    expect(ruleBroken(edge("message/index.ts", "gateway/queue.ts"))).toContain("below");
    expect(ruleBroken(edge("kernel/telemetry.ts", "config/schema.ts", true))).toBeUndefined();
    expect(ruleBroken(edge("kernel/telemetry.ts", "config/load.ts", false))).toContain("types only");
    expect(ruleBroken(edge("widgets/x.ts", "kernel/log.ts"))).toContain("not on any floor");
  });
  test("what may be imported is allowed", () => {
    for (const [from, to] of [
      ["main.ts", "cli/index.ts"],
      ["cli/run.ts", "daemon/daemon.ts"],
      ["daemon/daemon.ts", "http/app.ts"],
      ["http/webhooks/index.ts", "channels/slack/verify.ts"],
      ["channels/registry.ts", "channels/slack/index.ts"],
      ["channels/slack/index.ts", "channels/net.ts"],
      ["gateway/ingest.ts", "agent/agent.ts"],
      ["present/stream.ts", "message/stream.ts"],
      ["store/inbox.ts", "message/index.ts"],
      ["agent/agent.ts", "store/conversations.ts"],
    ] as const) {
      expect(ruleBroken(edge(from, to))).toBeUndefined();
    }
  });
  test("a cycle is found, through type-only imports too", () => {
    expect(cycles([edge("a/x.ts", "a/y.ts"), edge("a/y.ts", "a/z.ts", true), edge("a/z.ts", "a/x.ts")])).toEqual([["a/x.ts", "a/y.ts", "a/z.ts"]]);
    expect(cycles([edge("a/x.ts", "a/y.ts"), edge("a/y.ts", "a/z.ts")])).toEqual([]);
  });
  test("imports are read from the text: type-only, re-exports, dynamic, multi-line; comments ignored", () => {
    const source = [
      'import type { A } from "./a.ts";',
      'import { type B, type C as D } from "./b.ts";',
      'import {\n  E,\n  type F,\n} from "./e.ts";',
      'export { G } from "./g.ts";',
      'export type { H } from "./h.ts";',
      'const lazy = () => import("./lazy.ts");',
      '// import { X } from "./commented.ts";',
      '/* import { Y } from "./block.ts"; */',
      'import { Z } from "bun:sqlite";',
      'const url = "https://example.com/x"; import "./side.ts";',
    ].join("\n");
    expect(scanImports(source)).toEqual([
      { spec: "./a.ts", typeOnly: true },
      { spec: "./b.ts", typeOnly: true },
      { spec: "./e.ts", typeOnly: false },
      { spec: "./g.ts", typeOnly: false },
      { spec: "./h.ts", typeOnly: true },
      { spec: "./lazy.ts", typeOnly: false },
      { spec: "./side.ts", typeOnly: false },
    ]);
  });
});
