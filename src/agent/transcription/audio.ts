/**
 * The file name and MIME type a recording is uploaded under. Recordings are
 * sent as they come — never re-encoded — so what names them must match what
 * they are: speech-to-text services choose the decoder by the file name's
 * extension and refuse a file whose name and bytes disagree ("corrupted or
 * unsupported"). The container comes from the MIME type the platform gave
 * (a WhatsApp `audio/ogg; codecs=opus` voice note goes as `voice-note.ogg`,
 * `audio/ogg`), else from the platform's file name. Round video notes go
 * straight from their MP4 container. (The one exception to "as they come":
 * the openai backend moves raw AAC into an M4A container first, m4a.ts.)
 */
import type { AudioClip } from "./types.ts";

interface Container {
  ext: string;
  mime: string;
}

const OGG: Container = { ext: "ogg", mime: "audio/ogg" };
const MP3: Container = { ext: "mp3", mime: "audio/mpeg" };
const M4A: Container = { ext: "m4a", mime: "audio/mp4" };
const MP4: Container = { ext: "mp4", mime: "video/mp4" };
const WAV: Container = { ext: "wav", mime: "audio/wav" };
const WEBM: Container = { ext: "webm", mime: "audio/webm" };
const FLAC: Container = { ext: "flac", mime: "audio/flac" };
const AAC: Container = { ext: "aac", mime: "audio/aac" };
const AMR: Container = { ext: "amr", mime: "audio/amr" };

/** By MIME type, parameters (`; codecs=opus`) stripped and lower-cased. */
const BY_MIME: Readonly<Record<string, Container>> = {
  "audio/ogg": OGG,
  "audio/opus": OGG,
  "audio/x-opus+ogg": OGG,
  "application/ogg": OGG,
  "audio/mpeg": MP3,
  "audio/mp3": MP3,
  "audio/mpeg3": MP3,
  "audio/x-mpeg-3": MP3,
  "audio/mp4": M4A,
  "audio/m4a": M4A,
  "audio/x-m4a": M4A,
  "video/mp4": MP4,
  "audio/wav": WAV,
  "audio/x-wav": WAV,
  "audio/wave": WAV,
  "audio/vnd.wave": WAV,
  "audio/webm": WEBM,
  "video/webm": { ext: "webm", mime: "video/webm" },
  "audio/flac": FLAC,
  "audio/x-flac": FLAC,
  "audio/aac": AAC,
  "audio/x-aac": AAC,
  "audio/amr": AMR,
};

/** By file name extension, for a platform that says only `application/octet-stream`. */
const BY_EXT: Readonly<Record<string, Container>> = {
  ogg: OGG,
  oga: OGG,
  opus: OGG,
  mp3: MP3,
  mpga: MP3,
  m4a: M4A,
  mp4: MP4,
  wav: WAV,
  webm: WEBM,
  flac: FLAC,
  aac: AAC,
  amr: AMR,
};

export interface UploadName {
  filename: string;
  mime: string;
}

/** The bare MIME type: `audio/ogg; codecs=opus` → `audio/ogg`. */
export function bareMime(mime: string): string {
  return (mime.split(";")[0] ?? "").trim().toLowerCase();
}

/**
 * The container the bytes themselves announce, when they do: an MP4 `ftyp`
 * box (an iOS recording is M4A even when labelled audio/aac), Ogg, WAVE.
 * Undefined for anything else, raw AAC included (its label is right).
 */
function sniff(bytes: Uint8Array | undefined, labelled: Container | undefined): Container | undefined {
  if (!bytes || bytes.byteLength < 12) return undefined;
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (ascii(4, 8) === "ftyp") return labelled === MP4 ? MP4 : M4A;
  if (ascii(0, 4) === "OggS") return OGG;
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE") return WAV;
  return undefined;
}

/** Whether a recording is raw AAC (ADTS frames, as Signal sends voice notes): OpenAI takes it only remuxed into M4A. */
export function isRawAac(audio: Pick<AudioClip, "mime" | "filename" | "bytes">): boolean {
  return uploadName(audio).mime === AAC.mime;
}

/** The name and type to upload a recording under: the container its bytes announce, else its MIME type, else its file name's extension. */
export function uploadName(audio: Pick<AudioClip, "mime" | "filename"> & { bytes?: Uint8Array }): UploadName {
  const mime = bareMime(audio.mime);
  const { stem, ext } = splitName(audio.filename);
  const labelled = BY_MIME[mime] ?? (ext ? BY_EXT[ext] : undefined);
  const container = sniff(audio.bytes, labelled) ?? labelled;
  if (!container) {
    // Unknown: sent as it came, so the backend's refusal names what it was.
    const valid = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(mime);
    return { filename: `${stem ?? "audio"}${ext ? `.${ext}` : ""}`, mime: valid ? mime : "application/octet-stream" };
  }
  const fallbackStem = container === MP4 ? "video-note" : "voice-note";
  return { filename: `${stem ?? fallbackStem}.${container.ext}`, mime: container.mime };
}

/** A platform file name made safe for a multipart header: its last path segment, printable ASCII without quotes. */
function splitName(filename: string | undefined): { stem?: string; ext?: string } {
  const base = (filename ?? "").split(/[\\/]/).pop() ?? "";
  const clean = base.replace(/[^\x20-\x7e]|["\\;]/g, "_").trim();
  if (!clean) return {};
  const dot = clean.lastIndexOf(".");
  if (dot <= 0) return { stem: clean };
  const stem = clean.slice(0, dot);
  const ext = clean.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,8}$/.test(ext) ? { stem, ext } : { stem: clean };
}
