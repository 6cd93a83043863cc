/**
 * One part through one port: it is `sending` while the platform has it (a
 * crash then means "maybe sent", never re-sent), `sent` with the platform's
 * id after, and its success ends the channel's trouble; a text whose
 * formatting is rejected goes once more as its plain fallback; a failure is
 * thrown to the caller with the part left `sending` for it to decide.
 */

import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SendHealth } from "../../src/gateway/delivery/health.ts";
import { PartSender } from "../../src/gateway/delivery/send.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import { FormattingRejected, SendFailed } from "../../src/message/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { Outbox, type OutboxPart } from "../../src/store/outbox.ts";
import { FakeClock } from "../helpers/clock.ts";
import { scriptedPlatform } from "../helpers/delivery.ts";
import { TARGET } from "../store/fixtures/outbox-reply.ts";

let root: string;
let db: Database;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fermix-send-"));
  db = openDatabase(join(root, "fermix.db"));
});
afterEach(() => {
  db.close();
  rmSync(root, { recursive: true, force: true });
});

function setup() {
  const time = new FakeClock(1_000_000);
  const outbox = new Outbox(db, time.now);
  const health = new SendHealth(time.now);
  const sender = new PartSender({ outbox, health, telemetry: new Telemetry(), log: createLogger({ FERMIX_LOG_LEVEL: "error" }) });
  const p = scriptedPlatform(time.now);
  const [part] = outbox.record("r1", "telegram", TARGET, [
    {
      kind: "text",
      message: { text: "*bold*", notify: true, linkPreview: false, plain: false },
      fallback: [{ text: "bold", notify: true, linkPreview: false, plain: true }],
    },
  ]);
  return { outbox, health, sender, p, part: part as OutboxPart };
}

test("sending while the platform has it, sent with its id after; the success ends the channel's trouble", async () => {
  const { outbox, health, sender, p, part } = setup();
  health.failed("telegram", { transient: true, status: 502, reason: "HTTP 502" });
  p.script.refuse = () => {
    expect(outbox.state(part.id)).toBe("sending");
    return undefined;
  };
  expect(await sender.send(part, p.port)).toEqual({ id: "m1" });
  expect(outbox.parts("r1")[0]).toMatchObject({ state: "sent", platformId: "m1" });
  expect(health.trouble("telegram")).toBeUndefined();
});

test("formatting rejected: the plain fallback goes once, and stands for the part", async () => {
  const { outbox, sender, p, part } = setup();
  p.script.refuse = (call) => (call.text === "*bold*" ? new FormattingRejected("can't parse entities") : undefined);
  await sender.send(part, p.port);
  expect(p.delivered()).toEqual(["bold"]);
  expect(outbox.parts("r1")[0]!.state).toBe("sent");
});

test("a failure reaches the caller, the part still marked as being sent for it to decide", async () => {
  const { outbox, sender, p, part } = setup();
  p.script.refuse = () => new SendFailed("HTTP 500", true, 500);
  await expect(sender.send(part, p.port)).rejects.toThrow("HTTP 500");
  expect(outbox.state(part.id)).toBe("sending");
});
