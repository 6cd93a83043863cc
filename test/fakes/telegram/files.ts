/**
 * Files the fake Bot API knows: ones a test registered (inbound media) and
 * ones the bot uploaded. `getFile` hands out a `file_path` the way Telegram
 * does (`photos/file_3.jpg`), and the download route serves the bytes.
 */
import type { File as TgFile } from "grammy/types";

/** Telegram's download cap for bots: getFile refuses anything larger. */
export const DOWNLOAD_LIMIT = 20 * 1024 * 1024;

export type FileKind = "photo" | "document" | "voice" | "audio" | "video" | "video_note" | "sticker" | "animation";

const DIR: Record<FileKind, string> = {
  photo: "photos",
  document: "documents",
  voice: "voice",
  audio: "music",
  video: "videos",
  video_note: "video_notes",
  sticker: "stickers",
  animation: "animations",
};

/** The prefixes real file_ids of each kind start with, so ids look like Telegram's. */
const ID_PREFIX: Record<FileKind, string> = {
  photo: "AgACAgIAAxkBAAI",
  document: "BQACAgIAAxkBAAI",
  voice: "AwACAgIAAxkBAAI",
  audio: "CQACAgIAAxkBAAI",
  video: "BAACAgIAAxkBAAI",
  video_note: "DQACAgIAAxkBAAI",
  sticker: "CAACAgIAAxkBAAI",
  animation: "CgACAgIAAxkBAAI",
};

export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  kind: FileKind;
  bytes: Uint8Array;
  /** What Telegram reports as file_size; may exceed bytes.length so caps can be tested cheaply. */
  size: number;
  file_name?: string;
  mime_type?: string;
  file_path?: string;
}

export interface AddFileOptions {
  size?: number;
  kind?: FileKind;
  file_name?: string;
  mime_type?: string;
}

export class FileStore {
  private readonly byId = new Map<string, StoredFile>();
  private readonly byPath = new Map<string, StoredFile>();
  private counter = 0;

  /** A fresh Telegram-looking file_id / file_unique_id pair. */
  newIds(kind: FileKind): { file_id: string; file_unique_id: string } {
    const n = ++this.counter;
    const tail = Buffer.from(`fermix-fake-${kind}-${n}`).toString("base64url");
    return { file_id: `${ID_PREFIX[kind]}${tail}`, file_unique_id: `AQAD${n.toString(36).padStart(4, "0")}${kind.length}` };
  }

  add(file_id: string, bytes: Uint8Array, opts: AddFileOptions = {}): StoredFile {
    const stored: StoredFile = {
      file_id,
      file_unique_id: `AQAD${Buffer.from(file_id).toString("base64url").slice(-10)}`,
      kind: opts.kind ?? "document",
      bytes,
      size: opts.size ?? bytes.byteLength,
      file_name: opts.file_name,
      mime_type: opts.mime_type,
    };
    this.byId.set(file_id, stored);
    return stored;
  }

  get(file_id: string): StoredFile | undefined {
    return this.byId.get(file_id);
  }

  /** The File object getFile returns; assigns a path on first use. */
  describe(stored: StoredFile): TgFile {
    if (!stored.file_path) {
      const ext = stored.file_name?.split(".").pop() ?? defaultExt(stored.kind);
      stored.file_path = `${DIR[stored.kind]}/file_${this.byPath.size}.${ext}`;
      this.byPath.set(stored.file_path, stored);
    }
    return { file_id: stored.file_id, file_unique_id: stored.file_unique_id, file_size: stored.size, file_path: stored.file_path };
  }

  byFilePath(path: string): StoredFile | undefined {
    return this.byPath.get(path);
  }
}

function defaultExt(kind: FileKind): string {
  return { photo: "jpg", voice: "oga", audio: "mp3", video: "mp4", video_note: "mp4", sticker: "webp", animation: "mp4", document: "dat" }[kind];
}

const MIME_BY_EXT: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  zip: "application/zip",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  wav: "audio/x-wav",
  mp4: "video/mp4",
  mov: "video/quicktime",
  csv: "text/csv",
  html: "text/html",
};

/** Telegram derives mime_type from the file name, not the (octet-stream) part header grammY sends. */
export function mimeFromName(name: string, fallback = "application/octet-stream"): string {
  return MIME_BY_EXT[name.split(".").pop()?.toLowerCase() ?? ""] ?? fallback;
}
