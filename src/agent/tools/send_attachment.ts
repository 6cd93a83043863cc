/**
 * `send_attachment {"path": "...", "caption": "..."}`: send a file from the
 * workspace through the reply port. The file is opened inside the workspace
 * through descriptors (src/agent/sandbox/open.ts) and copied from that
 * descriptor into a private folder of the spool, and the copy is what goes:
 * the outbox may send it later (after a retry, or a restart), and by then
 * the workspace name could stand for something else. Copies are swept with
 * the spool (src/store/retention.ts). The same file, caption and chat within
 * 60 seconds is sent once (a duplicate-send cache, kept in SQLite: a model
 * that repeats the call, or a turn replayed after a restart, sends it once).
 */

import { randomUUID } from "node:crypto";
import { mkdirSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Type } from "@sinclair/typebox";
import { mediaKindForMime } from "../../message/index.ts";
import { copyFd, exclusive, TooLarge } from "../sandbox/fsat.ts";
import { openInReach } from "../sandbox/open.ts";
import type { Reach } from "../sandbox/paths.ts";
import { defineTool, ToolError } from "./types.ts";

/** Above every platform's own limit for a file: nothing larger is copied only to be refused. */
export const MAX_ATTACHMENT_BYTES = 1024 * 1024 * 1024;

/**
 * The spool beside the workspace: `<home>/spool`, as src/daemon/core.ts hands
 * it to delivery (the workspace is `<home>/workspace`, src/config/paths.ts).
 * Out of the tools' and the commands' reach.
 */
export function spoolFor(workspace: string): string {
  return join(dirname(workspace), "spool");
}

/** The workspace alone, as send_attachment may reach it (grants are for the owner's file tools). */
function workspaceReach(workspace: string): Reach {
  return { workspace: realpathSync(workspace), readOnly: [], grants: [], homeDir: "", canAsk: false };
}

/** A private copy of `path` in the spool, with the SHA-256 of its bytes; the caller removes `dir` when it is not sent. */
async function privateCopy(path: string, workspace: string): Promise<{ dir: string; copy: string; digest: string }> {
  const opened = openInReach(path, "read", workspaceReach(workspace));
  if (!opened) throw new ToolError(`no such file: ${path}`);
  try {
    if (opened.kind !== "file") throw new ToolError(`${path} is not a file`);
    const dir = join(spoolFor(workspace), `attachment-${randomUUID()}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const copy = join(dir, basename(opened.path));
    const hasher = new Bun.CryptoHasher("sha256");
    try {
      await exclusive(opened.identity, () => copyFd(opened.fd, copy, MAX_ATTACHMENT_BYTES, (bytes) => hasher.update(bytes)));
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      if (error instanceof TooLarge) throw new ToolError(`${path} is over ${MAX_ATTACHMENT_BYTES} bytes, too large to send`);
      throw error;
    }
    return { dir, copy, digest: hasher.digest("hex") };
  } finally {
    opened.close();
  }
}

export const sendAttachmentTool = defineTool({
  name: "send_attachment",
  description: "Send a file from the workspace to the user as an attachment, with an optional caption.",
  parameters: Type.Object(
    {
      path: Type.String({ description: "path of the file, relative to the workspace" }),
      caption: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  async run(args, ctx) {
    const caption = args.caption ?? "";
    const { dir, copy, digest } = await privateCopy(args.path, ctx.workspace);
    const mime = (Bun.file(copy).type || "application/octet-stream").split(";")[0]!;
    const filename = basename(copy);
    const kind = mediaKindForMime(mime);
    const dedupeKey = new Bun.CryptoHasher("sha256")
      .update(JSON.stringify([ctx.target.chatId, ctx.target.threadId ?? "", kind, caption, filename, mime, digest]))
      .digest("hex");
    const key = `media:${dedupeKey}`;
    if (!ctx.idempotency.claim(ctx.channel, key, "outbound_media")) {
      rmSync(dir, { recursive: true, force: true });
      return `${filename} was already sent here within the last minute; not sent again`;
    }
    if (!ctx.port.capabilities.media) {
      rmSync(dir, { recursive: true, force: true });
      await ctx.say(`📎 ${filename}${caption ? ` — ${caption}` : ""}`);
      ctx.effects.attachments++;
      return `this channel cannot carry files; told the user the file name instead`;
    }
    try {
      await ctx.port.sendMedia({ kind, path: copy, filename, mime, notify: false, ...(caption ? { caption } : {}) });
    } catch (error) {
      // Nothing was sent: forget the key, or the retry the cache exists for would be suppressed for a minute.
      ctx.idempotency.forget(ctx.channel, [key]);
      throw error;
    }
    ctx.effects.attachments++;
    return `sent ${filename}`;
  },
});
