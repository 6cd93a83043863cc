/**
 * `search_files`: find files under a folder of the reach by name (a glob)
 * and/or by content (a regular expression, or plain text when it is not
 * one). The walk never follows a symbolic link — a link could lead out of
 * the reach — and skips `.git`, binary files and files over a megabyte.
 */
import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { resolveToolPath } from "../../sandbox/paths.ts";
import { type Tool, ToolError } from "../types.ts";
import { shownPath, type WorkspaceDeps } from "./deps.ts";
import { looksBinary } from "./files.ts";

const MAX_RESULTS = 200;
const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;
const SKIPPED_DIRS = new Set([".git"]);

type Reach = ReturnType<WorkspaceDeps["reach"]> & { canAsk: boolean };

/** The pattern as a regular expression; plain text when it does not compile. */
export function contentPattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch {
    return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  }
}

export function searchFilesTool(reach: () => Reach): Tool {
  return {
    spec: {
      name: "search_files",
      description:
        "Search a folder of the workspace (or a granted path) recursively: by file name (a glob such as *.md or src/**/*.ts) and/or by content (a regular expression). Give name, content or both.",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "the folder to search, relative to the workspace (default: the workspace)" },
          name: { type: "string", description: "glob the file name or its path under the folder must match" },
          content: { type: "string", description: "regular expression a line must match" },
        },
        additionalProperties: false,
      },
    },
    async run(args, ctx) {
      const r = reach();
      const name = typeof args.name === "string" && args.name !== "" ? new Bun.Glob(args.name) : null;
      const content = typeof args.content === "string" && args.content !== "" ? contentPattern(args.content) : null;
      if (!name && !content) throw new ToolError("give name (a glob), content (a pattern), or both");
      const root = resolveToolPath(args.path ?? ".", "read", r);
      if (!existsSync(root) || !statSync(root).isDirectory()) throw new ToolError(`${args.path ?? "."} is not a folder`);
      const results: string[] = [];
      let files = 0;
      let capped = false;
      const visit = (dir: string): void => {
        let entries: Dirent[];
        try {
          entries = readdirSync(dir, { withFileTypes: true });
        } catch {
          return;
        }
        for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
          if (capped || ctx.signal.aborted) return;
          const path = join(dir, entry.name);
          if (entry.isSymbolicLink()) continue;
          if (entry.isDirectory()) {
            if (!SKIPPED_DIRS.has(entry.name)) visit(path);
            continue;
          }
          if (!entry.isFile()) continue;
          if (++files > MAX_FILES) {
            capped = true;
            return;
          }
          const rel = relative(root, path);
          if (name && !name.match(rel) && !name.match(entry.name)) continue;
          const shown = shownPath(path, r.workspace);
          if (!content) {
            results.push(shown);
          } else {
            for (const match of grep(path, content)) results.push(`${shown}:${match.line}: ${match.text}`);
          }
          if (results.length >= MAX_RESULTS) capped = true;
        }
      };
      visit(root);
      if (results.length === 0) return "no matches";
      const shown = results.slice(0, MAX_RESULTS);
      return `${shown.join("\n")}${capped ? `\n[stopped after ${shown.length} results; narrow the search]` : ""}`;
    },
  };
}

function grep(path: string, pattern: RegExp): Array<{ line: number; text: string }> {
  let bytes: Buffer;
  try {
    if (statSync(path).size > MAX_FILE_BYTES) return [];
    bytes = readFileSync(path);
  } catch {
    return [];
  }
  if (looksBinary(bytes)) return [];
  const out: Array<{ line: number; text: string }> = [];
  bytes
    .toString("utf8")
    .split("\n")
    .forEach((text, i) => {
      if (out.length < MAX_RESULTS && pattern.test(text)) out.push({ line: i + 1, text: text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text });
    });
  return out;
}
