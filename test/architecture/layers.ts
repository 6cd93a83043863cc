/**
 * The layer rules of docs/architecture.md, written down once: which folder of src/ may
 * import which. A file imports from its own floor and the floors below it;
 * a few rules are sharper than the floors (present is pure, channel adapters
 * never import each other, only the entry points reach the composition root),
 * and no import cycle is allowed anywhere.
 *
 * Imports are read from the source text, type-only imports included: a type
 * that lives on the wrong floor ties the floors together as surely as a value.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** The floors, top first. A file on a floor may import its own floor and any floor below it. */
export const FLOORS: readonly (readonly string[])[] = [
  ["main.ts"],
  ["cli"],
  ["daemon"],
  ["http"],
  // Setup's steps (validate, merge, write config and secrets, probe, check): shared by the
  // terminal wizard (cli/) and the web page (http/); below them, above the adapters.
  ["setup"],
  ["channels"],
  ["gateway"],
  // Siblings: the agent and the presentation layer never import each other.
  ["agent", "present"],
  ["store"],
  ["message"],
  ["config"],
  ["kernel", "version.ts"],
];

/** Rules sharper than the floors: [importer layer, imported layer, why]. */
const FORBIDDEN: ReadonlyArray<readonly [string, string, string]> = [
  ["present", "store", "present is pure: it never touches the database"],
  ["present", "agent", "present and the agent are siblings"],
  ["agent", "present", "present and the agent are siblings"],
  ["http", "daemon", "the daemon hands http what it serves; http never imports the composition root"],
  ["main.ts", "daemon", "main.ts only dispatches to cli/; the commands reach the composition root"],
];

/** Layers below config that may still use config's types (type-only imports). */
const CONFIG_TYPES_ONLY = new Set(["kernel", "version.ts"]);

export interface ImportEdge {
  /** Importing file, relative to src/. */
  from: string;
  /** Imported file, relative to src/. */
  to: string;
  typeOnly: boolean;
}

export interface Violation {
  file: string;
  imports: string;
  rule: string;
}

const IMPORT = /(?:^|[\s;{}])(import|export)\s+(type\s+)?(?:[^;"'`]*?\sfrom\s*)?["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)/g;

/** Every relative import of a source text: static (type-only or not), re-exports and dynamic imports. */
export function scanImports(source: string): Array<{ spec: string; typeOnly: boolean }> {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  const out: Array<{ spec: string; typeOnly: boolean }> = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[3] ?? match[4];
    if (!spec?.startsWith(".")) continue;
    const clause = match[0];
    const typeOnly = match[2] !== undefined || /^\s*[;{}]?\s*(?:import|export)\s*\{\s*(?:type\s+\w+\s*(?:as\s+\w+\s*)?,?\s*)+\}/.test(clause);
    out.push({ spec, typeOnly });
  }
  return out;
}

/** The layer of a path relative to src/: its first folder, or the file itself at the top level. */
export function layerOf(path: string): string {
  const [head] = path.split("/");
  return head!;
}

function floorOf(layer: string): number {
  return FLOORS.findIndex((floor) => floor.includes(layer));
}

/** Channel adapter folder of a path under channels/, if any (channels/<name>/…). */
function adapterOf(path: string): string | undefined {
  const parts = path.split("/");
  return parts[0] === "channels" && parts.length > 2 ? parts[1] : undefined;
}

/** Why this import breaks a rule, or undefined when it is allowed. */
export function ruleBroken(edge: ImportEdge): string | undefined {
  const from = layerOf(edge.from);
  const to = layerOf(edge.to);
  if (from === to) {
    const a = adapterOf(edge.from);
    const b = adapterOf(edge.to);
    if (a && b && a !== b) return `a channel adapter (${a}) never imports another adapter (${b})`;
    return undefined;
  }
  for (const [importer, imported, why] of FORBIDDEN) if (from === importer && to === imported) return why;
  const fromFloor = floorOf(from);
  const toFloor = floorOf(to);
  if (fromFloor < 0) return `${from} is not on any floor: add it to FLOORS in test/architecture/layers.ts`;
  if (toFloor < 0) return `${to} is not on any floor: add it to FLOORS in test/architecture/layers.ts`;
  if (to === "config" && CONFIG_TYPES_ONLY.has(from)) return edge.typeOnly ? undefined : `${from} may use config's types only`;
  if (toFloor < fromFloor) return `${from} is below ${to}: layers point down (${FLOORS.map((f) => f.join("/")).join(" → ")})`;
  return undefined;
}

/** Every import edge between files of src/. */
export function importGraph(srcDir: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) {
        for (const { spec, typeOnly } of scanImports(readFileSync(path, "utf8"))) {
          const target = resolve(dirname(path), spec);
          const to = relative(srcDir, target);
          if (to.startsWith("..")) continue; // package.json and the like, outside src/
          edges.push({ from: relative(srcDir, path), to, typeOnly });
        }
      }
    }
  };
  walk(srcDir);
  return edges;
}

export function violations(edges: readonly ImportEdge[]): Violation[] {
  return edges.flatMap((edge) => {
    const rule = ruleBroken(edge);
    return rule ? [{ file: edge.from, imports: edge.to, rule }] : [];
  });
}

/** Import cycles (strongly connected components of more than one file, or a file importing itself), each as its files. */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const { from, to } of edges) {
    graph.set(from, [...(graph.get(from) ?? []), to]);
    if (!graph.has(to)) graph.set(to, []);
  }
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      for (let member = stack.pop()!; ; member = stack.pop()!) {
        onStack.delete(member);
        component.push(member);
        if (member === node) break;
      }
      if (component.length > 1 || graph.get(node)!.includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}
