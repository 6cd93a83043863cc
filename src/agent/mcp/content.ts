/**
 * What an MCP tool answered, as the model reads it: its text, the images it
 * showed (seen by the model beside the text), resources as text (a binary
 * one by its name and size), links by their URI — all inside the untrusted
 * envelope (src/message/untrusted.ts), since a tool server's words are
 * information, never instructions. A result marked `isError` becomes the
 * tool's error, its words enveloped too. Pure: the shapes are the MCP
 * specification's content blocks, read defensively.
 */
import { untrusted } from "../../message/untrusted.ts";
import { ToolError, type ToolImage, type ToolResult } from "../tools/types.ts";

/** At most this many images of one result reach the model; each at most this big (base64 characters). */
export const MAX_IMAGES = 4;
export const MAX_IMAGE_CHARS = 8 * 1024 * 1024;
/** A result's text beyond this is cut, with a note. */
export const MAX_TEXT = 100_000;

type Block = Record<string, unknown>;
const isBlock = (value: unknown): value is Block => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** A tools/call result as a ToolResult (or a ToolError for `isError`); `source` names the server and tool. */
export function mcpToolResult(source: { server: string; tool: string }, result: unknown): ToolResult {
  const body = isBlock(result) ? result : {};
  const parts: string[] = [];
  const images: ToolImage[] = [];
  const content = Array.isArray(body.content) ? body.content : [];
  for (const block of content) {
    if (!isBlock(block)) continue;
    switch (block.type) {
      case "text":
        parts.push(text(block.text) ?? "");
        break;
      case "image": {
        const data = text(block.data);
        const mime = text(block.mimeType) ?? "image/png";
        if (data && images.length < MAX_IMAGES && data.length <= MAX_IMAGE_CHARS && mime.startsWith("image/")) {
          images.push({ mime, data });
          parts.push(`[image ${images.length}: ${mime}, shown to you]`);
        } else parts.push(`[an image (${mime}) not shown: ${images.length >= MAX_IMAGES ? "too many images" : "too large or malformed"}]`);
        break;
      }
      case "audio":
        parts.push(`[audio (${text(block.mimeType) ?? "unknown type"}), not shown]`);
        break;
      case "resource": {
        const resource = isBlock(block.resource) ? block.resource : {};
        const uri = text(resource.uri) ?? "(no uri)";
        const body = text(resource.text);
        if (body !== undefined) parts.push(`[resource ${uri}]\n${body}`);
        else parts.push(`[resource ${uri} (${text(resource.mimeType) ?? "binary"}, ${(text(resource.blob) ?? "").length} base64 characters), not shown]`);
        break;
      }
      case "resource_link":
        parts.push(`[resource link: ${text(block.name) ?? text(block.uri) ?? ""} ${text(block.uri) ?? ""}]`.replace(/\s+\]$/, "]"));
        break;
      default:
        parts.push(`[a ${String(block.type)} block, not shown]`);
    }
  }
  if (parts.length === 0 && body.structuredContent !== undefined) parts.push(JSON.stringify(body.structuredContent, null, 2));
  let joined = parts.join("\n").trim();
  if (joined.length > MAX_TEXT) joined = `${joined.slice(0, MAX_TEXT)}\n[cut at ${MAX_TEXT} characters]`;
  const enveloped = untrusted(`tool server ${source.server}, tool ${source.tool}`, joined === "" ? "(no content)" : joined);
  if (body.isError === true) throw new ToolError(`the tool server ${source.server} reported an error:\n${enveloped}`);
  return images.length > 0 ? { text: enveloped, images } : enveloped;
}
