/** One request on a daemon's control socket (`<home>/control.sock`), answered with its first event. */
import { join } from "node:path";
import type { ClientEvent, ServerEvent } from "../../src/channels/cli/protocol.ts";
import type { ReloadResult } from "../../src/kernel/health.ts";

/** The daemon's first event, or what the test saw instead: the socket closed, or nothing came in time. */
export type ControlAnswer = ServerEvent | { type: "closed" } | { type: "test-timeout" };

export async function controlRequest(home: string, request: ClientEvent, timeoutMs = 20_000): Promise<ControlAnswer> {
  let buffer = "";
  let answer!: (value: ControlAnswer) => void;
  const answered = new Promise<ControlAnswer>((resolve) => {
    answer = resolve;
  });
  const socket = await Bun.connect({
    unix: join(home, "control.sock"),
    socket: {
      data(_socket, chunk) {
        buffer += new TextDecoder().decode(chunk);
        const line = buffer.split("\n")[0];
        // The daemon's own encoding of a ServerEvent (src/channels/cli/protocol.ts).
        if (buffer.includes("\n") && line) answer(JSON.parse(line) as ServerEvent);
      },
      close() {
        answer({ type: "closed" });
      },
    },
  });
  socket.write(`${JSON.stringify(request)}\n`);
  const timer = setTimeout(() => answer({ type: "test-timeout" }), timeoutMs);
  try {
    return await answered;
  } finally {
    clearTimeout(timer);
    socket.end();
  }
}

/** What a `reload` over the control socket did; throws when the daemon answers anything else. */
export async function controlReload(home: string): Promise<ReloadResult> {
  const answer = await controlRequest(home, { type: "reload" });
  if (answer.type !== "reloaded") throw new Error(`reload answered ${JSON.stringify(answer)}`);
  return answer.result;
}
