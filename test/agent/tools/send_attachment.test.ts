/**
 * send_attachment sends what it opened: a private copy made from the
 * descriptor into the spool, which later changes of the workspace (the file
 * rewritten, its name swapped for a link to a secret) do not reach. Paths out
 * of the workspace, links out of it, folders, pipes and sockets are refused
 * with a clear error and leave nothing behind.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendAttachmentTool, spoolFor } from "../../../src/agent/tools/send_attachment.ts";
import type { ToolContext } from "../../../src/agent/tools/types.ts";
import { resultText } from "../../../src/agent/tools/types.ts";
import type { OutboundMedia, ReplyPort } from "../../../src/message/index.ts";
import { openDatabase } from "../../../src/store/db.ts";
import { IdempotencyStore } from "../../../src/store/idempotency.ts";

let root: string;
let workspace: string;
let db: Database;
let sent: OutboundMedia[];

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "fermix-attach-")));
  workspace = join(root, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(root, "secret.txt"), "the owner's secret\n");
  db = openDatabase(join(root, "fermix.db"));
  sent = [];
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

function context(): ToolContext {
  const port = {
    capabilities: { edit: false, delete: false, react: false, media: true, typing: false },
    sendMedia: async (media: OutboundMedia) => {
      sent.push(media);
      return { id: `m${sent.length}` };
    },
  } as unknown as ReplyPort;
  return {
    port,
    channel: "telegram",
    conversation: "telegram:42:",
    senderId: "42",
    role: "operator",
    target: { chatId: "42" },
    workspace,
    idempotency: new IdempotencyStore(db),
    signal: new AbortController().signal,
    effects: { reacted: false, attachments: 0 },
    say: async () => {},
  };
}

/** Run the tool as the agent does: a thrown error is what the model reads. */
async function send(args: Record<string, unknown>): Promise<string> {
  try {
    return resultText(await sendAttachmentTool.run(args, context()));
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

const copies = () => (existsSync(spoolFor(workspace)) ? readdirSync(spoolFor(workspace)) : []);

describe("what is sent", () => {
  test("a private copy in the spool, made from the opened file: later changes in the workspace do not reach it", async () => {
    writeFileSync(join(workspace, "report.txt"), "quarterly numbers\n");
    expect(await send({ path: "report.txt", caption: "the report" })).toBe("sent report.txt");
    expect(sent).toHaveLength(1);
    const media = sent[0]!;
    expect(media).toMatchObject({ kind: "document", filename: "report.txt", caption: "the report", mime: "text/plain" });
    expect(media.path).toStartWith(join(root, "spool", "attachment-"));
    expect(statSync(media.path).mode & 0o777).toBe(0o600);
    // The name is rewritten, then swapped for a link to the secret: the copy the outbox will read is what was checked.
    writeFileSync(join(workspace, "report.txt"), "changed\n");
    rmSync(join(workspace, "report.txt"));
    symlinkSync(join(root, "secret.txt"), join(workspace, "report.txt"));
    expect(readFileSync(media.path, "utf8")).toBe("quarterly numbers\n");
  });

  test("a link that stays in the workspace is followed, and the file goes under its own name", async () => {
    mkdirSync(join(workspace, "out"));
    writeFileSync(join(workspace, "out", "chart.csv"), "a,b\n1,2\n");
    symlinkSync("out/chart.csv", join(workspace, "latest"));
    expect(await send({ path: "latest" })).toBe("sent chart.csv");
    expect(readFileSync(sent[0]!.path, "utf8")).toBe("a,b\n1,2\n");
  });

  test("the same file again within the minute sends nothing and leaves no copy behind", async () => {
    writeFileSync(join(workspace, "a.txt"), "alpha");
    expect(await send({ path: "a.txt" })).toBe("sent a.txt");
    expect(await send({ path: "a.txt" })).toContain("already sent");
    expect(sent).toHaveLength(1);
    expect(copies()).toHaveLength(1);
  });
});

describe("what is refused", () => {
  test("outside the workspace, by `..`, by an absolute path, or through a link on the way or at the end", async () => {
    symlinkSync(root, join(workspace, "up"));
    symlinkSync(join(root, "secret.txt"), join(workspace, "secret-link"));
    for (const path of ["../secret.txt", join(root, "secret.txt"), "up/secret.txt", "secret-link"]) {
      const out = await send({ path });
      expect([path, out]).toEqual([path, expect.stringMatching(/^error: .*(outside the workspace)/)]);
    }
    expect(await send({ path: "secret-link" })).toContain("secret-link is a symbolic link that points outside the workspace");
    expect(sent).toEqual([]);
    expect(copies()).toEqual([]);
  });

  test("a folder, a named pipe and a socket are refused at once, and nothing is sent", async () => {
    mkdirSync(join(workspace, "folder"));
    expect(Bun.spawnSync(["mkfifo", join(workspace, "pipe")]).exitCode).toBe(0);
    const listener = Bun.listen({ unix: join(workspace, "sock"), socket: { data() {} } });
    try {
      expect(await send({ path: "folder" })).toBe("error: folder is not a file");
      expect(await send({ path: "pipe" })).toBe("error: pipe is a named pipe (FIFO), not a regular file or folder: the file tools read and write only those.");
      expect(await send({ path: "sock" })).toBe(
        "error: sock is a socket or a named pipe, not a regular file or folder: the file tools read and write only those.",
      );
      expect(await send({ path: "nope.txt" })).toBe("error: no such file: nope.txt");
    } finally {
      listener.stop(true);
    }
    expect(sent).toEqual([]);
    expect(copies()).toEqual([]);
  });
});
