/**
 * Recording parts: each row carries the purpose it was recorded for (the
 * key is only an identity), a reply over max_reply_parts becomes its first
 * part, a line and answer.md, and files recorded one by one for the same
 * reply each keep their own content on disk until sent.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { FakeClock } from "../helpers/clock.ts";
import { buildDelivery, scriptedPlatform } from "../helpers/delivery.ts";
import { TARGET } from "../store/fixtures/outbox-reply.ts";

let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-record-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

function setup() {
  const time = new FakeClock(1_000_000);
  const p = scriptedPlatform(time.now);
  return { time, p, ...buildDelivery(db, root, time, p.port) };
}

test("each way of recording says what the row is for", async () => {
  const { delivery, outbox, p } = setup();
  delivery.record("telegram", TARGET, "telegram:42:1", "an answer");
  await delivery.say("telegram", TARGET, "telegram:42:1:n0", "a command's reply", p.port);
  await delivery.say("telegram", TARGET, "bg:3:telegram:1", "a background result", p.port, undefined, "background");
  delivery.record("telegram", TARGET, "job:5:1000", "a job's result", 0, undefined, "job");
  const live = delivery.durablePort("telegram", TARGET, "job:5:1000:media", p.port, "media");
  await live.sendMedia({ kind: "document", path: "/dev/null", filename: "chart.png", mime: "image/png", notify: false });
  const purposes = (key: string) => outbox.parts(key).map((x) => x.purpose);
  expect(purposes("telegram:42:1")).toEqual(["reply"]);
  expect(purposes("telegram:42:1:n0")).toEqual(["notice"]);
  expect(purposes("bg:3:telegram:1")).toEqual(["background"]);
  expect(purposes("job:5:1000")).toEqual(["job"]);
  expect(purposes("job:5:1000:media")).toEqual(["media"]);
});

test("two code blocks with the same file name, recorded one after the other for one reply, each go with their own text", async () => {
  const { delivery, outbox } = setup();
  const first = delivery.recordFiles("telegram", TARGET, "r1", [{ filename: "snippet.py", mime: "text/x-python", content: "print(1)" }]);
  const second = delivery.recordFiles("telegram", TARGET, "r1", [{ filename: "snippet.py", mime: "text/x-python", content: "print(2)" }]);
  const paths = [...first, ...second].map((x) => (x.payload.kind === "media" ? x.payload.media.path : ""));
  expect(new Set(paths).size).toBe(2);
  expect(paths.map((path) => readFileSync(path, "utf8"))).toEqual(["print(1)", "print(2)"]);
  expect(outbox.parts("r1").map((x) => x.part)).toEqual([0, 1]);
});

test("a reply over max_reply_parts: its first part, a line saying so, and the whole answer as answer.md", () => {
  const time = new FakeClock(1_000_000);
  const p = scriptedPlatform(time.now);
  const { delivery } = buildDelivery(db, root, time, p.port);
  const answer = Array.from({ length: 14 }, (_, i) => `section ${i + 1}`).join("\n---\n");
  const parts = delivery.record("telegram", TARGET, "r1", answer);
  expect(parts.map((x) => (x.payload.kind === "text" ? x.payload.message.text : `file:${x.payload.media.filename}`))).toEqual([
    "section 1",
    "_The whole answer is long (14 messages), so it is attached as a file: answer.md._",
    "file:answer.md",
  ]);
  const file = parts[2]!.payload;
  expect(file.kind === "media" && readFileSync(file.media.path, "utf8")).toBe(answer);
  // The whole answer does not come inline if the file cannot go: a line says so instead.
  expect(file.kind === "media" && file.inline).toBeUndefined();
});
