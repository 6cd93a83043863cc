/**
 * What the delivery tests share: a platform whose every call is recorded and
 * whose failures are scripted per call, and a Delivery on a real outbox and
 * the one fake clock (test/helpers/clock.ts).
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { profileOf } from "../../src/channels/registry.ts";
import { Delivery, type Presenter } from "../../src/gateway/delivery.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { Telemetry } from "../../src/kernel/telemetry.ts";
import type { OutboundMedia, OutboundText, ReplyCapabilities, ReplyPort, SentMessage } from "../../src/message/index.ts";
import { Outbox } from "../../src/store/outbox.ts";
import { partsPresenter } from "../store/fixtures/outbox-reply.ts";
import type { FakeClock } from "./clock.ts";

/** One call a platform was made, at the delivery clock's time; `ok` false when it was refused. */
export interface PlatformCall {
  op: "text" | "media" | "edit" | "delete" | "react" | "typing";
  at: number;
  text?: string;
  file?: string;
  ok: boolean;
}

/**
 * A platform that records every call; `refuse(call)` returns the error to
 * throw for a call (undefined: it goes through).
 */
export function scriptedPlatform(clock: () => number, capabilities: Partial<ReplyCapabilities> = {}) {
  const calls: PlatformCall[] = [];
  const script = { refuse: (_call: Omit<PlatformCall, "at" | "ok">): unknown => undefined };
  let next = 0;
  const call = async <T>(entry: Omit<PlatformCall, "at" | "ok">, result: () => T): Promise<T> => {
    const error = script.refuse(entry);
    calls.push({ ...entry, at: clock(), ok: error === undefined });
    if (error !== undefined) throw error;
    return result();
  };
  const sent = (): SentMessage => ({ id: `m${++next}` });
  const port: ReplyPort = {
    capabilities: { edit: true, delete: true, react: "any", media: true, typing: true, ...capabilities } as ReplyCapabilities,
    sendText: (message: OutboundText) => call({ op: "text", text: message.text }, sent),
    sendMedia: (media: OutboundMedia) => call({ op: "media", file: media.filename }, sent),
    editText: (_sent: SentMessage, message: OutboundText) => call({ op: "edit", text: message.text }, () => undefined),
    deleteMessage: () => call({ op: "delete" }, () => undefined),
    react: () => call({ op: "react" }, () => undefined),
    typing: () => call({ op: "typing" }, () => undefined),
  };
  return {
    calls,
    script,
    port,
    /** The texts and files that reached the chat, in order (files as "file:<name>"). */
    delivered: () => calls.filter((c) => c.ok && (c.op === "text" || c.op === "media")).map((c) => (c.op === "media" ? `file:${c.file}` : c.text!)),
    tries: (op: PlatformCall["op"]) => calls.filter((c) => c.op === op).length,
  };
}

export interface BuildOptions {
  horizonMs?: number | (() => number);
  holdMs?: number | (() => number);
  presenter?: Presenter;
}

/** A Delivery on `db` whose raw port is `port`, on the manual clock. */
export function buildDelivery(db: Database, root: string, time: FakeClock, port: ReplyPort, options: BuildOptions = {}) {
  const outbox = new Outbox(db, time.now);
  const delivery = new Delivery({
    outbox,
    presenter: options.presenter ?? partsPresenter,
    channels: profileOf,
    rawPort: () => port,
    spoolDir: join(root, "spool"),
    telemetry: new Telemetry(),
    log: createLogger({ FERMIX_LOG_LEVEL: "error" }),
    ...(options.horizonMs !== undefined ? { horizonMs: options.horizonMs } : {}),
    ...(options.holdMs !== undefined ? { holdMs: options.holdMs } : {}),
    now: time.now,
    sleep: time.sleep,
    random: () => 0.5,
  });
  return { outbox, delivery };
}
