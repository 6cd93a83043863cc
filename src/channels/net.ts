/**
 * What the HTTP-speaking channel clients share: honouring a platform's 429
 * with a capped wait, reading a download without letting it outgrow its cap,
 * and keeping credentials out of error text.
 */

import { type Sleep, sleep } from "../kernel/wait.ts";
import { MediaTooLarge } from "../message/index.ts";

/**
 * One client's rate-limit pause, shared by all its calls: after a 429 every
 * call waits out the platform's Retry-After, not only the one that was
 * refused, so a burst of parts does not hammer a limited endpoint.
 */
export class RateGate {
  private until = 0;

  constructor(
    private readonly sleepFn: Sleep = sleep,
    private readonly now: () => number = Date.now,
  ) {}

  /** Hold every call for `ms` from now (extends, never shortens, a pause already running). */
  pause(ms: number): void {
    this.until = Math.max(this.until, this.now() + ms);
  }

  /** Wait until the pause, if any, is over. */
  async wait(signal?: AbortSignal): Promise<void> {
    const left = this.until - this.now();
    if (left > 0) await this.sleepFn(left, signal);
  }
}

/** An attachment larger than the channel accepts (it lives in message/, where the gateway can tell it apart). */
export { MediaTooLarge };

/** The body of a download, refused as soon as it is known to exceed `cap` (declared length first, then as it streams). */
export async function readCapped(response: Response, cap: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel();
    throw new MediaTooLarge(declared, cap);
  }
  if (!response.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel();
      throw new MediaTooLarge(total, cap);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** `text` with every credential replaced, for error messages that may travel to logs and the outbox. */
export function scrub(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join("[redacted]");
  }
  // Belt and braces: a bearer credential echoed back by a proxy is never shown either.
  return out.replace(/(Bearer\s+)[^\s"',]+/gi, "$1[redacted]");
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A webhook body as JSON: strict UTF-8, then JSON.parse; undefined when it is neither. */
export function decodeJson(rawBody: Uint8Array): unknown {
  try {
    return JSON.parse(strictUtf8.decode(rawBody));
  } catch {
    return undefined;
  }
}
