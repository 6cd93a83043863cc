/**
 * How the Slack Web API reads a call's arguments: @slack/web-api sends a
 * form body whose object fields (blocks, files, …) are JSON strings and whose
 * flags are "true"/"false", and Slack rejects malformed blocks.
 */

/** Decoded method arguments. */
export type Args = Record<string, unknown>;

/** A Web API failure: answered as `{ok:false,error,...extra}` with HTTP 200. */
export class SlackError extends Error {
  constructor(
    readonly error: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(error);
  }
}

/** Fields the client sends JSON-stringified inside a form body. */
const JSON_FIELDS = ["blocks", "attachments", "files", "metadata", "unfurls"];
const BOOLEAN_FIELDS = ["unfurl_links", "unfurl_media", "mrkdwn", "reply_broadcast", "as_user", "link_names"];

/** Form fields back to values: JSON-stringified objects parsed, known flags as booleans. */
export function decodeArgs(body: Record<string, unknown>): Args {
  const args: Args = { ...body };
  for (const key of JSON_FIELDS) {
    if (typeof args[key] !== "string") continue;
    try {
      args[key] = JSON.parse(args[key] as string);
    } catch {
      args[key] = { _unparseable: args[key] };
    }
  }
  for (const key of BOOLEAN_FIELDS) {
    if (args[key] === "true" || args[key] === "false") args[key] = args[key] === "true";
  }
  return args;
}

/** The block checks Slack is strictest about: an array of ≤50 typed blocks with section/header text limits. */
export function validBlocks(blocks: unknown): boolean {
  if (!Array.isArray(blocks) || blocks.length > 50) return false;
  return blocks.every((b) => {
    if (b === null || typeof b !== "object" || typeof (b as { type?: unknown }).type !== "string") return false;
    const block = b as { type: string; text?: { text?: unknown } };
    const text = typeof block.text?.text === "string" ? block.text.text : "";
    if (block.type === "section") return text.length <= 3000;
    if (block.type === "header") return text.length <= 150;
    return true;
  });
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : v === undefined || v === null ? undefined : String(v));
