/**
 * The file tools: `read_file`, `write_file`, `edit_file` (exact-match
 * replace) and `list_dir`. Every `path` is resolved to its real path and
 * checked against the reach before anything is touched, and the tool then
 * works on that real path — never on the words the model gave.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { resolveToolPath } from "../../sandbox/paths.ts";
import { type Tool, ToolError } from "../types.ts";
import { shownPath, type WorkspaceDeps } from "./deps.ts";

/** The most of a file read_file returns at once (characters); `offset`/`limit` page through the rest. */
export const READ_LIMIT_CHARS = 100_000;
/** Files larger than this are not read whole (bytes). */
const READ_MAX_BYTES = 10 * 1024 * 1024;
const LIST_LIMIT = 500;

type Reach = ReturnType<WorkspaceDeps["reach"]> & { canAsk: boolean };

/** True when the bytes look binary (a NUL in the first 8 KB). */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

const str = (value: unknown, name: string): string => {
  if (typeof value !== "string") throw new ToolError(`${name} must be a string`);
  return value;
};

const positive = (value: unknown, name: string): number | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw new ToolError(`${name} must be a whole number from 1`);
  return value;
};

export function readFileTool(reach: () => Reach): Tool {
  return {
    spec: {
      name: "read_file",
      description:
        "Read a text file from the workspace (or a path granted to you). Long files come in pages: pass offset (first line, from 1) and limit (number of lines).",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "the file, relative to the workspace (or an absolute granted path)" },
          offset: { type: "integer", minimum: 1, description: "first line to return (1-based)" },
          limit: { type: "integer", minimum: 1, description: "how many lines to return" },
        },
        required: ["path"],
        additionalProperties: false,
      },
    },
    async run(args) {
      const r = reach();
      const real = resolveToolPath(args.path, "read", r);
      if (!existsSync(real)) throw new ToolError(`no such file: ${args.path}`);
      const stat = statSync(real);
      if (stat.isDirectory()) throw new ToolError(`${args.path} is a directory; use list_dir`);
      if (stat.size > READ_MAX_BYTES) throw new ToolError(`${args.path} is ${stat.size} bytes, too large to read; use search_files or run_command (head, grep) on it`);
      const bytes = readFileSync(real);
      if (looksBinary(bytes)) return `${shownPath(real, r.workspace)} is a binary file (${bytes.byteLength} bytes); not shown`;
      const text = bytes.toString("utf8");
      const offset = positive(args.offset, "offset");
      const limit = positive(args.limit, "limit");
      const lines = text.split("\n");
      let body = text;
      let first = 1;
      if (offset !== undefined || limit !== undefined) {
        first = offset ?? 1;
        if (first > lines.length) throw new ToolError(`${args.path} has ${lines.length} lines; offset ${first} is past the end`);
        body = lines.slice(first - 1, limit === undefined ? undefined : first - 1 + limit).join("\n");
      }
      if (body.length <= READ_LIMIT_CHARS) return body;
      const cut = body.slice(0, READ_LIMIT_CHARS);
      const shownLines = cut.split("\n").length;
      return `${cut}\n\n[truncated: showing lines ${first}–${first + shownLines - 1} of ${lines.length}; read on with offset ${first + shownLines - 1}]`;
    },
  };
}

export function writeFileTool(reach: () => Reach): Tool {
  return {
    spec: {
      name: "write_file",
      description: "Create or overwrite a text file in the workspace (or a path granted read-write), creating its folders.",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "the file, relative to the workspace" },
          content: { type: "string", description: "the whole new content" },
        },
        required: ["path", "content"],
        additionalProperties: false,
      },
    },
    async run(args) {
      const r = reach();
      const content = str(args.content, "content");
      const real = resolveToolPath(args.path, "write", r);
      if (existsSync(real) && statSync(real).isDirectory()) throw new ToolError(`${args.path} is a directory`);
      mkdirSync(dirname(real), { recursive: true });
      writeFileSync(real, content);
      return `wrote ${Buffer.byteLength(content)} bytes to ${shownPath(real, r.workspace)}`;
    },
  };
}

export function editFileTool(reach: () => Reach): Tool {
  return {
    spec: {
      name: "edit_file",
      description:
        "Replace exact text in a file: old_string must match the file exactly (whitespace included) and only once, unless replace_all is true.",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "the file, relative to the workspace" },
          old_string: { type: "string", description: "the exact text to replace" },
          new_string: { type: "string", description: "what to put instead" },
          replace_all: { type: "boolean", description: "replace every occurrence (default: exactly one must exist)" },
        },
        required: ["path", "old_string", "new_string"],
        additionalProperties: false,
      },
    },
    async run(args) {
      const r = reach();
      const oldString = str(args.old_string, "old_string");
      const newString = str(args.new_string, "new_string");
      if (oldString === "") throw new ToolError("old_string must not be empty; use write_file to create a file");
      const real = resolveToolPath(args.path, "write", r);
      if (!existsSync(real)) throw new ToolError(`no such file: ${args.path}`);
      if (statSync(real).isDirectory()) throw new ToolError(`${args.path} is a directory`);
      const text = readFileSync(real, "utf8");
      const count = text.split(oldString).length - 1;
      if (count === 0) throw new ToolError(`old_string was not found in ${args.path}; read the file and copy the text exactly`);
      if (count > 1 && args.replace_all !== true) {
        throw new ToolError(`old_string occurs ${count} times in ${args.path}; include more surrounding text to make it unique, or set replace_all`);
      }
      writeFileSync(real, text.split(oldString).join(newString));
      return `replaced ${count} occurrence${count === 1 ? "" : "s"} in ${shownPath(real, r.workspace)}`;
    },
  };
}

export function listDirTool(reach: () => Reach): Tool {
  return {
    spec: {
      name: "list_dir",
      description: "List a folder of the workspace (or a granted path): folders end in /, links show their target, files their size.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "the folder, relative to the workspace (default: the workspace itself)" } },
        additionalProperties: false,
      },
    },
    async run(args) {
      const r = reach();
      const real = resolveToolPath(args.path ?? ".", "read", r);
      if (!existsSync(real)) throw new ToolError(`no such folder: ${args.path ?? "."}`);
      if (!statSync(real).isDirectory()) throw new ToolError(`${args.path} is a file; use read_file`);
      const entries = readdirSync(real, { withFileTypes: true }).sort((a, b) =>
        a.isDirectory() === b.isDirectory() ? a.name.localeCompare(b.name) : a.isDirectory() ? -1 : 1,
      );
      const lines = entries.slice(0, LIST_LIMIT).map((entry) => {
        const path = join(real, entry.name);
        if (entry.isSymbolicLink()) return `${entry.name} -> ${readlinkSafe(path)}`;
        if (entry.isDirectory()) return `${entry.name}/`;
        return `${entry.name} (${sizeOf(path)} bytes)`;
      });
      const header = `${shownPath(real, r.workspace)}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"}`;
      const more = entries.length > LIST_LIMIT ? `\n[${entries.length - LIST_LIMIT} more not shown]` : "";
      return `${header}\n${lines.join("\n")}${more}`;
    },
  };
}

function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}

function sizeOf(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}
