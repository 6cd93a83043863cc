/**
 * `send_attachment {"path": "...", "caption": "..."}`: send a file from the
 * workspace through the reply port. The same file, caption and chat within
 * 60 seconds is sent once (the seed's duplicate-send cache, kept in SQLite).
 */
import { realpathSync, statSync } from "node:fs";
import { basename, isAbsolute, join, relative } from "node:path";
import { mediaKindForMime } from "../../message/index.ts";
import { type Tool, ToolError } from "./types.ts";


/** Resolve a path the model gave, refusing anything outside the workspace (symlinks included). */
export function resolveInWorkspace(workspace: string, path: string): string {
  const root = realpathSync(workspace);
  let resolved: string;
  try {
    resolved = realpathSync(isAbsolute(path) ? path : join(root, path));
  } catch {
    throw new ToolError(`no such file: ${path}`);
  }
  const rel = relative(root, resolved);
  if (rel.startsWith("..") || isAbsolute(rel)) throw new ToolError(`${path} is outside the workspace; only files under ${root} can be sent`);
  if (!statSync(resolved).isFile()) throw new ToolError(`${path} is not a file`);
  return resolved;
}

export const sendAttachmentTool: Tool = {
  spec: {
    name: "send_attachment",
    description: "Send a file from the workspace to the user as an attachment, with an optional caption.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "path of the file, relative to the workspace" },
        caption: { type: "string" },
      },
      required: ["path"],
      additionalProperties: false,
    },
  },
  async run(args, ctx) {
    if (typeof args.path !== "string" || args.path === "") throw new ToolError("path is required");
    const caption = typeof args.caption === "string" ? args.caption : "";
    const path = resolveInWorkspace(ctx.workspace, args.path);
    const file = Bun.file(path);
    const mime = (file.type || "application/octet-stream").split(";")[0]!;
    const filename = basename(path);
    const kind = mediaKindForMime(mime);
    const digest = new Bun.CryptoHasher("sha256").update(await file.arrayBuffer()).digest("hex");
    const dedupeKey = new Bun.CryptoHasher("sha256")
      .update(JSON.stringify([ctx.target.chatId, ctx.target.threadId ?? "", kind, caption, filename, mime, digest]))
      .digest("hex");
    const key = `media:${dedupeKey}`;
    if (!ctx.idempotency.claim(ctx.channel, key, "outbound_media")) {
      return `${filename} was already sent here within the last minute; not sent again`;
    }
    if (!ctx.port.capabilities.media) {
      await ctx.say(`📎 ${filename}${caption ? ` — ${caption}` : ""}`);
      ctx.effects.attachments++;
      return `this channel cannot carry files; told the user the file name instead`;
    }
    try {
      await ctx.port.sendMedia({ kind, path, filename, mime, notify: false, ...(caption ? { caption } : {}) });
    } catch (error) {
      // Nothing was sent: forget the key, or the retry the cache exists for would be suppressed for a minute.
      ctx.idempotency.forget(ctx.channel, [key]);
      throw error;
    }
    ctx.effects.attachments++;
    return `sent ${filename}`;
  },
};
