/**
 * The presentation layer's public face: everything a channel adapter or the
 * gateway needs to turn a reply's Markdown into messages, stream it, and
 * send it with the plain-text fallback.
 */
export { type AttachmentSender, type DeliverOptions, deliverReply, sendRendered, tempFileSender } from "./deliver.ts";
export type { Dialect } from "./dialects/base.ts";
export { editWithFallback, sendWithFallback } from "./fallback.ts";
export { type ParsedReply, parseMarkdown } from "./markdown.ts";
export { measureFor, type TextProfile, utf16Length } from "./measure.ts";
export {
  plainChunks,
  plainText,
  type RenderedReply,
  type RenderOptions,
  renderReply,
  snippetName,
  type TextAttachment,
} from "./render.ts";
export {
  createStreamer,
  type ResolvedStreaming,
  resolveStreamingMode,
  type Streamer,
  type StreamerOptions,
  type TurnOrigin,
  turnStreamingMode,
} from "./stream.ts";
