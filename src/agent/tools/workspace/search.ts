/**
 * `search_files`: find files under a folder of the reach by name (a glob)
 * and/or by content (a regular expression, or plain text when it is not
 * one). The folder is opened inside the reach through descriptors
 * (src/agent/sandbox/open.ts) and walked below them one name at a time: a
 * symbolic link is never followed — it could lead out of the reach — nor is
 * anything but a regular file read. Skips `.git`, binary files and files
 * over a megabyte; contents and listings move through the thread pool.
 */

import { join, relative } from "node:path";
import { Type } from "@sinclair/typebox";
import { closeFd, listBelow, openBelow, readFd } from "../../sandbox/fsat.ts";
import { openInReach } from "../../sandbox/open.ts";
import { defineTool, type Tool, ToolError } from "../types.ts";
import { shownPath, type WorkspaceDeps } from "./deps.ts";
import { looksBinary } from "./files.ts";

const MAX_RESULTS = 200;
const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;
const SKIPPED_DIRS = new Set([".git"]);
/** Folders deeper than this are not entered: each level holds a descriptor open while the walk is below it. */
const MAX_DEPTH = 64;

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
  return defineTool({
    name: "search_files",
    description:
      "Search a folder of the workspace (or a granted path) recursively: by file name (a glob such as *.md or src/**/*.ts) and/or by content (a regular expression). Give name, content or both.",
    parameters: Type.Object(
      {
        path: Type.Optional(Type.String({ description: "the folder to search, relative to the workspace (default: the workspace)" })),
        name: Type.Optional(Type.String({ description: "glob the file name or its path under the folder must match" })),
        content: Type.Optional(Type.String({ description: "regular expression a line must match" })),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const r = reach();
      const name = args.name ? new Bun.Glob(args.name) : null;
      const content = args.content ? contentPattern(args.content) : null;
      if (!name && !content) throw new ToolError("give name (a glob), content (a pattern), or both");
      const path = args.path ?? ".";
      const root = openInReach(path, "read", r);
      if (root?.kind !== "folder") {
        root?.close();
        throw new ToolError(`${path} is not a folder`);
      }
      const results: string[] = [];
      let files = 0;
      let capped = false;
      let tooDeep = false;
      const visit = async (dirfd: number, dir: string, depth: number): Promise<void> => {
        let entries: Awaited<ReturnType<typeof listBelow>>;
        try {
          entries = await listBelow(dirfd);
        } catch {
          return;
        }
        for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
          if (capped || ctx.signal.aborted) return;
          const path = join(dir, entry.name);
          if (entry.kind === "folder") {
            if (SKIPPED_DIRS.has(entry.name)) continue;
            if (depth >= MAX_DEPTH) {
              tooDeep = true;
              continue;
            }
            // Opened without following: a folder swapped for a link since the listing is not entered.
            const step = openBelow(dirfd, entry.name, "folder");
            if (step.found !== "opened") continue;
            try {
              await visit(step.fd, path, depth + 1);
            } finally {
              closeFd(step.fd);
            }
            continue;
          }
          if (entry.kind !== "file") continue;
          if (++files > MAX_FILES) {
            capped = true;
            return;
          }
          const rel = relative(root.path, path);
          if (name && !name.match(rel) && !name.match(entry.name)) continue;
          const shown = shownPath(path, r.workspace);
          if (!content) {
            results.push(shown);
          } else {
            for (const match of await grep(dirfd, entry.name, content)) results.push(`${shown}:${match.line}: ${match.text}`);
          }
          if (results.length >= MAX_RESULTS) capped = true;
        }
      };
      try {
        await visit(root.fd, root.path, 0);
      } finally {
        root.close();
      }
      const deep = tooDeep ? `\n[folders more than ${MAX_DEPTH} levels down were not searched]` : "";
      if (results.length === 0) return `no matches${deep}`;
      const shown = results.slice(0, MAX_RESULTS);
      return `${shown.join("\n")}${capped ? `\n[stopped after ${shown.length} results; narrow the search]` : ""}${deep}`;
    },
  });
}

/** The lines of the regular file `name` in `dirfd` that match, read through its descriptor; none for a binary or large file. */
async function grep(dirfd: number, name: string, pattern: RegExp): Promise<Array<{ line: number; text: string }>> {
  let bytes: Buffer;
  let step: ReturnType<typeof openBelow>;
  try {
    step = openBelow(dirfd, name, "read");
  } catch {
    return [];
  }
  if (step.found !== "opened") return [];
  try {
    if (step.kind !== "file" || step.size > MAX_FILE_BYTES) return [];
    const read = await readFd(step.fd, MAX_FILE_BYTES, step.size);
    if (read.more) return [];
    bytes = read.bytes;
  } catch {
    return [];
  } finally {
    closeFd(step.fd);
  }
  if (looksBinary(bytes)) return [];
  const out: Array<{ line: number; text: string }> = [];
  bytes
    .toString("utf8")
    .split("\n")
    .forEach((text, i) => {
      if (out.length < MAX_RESULTS && pattern.test(text))
        out.push({ line: i + 1, text: text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text });
    });
  return out;
}
