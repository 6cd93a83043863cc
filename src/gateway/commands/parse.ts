/** Slash-command parsing: `/name args`, with Telegram's `/name@botname` form. */

export interface ParsedCommand {
  name: string;
  args: string;
}

/** The command in a message, or null when the text is not a slash command. */
export function parseCommand(text: string): ParsedCommand | null {
  const match = /^\/([A-Za-z][A-Za-z0-9_]*)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return null;
  return { name: match[1]!.toLowerCase(), args: (match[2] ?? "").trim() };
}
