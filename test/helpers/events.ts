/** Reading the status page's live stream (`/events`) from outside, as a browser would. */

/** Everything `/events` at `base` sends from now until `defer`'s cleanup runs (the end of the test). */
export function captureEvents(base: URL, defer: (cleanup: () => unknown) => void): { text(): string } {
  const abort = new AbortController();
  defer(() => abort.abort());
  let text = "";
  void (async () => {
    try {
      const response = await fetch(new URL("/events", base), { signal: abort.signal });
      const decoder = new TextDecoder();
      for await (const chunk of response.body!) text += decoder.decode(chunk, { stream: true });
    } catch {
      // Aborted at the end of the test.
    }
  })();
  return { text: () => text };
}
