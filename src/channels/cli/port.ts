/** The reply port of the command line: each message becomes a `message` event for the terminal. */
import type { ReplyPort } from "../../message/index.ts";
import { cliProfile } from "./profile.ts";
import type { ServerEvent } from "./protocol.ts";

/** What the terminal does with a reply (src/channels/cli/profile.ts). */
export const CLI_CAPABILITIES = cliProfile.capabilities;

export function cliPort(emit: (event: ServerEvent) => void): ReplyPort {
  let sent = 0;
  return {
    capabilities: CLI_CAPABILITIES,
    async sendText(message) {
      emit({ type: "message", text: message.text });
      return { id: `cli-${++sent}` };
    },
    async sendMedia(media) {
      emit({ type: "media", filename: media.filename, path: media.path, ...(media.caption ? { caption: media.caption } : {}) });
      return { id: `cli-${++sent}` };
    },
    async editText() {
      throw new Error("the command line cannot edit messages");
    },
    async deleteMessage() {
      throw new Error("the command line cannot delete messages");
    },
    async react() {
      throw new Error("the command line has no reactions");
    },
    async typing() {
      emit({ type: "working" });
    },
  };
}
