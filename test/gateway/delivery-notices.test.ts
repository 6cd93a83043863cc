/**
 * What the user is told when something cannot be delivered, and what goes
 * in a part's place: the words name what was lost (by the row's purpose)
 * and where, a code block comes back as its text, a file without text to
 * send is named, and nobody is told about a notice.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import { horizonNotice, Notices, preview, setAsideNotice } from "../../src/gateway/delivery/notices.ts";
import { openDatabase } from "../../src/store/db.ts";
import { Outbox, type OutboxPart, type OutboxPayload, type OutboxPurpose } from "../../src/store/outbox.ts";
import { partsPresenter, TARGET } from "../store/fixtures/outbox-reply.ts";

let root: string;
let db: Database;
let outbox: Outbox;
let notices: Notices;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-notices-"));
  db = openDatabase(join(root, "fermix.db"));
  outbox = new Outbox(db);
  notices = new Notices({ outbox, presenter: partsPresenter, channels: profileOf });
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

const texts = (parts: OutboxPart[]) => parts.map((p) => (p.payload.kind === "text" ? p.payload.message.text : "?"));
function recorded(payload: OutboxPayload, purpose: OutboxPurpose = "reply"): OutboxPart {
  return outbox.record("r1", "whatsapp", TARGET, [payload], { purpose })[0]!;
}
const file = (inline?: string): OutboxPayload => ({
  kind: "media",
  media: { kind: "document", path: "/nonexistent", filename: "snippet.py", mime: "text/x-python", notify: false },
  ...(inline !== undefined ? { inline } : {}),
});

test("the words say what was lost, on which platform, and how it began", () => {
  expect(horizonNotice("job", "Telegram", 20, "Your weekly report")).toBe(
    "⚠️ I couldn't deliver a scheduled job's result: Telegram was not taking messages for 20 min. It began: “Your weekly report”. Ask me again if you still need it.",
  );
  expect(setAsideNotice("reply", "WhatsApp", "")).toBe("⚠️ I couldn't deliver part of an answer: WhatsApp kept refusing it while it took other messages.");
  expect(preview(`${"word ".repeat(40)}`)).toHaveLength(78);
});

test("in a code block's place: its text, as plain messages, recorded once however often asked", () => {
  const part = recorded(file('print("hi")'));
  const first = notices.instead(part, "set_aside");
  expect(texts(first)).toEqual(['snippet.py:\nprint("hi")']);
  expect(first.map((p) => p.purpose)).toEqual(["inline_fallback"]);
  expect(notices.instead(part, "set_aside").map((p) => p.id)).toEqual(first.map((p) => p.id));
});

test("in place of a file without text to send, or a text set aside: one line; a refused text gets none (its reply stops)", () => {
  expect(texts(notices.instead(recorded(file()), "refused"))).toEqual(["⚠️ I couldn't send the file snippet.py."]);
  const text = outbox.record(
    "r2",
    "whatsapp",
    TARGET,
    [{ kind: "text", message: { text: "The tide tables", notify: true, linkPreview: false, plain: false } }],
    { purpose: "background" },
  )[0]!;
  expect(texts(notices.instead(text, "set_aside"))).toEqual([
    "⚠️ I couldn't deliver part of a background task's result: WhatsApp kept refusing it while it took other messages. It began: “The tide tables”.",
  ]);
  expect(notices.instead(outbox.parts("r2")[0]!, "refused")).toEqual([]);
});

test("a notice about something undelivered is never itself the subject of a notice", () => {
  const notice = recorded(
    { kind: "text", message: { text: "⚠️ I couldn't deliver an answer.", notify: true, linkPreview: false, plain: false } },
    "undelivered_notice",
  );
  expect(notices.instead(notice, "set_aside")).toEqual([]);
  expect(notices.horizon(notice, notice, 30)).toEqual([]);
});
