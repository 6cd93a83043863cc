/**
 * Graph API error objects and the checks POST /{phone_number_id}/messages
 * and /media apply. Wording follows the Cloud API error-code page and
 * real responses seen in public issue threads; where Meta documents no exact
 * string, the code is right and the text is a plausible stand-in.
 */

export interface GraphErrorBody {
  error: {
    message: string;
    type: string;
    code: number;
    error_data?: { messaging_product: "whatsapp"; details: string };
    error_subcode?: number;
    fbtrace_id: string;
  };
}

export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly body: GraphErrorBody,
  ) {
    super(body.error.message);
  }
}

/** Build a Graph-style error; `details` goes in error_data as Cloud API errors carry it. */
export function graphError(status: number, code: number, message: string, opts: { type?: string; details?: string; subcode?: number } = {}): GraphError {
  const error: GraphErrorBody["error"] = {
    message,
    type: opts.type ?? "OAuthException",
    code,
    fbtrace_id: `A${crypto.randomUUID().replace(/-/g, "").slice(0, 22)}`,
  };
  if (opts.details) error.error_data = { messaging_product: "whatsapp", details: opts.details };
  if (opts.subcode !== undefined) error.error_subcode = opts.subcode;
  return new GraphError(status, { error });
}

const invalid = (details: string) => graphError(400, 100, "(#100) Invalid parameter", { details });
const required = (param: string) => graphError(400, 100, `(#100) The parameter ${param} is required.`);
const notValid = (details: string) => graphError(400, 131009, "(#131009) Parameter value is not valid", { details });

export const TEXT_LIMIT = 4096;
export const CAPTION_LIMIT = 1024;
const TYPES = ["audio", "contacts", "document", "image", "interactive", "location", "reaction", "sticker", "template", "text", "video"];
const MEDIA_TYPES = new Set(["audio", "document", "image", "sticker", "video"]);
const CAPTIONED = new Set(["document", "image", "video"]);

/** One emoji grapheme (flags, ZWJ sequences and skin tones included). */
function isSingleEmoji(s: string): boolean {
  const graphemes = [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(s)];
  return graphemes.length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(s);
}

/** Validate a send request body; returns the normalized type. Throws GraphError. */
export function validateMessage(body: Record<string, unknown>, knownMedia: (id: string) => boolean): string {
  if (body.messaging_product === undefined) throw required("messaging_product");
  if (body.messaging_product !== "whatsapp") {
    throw invalid(`Param messaging_product must be one of {WHATSAPP} - got "${String(body.messaging_product)}".`);
  }
  if (body.recipient_type !== undefined && body.recipient_type !== "individual" && body.recipient_type !== "group") {
    throw invalid(`Param recipient_type must be one of {INDIVIDUAL, GROUP} - got "${String(body.recipient_type)}".`);
  }
  if (body.to === undefined || body.to === "") throw required("to");
  if (typeof body.to !== "string" || !/^\+?[\d\s()-]{6,20}$/.test(body.to)) throw invalid("Param to must be a phone number (string).");
  const type = body.type === undefined ? "text" : String(body.type);
  if (!TYPES.includes(type)) {
    throw invalid(`Param type must be one of {${TYPES.map((t) => t.toUpperCase()).join(", ")}} - got "${type}".`);
  }
  const payload = body[type];
  if (payload === undefined || payload === null || typeof payload !== "object") throw required(type);
  const obj = payload as Record<string, unknown>;
  if (type === "text") {
    if (typeof obj.body !== "string" || obj.body === "") throw required("text['body']");
    if (obj.body.length > TEXT_LIMIT) throw invalid(`Param text['body'] must be at most ${TEXT_LIMIT} characters long.`);
    if (obj.preview_url !== undefined && typeof obj.preview_url !== "boolean") throw invalid("Param text['preview_url'] must be a boolean.");
  }
  if (MEDIA_TYPES.has(type)) {
    const hasId = typeof obj.id === "string" && obj.id !== "";
    const hasLink = typeof obj.link === "string" && obj.link !== "";
    if (hasId === hasLink) throw invalid(`Param ${type} must have exactly one of 'id' or 'link'.`);
    if (hasId && !knownMedia(obj.id as string)) throw notValid(`Media id ${String(obj.id)} is not a valid uploaded media id.`);
    if (obj.caption !== undefined) {
      if (!CAPTIONED.has(type)) throw invalid(`Param ${type}['caption'] is not allowed for ${type} messages.`);
      if (String(obj.caption).length > CAPTION_LIMIT) throw invalid(`Param ${type}['caption'] must be at most ${CAPTION_LIMIT} characters long.`);
    }
  }
  if (type === "reaction") {
    if (typeof obj.message_id !== "string" || obj.message_id === "") throw required("reaction['message_id']");
    if (typeof obj.emoji !== "string") throw required("reaction['emoji']");
    // An empty emoji removes the bot's reaction.
    if (obj.emoji !== "" && !isSingleEmoji(obj.emoji)) throw notValid("Param reaction['emoji'] must be a single emoji.");
  }
  return type;
}

/** Upload caps and accepted MIME types (business-phone-numbers/media "Supported media types"). */
const UPLOAD_RULES: Array<{ types: string[]; cap: number }> = [
  { types: ["image/jpeg", "image/png"], cap: 5 * 1024 * 1024 },
  { types: ["image/webp"], cap: 500 * 1024 },
  { types: ["audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"], cap: 16 * 1024 * 1024 },
  { types: ["video/mp4", "video/3gpp"], cap: 16 * 1024 * 1024 },
  {
    types: [
      "text/plain",
      "application/pdf",
      "application/msword",
      "application/vnd.ms-excel",
      "application/vnd.ms-powerpoint",
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ],
    cap: 100 * 1024 * 1024,
  },
];

/** Check an upload's declared MIME type and size. Throws GraphError. */
export function validateUpload(mime: string, size: number): void {
  const base = mime.split(";")[0]!.trim().toLowerCase();
  const rule = UPLOAD_RULES.find((r) => r.types.includes(base));
  if (!rule) throw graphError(400, 131053, "(#131053) Media upload error", { details: `Unsupported file type ${mime}.` });
  if (size > rule.cap)
    throw graphError(400, 131053, "(#131053) Media upload error", { details: `File size ${size} exceeds the ${rule.cap}-byte limit for ${base}.` });
}
