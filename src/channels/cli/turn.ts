/** One command-line turn through the gateway, whether in the daemon or in-process. */
import type { Gateway } from "../../gateway/ingest.ts";
import { describeError } from "../../kernel/errors.ts";
import type { InboundMessage } from "../../message/index.ts";
import { localUser } from "../local-user.ts";
import { cliPort } from "./port.ts";
import type { ServerEvent } from "./protocol.ts";

/** The local user's conversation: `ask` and `chat` share it, so context carries over. */
export const CLI_CHAT_ID = "local";

export function cliMessage(text: string): InboundMessage {
  return {
    channel: "cli",
    chatId: CLI_CHAT_ID,
    senderId: localUser(),
    messageId: crypto.randomUUID(),
    text,
    media: [],
    receivedAt: Date.now(),
    // The local user's own conversation.
    direct: true,
  };
}

/** Run a turn, emitting the reply's events and a final `done`. */
export async function runCliTurn(gateway: Gateway, text: string, emit: (event: ServerEvent) => void): Promise<string> {
  try {
    const outcome = await gateway.ingest(cliMessage(text), { port: cliPort(emit) });
    emit({ type: "done", outcome });
    return outcome;
  } catch (error) {
    emit({ type: "error", message: describeError(error) });
    return "failed";
  }
}
