/**
 * The file tools: `read_file`, `write_file`, `edit_file` (exact-match
 * replace) and `list_dir`. Every `path` is opened inside the reach through
 * descriptors (src/agent/sandbox/open.ts): the tool then reads, writes or
 * lists what it opened — never a name again, which a command running beside
 * it could have swapped for a link meanwhile. Only regular files and
 * folders are used; contents and listings move through the thread pool.
 */
import { Type } from "@sinclair/typebox";
import { exclusive, fileSizeBelow, type Kind, linkTarget, listBelow, readFd, replaceFd } from "../../sandbox/fsat.ts";
import { type Opened, openInReach } from "../../sandbox/open.ts";
import { defineTool, type Tool, ToolError } from "../types.ts";
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

export function readFileTool(reach: () => Reach): Tool {
  return defineTool({
    name: "read_file",
    description:
      "Read a text file from the workspace (or a path granted to you). Long files come in pages: pass offset (first line, from 1) and limit (number of lines).",
    parameters: Type.Object(
      {
        path: Type.String({ description: "the file, relative to the workspace (or an absolute granted path)" }),
        offset: Type.Optional(Type.Integer({ minimum: 1, description: "first line to return (1-based)" })),
        limit: Type.Optional(Type.Integer({ minimum: 1, description: "how many lines to return" })),
      },
      { additionalProperties: false },
    ),
    async run(args) {
      const r = reach();
      const { offset, limit } = args;
      const opened = openInReach(args.path, "read", r);
      if (!opened) throw new ToolError(`no such file: ${args.path}`);
      const bytes = await closingAfter(opened, async () => {
        if (opened.kind === "folder") throw new ToolError(`${args.path} is a directory; use list_dir`);
        const read = opened.size > READ_MAX_BYTES ? undefined : await readFd(opened.fd, READ_MAX_BYTES, opened.size);
        if (!read || read.more)
          throw new ToolError(
            `${args.path} is ${Math.max(opened.size, READ_MAX_BYTES + 1)} bytes, too large to read; use search_files or run_command (head, grep) on it`,
          );
        return read.bytes;
      });
      if (looksBinary(bytes)) return `${shownPath(opened.path, r.workspace)} is a binary file (${bytes.byteLength} bytes); not shown`;
      const text = bytes.toString("utf8");
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
  });
}

/** Run `work` on what was opened (a file's content one tool call at a time), closing it afterwards whatever happens. */
async function closingAfter<T>(opened: Opened, work: () => Promise<T>): Promise<T> {
  try {
    return await (opened.kind === "file" ? exclusive(opened.identity, work) : work());
  } finally {
    opened.close();
  }
}

export function writeFileTool(reach: () => Reach): Tool {
  return defineTool({
    name: "write_file",
    description: "Create or overwrite a text file in the workspace (or a path granted read-write), creating its folders.",
    parameters: Type.Object(
      {
        path: Type.String({ description: "the file, relative to the workspace" }),
        content: Type.String({ description: "the whole new content" }),
      },
      { additionalProperties: false },
    ),
    async run(args) {
      const r = reach();
      const { content } = args;
      const opened = openInReach(args.path, "write", r);
      if (!opened) throw new ToolError(`cannot create ${args.path}: its folder vanished meanwhile; try again`);
      await closingAfter(opened, () => replaceFd(opened.fd, Buffer.from(content)));
      return `wrote ${Buffer.byteLength(content)} bytes to ${shownPath(opened.path, r.workspace)}`;
    },
  });
}

export function editFileTool(reach: () => Reach): Tool {
  return defineTool({
    name: "edit_file",
    description: "Replace exact text in a file: old_string must match the file exactly (whitespace included) and only once, unless replace_all is true.",
    parameters: Type.Object(
      {
        path: Type.String({ description: "the file, relative to the workspace" }),
        old_string: Type.String({ description: "the exact text to replace" }),
        new_string: Type.String({ description: "what to put instead" }),
        replace_all: Type.Optional(Type.Boolean({ description: "replace every occurrence (default: exactly one must exist)" })),
      },
      { additionalProperties: false },
    ),
    async run(args) {
      const r = reach();
      const { old_string: oldString, new_string: newString } = args;
      if (oldString === "") throw new ToolError("old_string must not be empty; use write_file to create a file");
      const opened = openInReach(args.path, "edit", r);
      if (!opened) throw new ToolError(`no such file: ${args.path}`);
      const count = await closingAfter(opened, async () => {
        const read = opened.size > READ_MAX_BYTES ? undefined : await readFd(opened.fd, READ_MAX_BYTES, opened.size);
        if (!read || read.more) throw new ToolError(`${args.path} is over ${READ_MAX_BYTES} bytes, too large to edit; use run_command (sed) on it`);
        const text = read.bytes.toString("utf8");
        const found = text.split(oldString).length - 1;
        if (found === 0) throw new ToolError(`old_string was not found in ${args.path}; read the file and copy the text exactly`);
        if (found > 1 && args.replace_all !== true) {
          throw new ToolError(`old_string occurs ${found} times in ${args.path}; include more surrounding text to make it unique, or set replace_all`);
        }
        await replaceFd(opened.fd, Buffer.from(text.split(oldString).join(newString)));
        return found;
      });
      return `replaced ${count} occurrence${count === 1 ? "" : "s"} in ${shownPath(opened.path, r.workspace)}`;
    },
  });
}

export function listDirTool(reach: () => Reach): Tool {
  return defineTool({
    name: "list_dir",
    description: "List a folder of the workspace (or a granted path): folders end in /, links show their target, files their size.",
    parameters: Type.Object(
      { path: Type.Optional(Type.String({ description: "the folder, relative to the workspace (default: the workspace itself)" })) },
      { additionalProperties: false },
    ),
    async run(args) {
      const r = reach();
      const path = args.path ?? ".";
      const opened = openInReach(path, "read", r);
      if (!opened) throw new ToolError(`no such folder: ${path}`);
      return closingAfter(opened, async () => {
        if (opened.kind !== "folder") throw new ToolError(`${path} is a file; use read_file`);
        const entries = (await listBelow(opened.fd)).sort((a, b) =>
          (a.kind === "folder") === (b.kind === "folder") ? a.name.localeCompare(b.name) : a.kind === "folder" ? -1 : 1,
        );
        const shown = entries.slice(0, LIST_LIMIT).map((entry) => entryLine(opened.fd, entry));
        const header = `${shownPath(opened.path, r.workspace)}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"}`;
        const more = entries.length > LIST_LIMIT ? `\n[${entries.length - LIST_LIMIT} more not shown]` : "";
        return `${header}\n${shown.join("\n")}${more}`;
      });
    },
  });
}

const SPECIAL_WORDS: Partial<Record<Kind, string>> = { fifo: "named pipe", socket: "socket", device: "device", other: "special file" };

/** One line of a listing, read below the folder's descriptor: folders end in /, links show their target, files their size. */
function entryLine(dirfd: number, entry: { name: string; kind: Kind }): string {
  if (entry.kind === "link") return `${entry.name} -> ${linkTarget(dirfd, entry.name) ?? "?"}`;
  if (entry.kind === "folder") return `${entry.name}/`;
  if (entry.kind === "file") return `${entry.name} (${fileSizeBelow(dirfd, entry.name) ?? 0} bytes)`;
  return `${entry.name} (${SPECIAL_WORDS[entry.kind]})`;
}
