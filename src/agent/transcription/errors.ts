/**
 * Why a voice note was not transcribed, as types the gateway turns into the
 * sender's reply: no key (points at `fermix setup`), too large (names the
 * cap), anything else (try again; the backend's reason goes to the log).
 * No message here ever contains a key.
 */
import { formatMb } from "../../kernel/sizes.ts";

/** The configured backend has no key, so nothing is sent anywhere. */
export class NoTranscriptionKey extends Error {
  override name = "NoTranscriptionKey";
  constructor(
    readonly backend: string,
    /** The environment variable that would supply the key. */
    readonly variable: string,
  ) {
    super(`no API key for the ${backend} transcription backend (set [fermix_core.transcription] api_key or ${variable})`);
  }
}

/** The recording is over the transcription cap (`max_file_mb`). */
export class TooLarge extends Error {
  override name = "TooLarge";
  constructor(
    readonly size: number,
    readonly cap: number,
  ) {
    super(`the audio is ${formatMb(size)}, over the ${formatMb(cap)} transcription limit`);
  }
}

/** The backend did not give a transcript: `reason` says why, for the log. */
export class TranscriptionFailed extends Error {
  override name = "TranscriptionFailed";
  constructor(
    readonly backend: string,
    readonly reason: string,
    /** The HTTP status, when the backend answered one. */
    readonly status?: number,
  ) {
    super(`${backend} transcription failed: ${reason}`);
  }
}
