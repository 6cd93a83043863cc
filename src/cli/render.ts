/** How replies look in a terminal: Markdown rendered with colour on a TTY, as written otherwise. */
import type { ServerEvent } from "../channels/cli/protocol.ts";

export function renderEvent(event: ServerEvent, tty: boolean, colors = true): string | null {
  switch (event.type) {
    case "message":
      // `colors: false` (NO_COLOR) still renders the Markdown readably, without escape codes.
      return tty ? `${Bun.markdown.ansi(event.text, { colors }).trimEnd()}\n` : `${event.text.trimEnd()}\n`;
    case "media":
      return `📎 ${event.filename}${event.caption ? ` — ${event.caption}` : ""} (${event.path})\n`;
    case "error":
      return `fermix: ${event.message}\n`;
    default:
      return null;
  }
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A spinner on stderr while waiting (only on a terminal); returns its stop function. */
export function spinner(write: (text: string) => void, enabled: boolean, label = "thinking"): () => void {
  if (!enabled) return () => {};
  let frame = 0;
  const draw = () => write(`\r${FRAMES[frame++ % FRAMES.length]} ${label}…`);
  draw();
  const timer = setInterval(draw, 80);
  return () => {
    clearInterval(timer);
    write("\r\u001b[2K");
  };
}
