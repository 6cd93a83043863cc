/**
 * Seeded generators of hostile JSON for fuzz tests: random values, and
 * mutations of a valid payload (deleted keys, swapped types, prototype-named
 * keys, corrupted bytes) that keep most of its shape so the parser is pushed
 * past its first checks. Same seed, same inputs: a failure names its seed.
 */
import { rng } from "./rng.ts";

export type Rng = ReturnType<typeof rng>;
export { rng };

const KEYS = [
  "type",
  "event",
  "channel",
  "ts",
  "user",
  "text",
  "thread_ts",
  "subtype",
  "bot_id",
  "channel_type",
  "files",
  "event_id",
  "challenge",
  "authorizations",
  "object",
  "entry",
  "changes",
  "field",
  "value",
  "messages",
  "statuses",
  "contacts",
  "from",
  "id",
  "image",
  "audio",
  "voice",
  "caption",
  "mime_type",
  "__proto__",
  "constructor",
  "toString",
];
const STRINGS = [
  "",
  "message",
  "app_mention",
  "event_callback",
  "url_verification",
  "im",
  "channel",
  "file_share",
  "message_changed",
  "whatsapp_business_account",
  "messages",
  "text",
  "image",
  "audio",
  "reaction",
  "sticker",
  "<@U0BOT00001>",
  "__proto__",
  "constructor",
  "\u0000",
  "\u{1F600}",
  "D0442US94JD",
  "1700000000.000100",
];
const NUMBERS = [0, -0, 1, -1, 0.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 2 ** 53 + 1];

/** A random JSON value, at most `depth` levels deep, built from keys and strings a parser cares about. */
export function randomJson(r: Rng, depth = 4): unknown {
  const choice = r.int(0, depth > 0 ? 7 : 4);
  switch (choice) {
    case 0:
      return null;
    case 1:
      return r.next() < 0.5;
    case 2:
      return r.pick(NUMBERS);
    case 3:
      return r.pick(STRINGS);
    case 4:
      return r.string(r.int(0, 12));
    case 5:
      return Array.from({ length: r.int(0, 4) }, () => randomJson(r, depth - 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = r.int(0, 5); i > 0; i--) put(object, r.pick(KEYS), randomJson(r, depth - 1));
      return object;
    }
  }
}

/** A deep copy of `value` with 1–4 random mutations applied somewhere inside it. */
export function mutateJson(r: Rng, value: unknown): unknown {
  let copy = structuredClone(value);
  for (let n = r.int(1, 4); n > 0; n--) copy = mutateOnce(r, copy);
  return copy;
}

function mutateOnce(r: Rng, root: unknown): unknown {
  const containers = collectContainers(root);
  if (containers.length === 0 || r.next() < 0.05) return randomJson(r);
  const target = r.pick(containers);
  const keys = Object.keys(target);
  const key = keys.length > 0 && r.next() < 0.85 ? r.pick(keys) : r.pick(KEYS);
  const slot = target as Record<string, unknown>;
  switch (r.int(0, 5)) {
    case 0:
      delete slot[key];
      break;
    case 1:
      put(slot, key, randomJson(r, 2));
      break;
    case 2:
      put(slot, key, r.pick(STRINGS));
      break;
    case 3:
      put(slot, key, typeof slot[key] === "string" ? r.pick(NUMBERS) : asString(slot[key]));
      break;
    case 4:
      put(slot, key, Array.isArray(slot[key]) ? [] : [slot[key]]);
      break;
    default:
      put(slot, r.pick(["__proto__", "constructor", "toString"]), randomJson(r, 1));
  }
  return root;
}

/**
 * Set an own data property, as JSON.parse does. A plain assignment to
 * "__proto__" would swap the prototype instead, making values no JSON text
 * can produce (an array that is not iterable).
 */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

/** String(value) throws for an object whose toString was replaced by data; JSON never does here. */
function asString(value: unknown): string {
  return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
}

function collectContainers(value: unknown, out: object[] = []): object[] {
  if (value === null || typeof value !== "object") return out;
  out.push(value);
  for (const child of Object.values(value)) collectContainers(child, out);
  return out;
}

/** The bytes of `value` as JSON with some bytes flipped, cut off or inserted. */
export function mutateBytes(r: Rng, value: unknown): Uint8Array {
  const bytes = Array.from(new TextEncoder().encode(JSON.stringify(value) ?? ""));
  for (let n = r.int(1, 3); n > 0; n--) {
    const at = r.int(0, Math.max(0, bytes.length - 1));
    const op = r.int(0, 2);
    if (op === 0 && bytes.length > 0) bytes[at] = r.int(0, 255);
    else if (op === 1) bytes.length = at;
    else bytes.splice(at, 0, ...r.bytes(r.int(1, 4)));
  }
  return Uint8Array.from(bytes);
}

/**
 * A binary input (a recording, a container) with 1–4 corruptions: bytes
 * overwritten, bit flips, a cut, inserted random bytes, or a span dropped or
 * repeated — the damage a transfer or a buggy encoder does to framed data.
 */
export function mutateBinary(r: Rng, input: Uint8Array): Uint8Array {
  let bytes = Array.from(input);
  for (let n = r.int(1, 4); n > 0; n--) {
    const at = r.int(0, Math.max(0, bytes.length - 1));
    const span = r.int(1, 32);
    switch (r.int(0, 5)) {
      case 0:
        if (bytes.length > 0) bytes[at] = r.int(0, 255);
        break;
      case 1:
        if (bytes.length > 0) bytes[at] = (bytes[at] ?? 0) ^ (1 << r.int(0, 7));
        break;
      case 2:
        bytes.length = at;
        break;
      case 3:
        bytes.splice(at, 0, ...r.bytes(r.int(1, 8)));
        break;
      case 4:
        bytes.splice(at, span);
        break;
      default:
        bytes = [...bytes.slice(0, at + span), ...bytes.slice(at)];
    }
  }
  return Uint8Array.from(bytes);
}

const MEDIA_KINDS = new Set(["image", "audio", "voice", "video", "video_note", "document", "sticker"]);

/** What is wrong with a parser's InboundMessage (empty when it is well-formed), so fuzz failures say why. */
export function inboundProblems(message: unknown): string[] {
  const m = message as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of ["channel", "chatId", "senderId", "messageId"]) {
    if (typeof m[key] !== "string" || m[key] === "") problems.push(`${key} is not a non-empty string`);
  }
  if (typeof m.text !== "string") problems.push("text is not a string");
  if (m.threadId !== undefined && (typeof m.threadId !== "string" || m.threadId === "")) problems.push("bad threadId");
  if (m.senderName !== undefined && typeof m.senderName !== "string") problems.push("bad senderName");
  if (typeof m.receivedAt !== "number") problems.push("receivedAt is not a number");
  if (!Array.isArray(m.media)) return [...problems, "media is not an array"];
  for (const media of m.media as Record<string, unknown>[]) {
    if (!MEDIA_KINDS.has(media.kind as string)) problems.push(`bad media kind ${String(media.kind)}`);
    if (typeof media.ref !== "string" || media.ref === "") problems.push("media ref is not a non-empty string");
    for (const key of ["mime", "filename"]) {
      if (media[key] !== undefined && typeof media[key] !== "string") problems.push(`bad media ${key}`);
    }
    if (media.declaredSize !== undefined && !(typeof media.declaredSize === "number" && media.declaredSize >= 0)) {
      problems.push("bad declaredSize");
    }
  }
  return problems;
}
