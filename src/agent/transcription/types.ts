/**
 * The one interface every speech-to-text backend implements, and what each is
 * built from. A backend turns the bytes of one recording into text; choosing
 * the backend, finding its key and capping sizes happen around it (index.ts).
 */

import type { Sleep } from "../../kernel/wait.ts";
import type { FetchedMedia } from "../../message/index.ts";

/** One recording as downloaded: its bytes, its MIME type, and the platform's file name when it gave one. */
export type AudioClip = Pick<FetchedMedia, "bytes" | "mime" | "filename">;

export interface Transcriber {
  /** The text spoken in `audio`. Rejects with TranscriptionFailed (or the signal's reason when aborted). */
  transcribe(audio: AudioClip, signal?: AbortSignal): Promise<string>;
}

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** What a backend is built from: where it is, how it authenticates, and the I/O it may use (injected in tests). */
export interface BackendOptions {
  /** The API root including its version, without a trailing slash (e.g. https://api.openai.com/v1). */
  baseUrl: string;
  /** Absent only for an OpenAI-compatible server on this machine that needs none. */
  apiKey?: string;
  /** Ignored by the modelless xai backend. */
  model?: string;
  /** One attempt's deadline, ms; a retry gets a fresh one. */
  timeoutMs: number;
  fetch?: FetchLike;
  sleep?: Sleep;
  /** Wall clock (ms) for a Retry-After given as an HTTP date. */
  now?: () => number;
  /** Wait before the retry of a 429/5xx that names no Retry-After, ms (default 1000). */
  retryDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the attempt fails at once (default 30000 ms). */
  maxRetryWaitMs?: number;
}
