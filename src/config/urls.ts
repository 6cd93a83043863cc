/**
 * What a configured URL says about where a credential would travel: whether a
 * server is on this machine or a private network (a model or transcription
 * server that may run without a key), and whether two URLs reach the same
 * server (so a key configured for one is never sent to another).
 */

/** A server on this machine or a private network may run without a key (Ollama, llama.cpp, a local whisper server). */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host.endsWith(".local") ||
    host === "::1" ||
    /^127\./.test(host) ||
    /^10\./.test(host) ||
    /^192\.168\./.test(host) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(host)
  );
}

/** Whether two URLs reach the same server: scheme, host and port all equal. False when either does not parse. */
export function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
