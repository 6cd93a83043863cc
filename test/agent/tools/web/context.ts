/** A ToolContext for calling a web tool directly: nothing in it is used but the signal. */
import type { ToolContext } from "../../../../src/agent/tools/types.ts";
import type { ReplyPort } from "../../../../src/message/index.ts";
import { openDatabase } from "../../../../src/store/db.ts";
import { IdempotencyStore } from "../../../../src/store/idempotency.ts";

export function webContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return {
    port: {} as ReplyPort,
    channel: "telegram",
    conversation: "telegram:42:",
    senderId: "42",
    role: "operator",
    target: { chatId: "42" },
    workspace: "/nonexistent",
    idempotency: new IdempotencyStore(openDatabase(":memory:")),
    signal,
    effects: { reacted: false, attachments: 0 },
    say: async () => {},
  };
}
