/**
 * JSON5 as OpenClaw writes its files (comments, trailing commas, unquoted
 * keys: https://docs.openclaw.ai/gateway/configuration-reference), read with
 * the `json5` package. A file that does not parse fails with its path, the
 * line and column, and the parser's reason.
 */
import JSON5 from "json5";

/** A file OpenClaw wrote that cannot be read as it should be. */
export class OpenClawFileError extends Error {
  override name = "OpenClawFileError";
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${file}${line === undefined ? "" : `: line ${line}${column === undefined ? "" : `, column ${column}`}`}: ${reason}`);
  }
}

/** Parse `text` (the content of `file`); throws OpenClawFileError naming the line and the reason. */
export function parseJson5(text: string, file: string): unknown {
  try {
    return JSON5.parse(text);
  } catch (error) {
    const e = error as SyntaxError & { lineNumber?: number; columnNumber?: number };
    const reason = String(e.message ?? error)
      .replace(/^JSON5:\s*/, "")
      .replace(/\s+at \d+:\d+$/, "");
    throw new OpenClawFileError(file, reason, e.lineNumber, e.columnNumber);
  }
}

/** A parsed value as a plain object, or undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The object at a dotted path of plain objects, or undefined. */
export function objectAt(root: unknown, path: string): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const key of path.split(".")) node = objectOf(node)?.[key];
  return objectOf(node);
}
