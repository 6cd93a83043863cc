/** One request on a daemon's control socket (`<home>/control.sock`), answered with its first event. */
import { join } from "node:path";

export async function controlRequest(home: string, request: Record<string, unknown>, timeoutMs = 20_000): Promise<any> {
  let buffer = "";
  let answer!: (value: unknown) => void;
  const answered = new Promise((resolve) => (answer = resolve));
  const socket = await Bun.connect({
    unix: join(home, "control.sock"),
    socket: {
      data(_socket, chunk) {
        buffer += new TextDecoder().decode(chunk);
        const line = buffer.split("\n")[0];
        if (buffer.includes("\n") && line) answer(JSON.parse(line));
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
