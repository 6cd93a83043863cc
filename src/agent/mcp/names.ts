/**
 * The names MCP tools are offered under: `<server>__<tool>`, so two servers'
 * tools never collide and the role table (src/gateway/roles.ts) can tell
 * from a name alone which server's `roles` decide it. Model APIs take
 * function names of at most 64 letters, digits, `_` and `-`; a tool name
 * outside that is made to fit, and the server is still called by its own.
 */

/** Between the server's name and the tool's. Server names never contain it (src/config/schema.ts MCP_SERVER_NAME). */
export const MCP_SEPARATOR = "__";
/** The longest function name model APIs accept. */
export const MAX_NAME = 64;

/** The server a tool name belongs to, or undefined when it is not an MCP tool's name. */
export function mcpServerOf(name: string): string | undefined {
  const at = name.indexOf(MCP_SEPARATOR);
  return at > 0 && at + MCP_SEPARATOR.length < name.length ? name.slice(0, at) : undefined;
}

/** The name a server's tool is offered under; `taken` (names given so far for this server) keeps it unique. */
export function offeredName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const prefix = `${server}${MCP_SEPARATOR}`;
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, "_") || "tool";
  const room = MAX_NAME - prefix.length;
  let name = prefix + clean.slice(0, room);
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = prefix + clean.slice(0, room - suffix.length) + suffix;
  }
  return name;
}
