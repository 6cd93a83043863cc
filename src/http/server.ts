/**
 * Serve the app on `Bun.serve`. The body limit is checked first, before any
 * route runs: Bun rejects an oversized Content-Length itself, and a chunked
 * body with no length is read here so the limit applies to it too. A URL
 * the router would read a different path from (a Host under four
 * characters, or none) is rebuilt first, so the access check and the
 * router judge the same path (src/http/access.ts).
 */
import type { Server } from "bun";
import type { Logger } from "../kernel/log.ts";
import { pathAndQuery, routerReadsPath } from "./access.ts";
import { jsonResponse } from "./health.ts";

export const MAX_BODY_BYTES = 1_000_000;

export interface HttpHandler {
  handle(request: Request): Promise<Response> | Response;
}

export interface HttpServer {
  url: URL;
  stop(): Promise<void>;
}

const tooLarge = () => jsonResponse({ error: "Payload Too Large" }, 413);

/**
 * The request on a URL whose path the router reads as it is. Only the URL's
 * authority changes (to a name that is never a Host): the Host header,
 * which the access check reads, stays as sent.
 */
function routable(request: Request): Request {
  return routerReadsPath(request.url) ? request : new Request(`http://fermix.invalid${pathAndQuery(request.url)}`, request);
}

/** Read a body with no declared length under the limit, so routes see an ordinary buffered request. */
async function bufferUnsizedBody(request: Request): Promise<Request | Response> {
  // The header first: reading `request.body` builds a stream object, which a request with a length never needs.
  if (request.headers.has("content-length") || request.body === null) return request;
  let bytes: ArrayBuffer;
  try {
    bytes = await request.arrayBuffer();
  } catch {
    return tooLarge();
  }
  if (bytes.byteLength > MAX_BODY_BYTES) return tooLarge();
  const headers = new Headers(request.headers);
  headers.delete("transfer-encoding");
  headers.set("content-length", String(bytes.byteLength));
  return new Request(request.url, { method: request.method, headers, body: bytes });
}

export function serveHttp(app: HttpHandler, options: { hostname: string; port: number; log: Logger }): HttpServer {
  const server: Server<undefined> = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    async fetch(request) {
      const ready = await bufferUnsizedBody(routable(request));
      if (ready instanceof Response) return ready;
      return app.handle(ready);
    },
    error(error) {
      options.log.error("http server error", { error: error.message });
      return jsonResponse({ error: "Internal Server Error" }, 500);
    },
  });
  return {
    url: server.url,
    stop: () => server.stop(true),
  };
}
