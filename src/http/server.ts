/**
 * Serve the app on `Bun.serve`. The body limit is checked first, before any
 * route runs: Bun rejects an oversized Content-Length itself, and a chunked
 * body with no length is read here so the limit applies to it too. A URL
 * the router would read a different path from (a Host under four
 * characters, or none) is rebuilt first, so the access check and the
 * router judge the same path (src/http/access.ts). A WebSocket upgrade to a
 * socket route (the Talk page's) is judged by that route, which runs the
 * same access check first.
 */
import type { Server } from "bun";
import type { Logger } from "../kernel/log.ts";
import { pathAndQuery, pathOf, routerReadsPath } from "./access.ts";
import { jsonResponse } from "./health.ts";

export const MAX_BODY_BYTES = 1_000_000;

export interface HttpHandler {
  handle(request: Request): Promise<Response> | Response;
}

export interface HttpServer {
  url: URL;
  stop(): Promise<void>;
}

/** One end of a WebSocket as a route sees it: frames in, and its end. */
export interface SocketPeer {
  message(text: string): void;
  close(): void;
}

/**
 * A WebSocket route (the Talk page's): `accept` judges the upgrade request
 * — a Response refuses it (421, 401, 403…) — or returns how to make the
 * peer once the socket is open (`send` writes a text frame, `close` ends it).
 */
export interface SocketRoute {
  path: string;
  accept(request: Request, connection: SocketConnection): Response | ((send: (text: string) => void, close: () => void) => SocketPeer);
}

/** Where an upgrade request came from (the client's address and port, when known) and the port it came to. */
export interface SocketConnection {
  client: { address: string; port: number } | null;
  serverPort: number;
}

interface SocketData {
  open: (send: (text: string) => void, close: () => void) => SocketPeer;
  peer?: SocketPeer;
}

/** The largest WebSocket frame taken (bytes): a companion frame of audio is well under it. */
const MAX_FRAME_BYTES = 1_000_000;

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

/** The route a WebSocket upgrade request asks for, if it is one. */
function socketRouteFor(request: Request, routes: readonly SocketRoute[]): SocketRoute | undefined {
  if (routes.length === 0 || request.headers.get("upgrade")?.toLowerCase() !== "websocket") return undefined;
  const path = pathOf(request.url);
  return routes.find((route) => route.path === path);
}

export function serveHttp(app: HttpHandler, options: { hostname: string; port: number; log: Logger; sockets?: readonly SocketRoute[] }): HttpServer {
  const sockets = options.sockets ?? [];
  const server: Server<SocketData> = Bun.serve<SocketData>({
    hostname: options.hostname,
    port: options.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    async fetch(request, server) {
      // A WebSocket is judged on the request as it came (the upgrade needs that very object): the route's own access check.
      const route = socketRouteFor(request, sockets);
      if (route) {
        const ip = server.requestIP(request);
        const accepted = route.accept(request, { client: ip ? { address: ip.address, port: ip.port } : null, serverPort: server.port ?? 0 });
        if (accepted instanceof Response) return accepted;
        if (server.upgrade(request, { data: { open: accepted } })) return undefined;
        return jsonResponse({ error: "Bad Request" }, 400);
      }
      const ready = await bufferUnsizedBody(routable(request));
      if (ready instanceof Response) return ready;
      return app.handle(ready);
    },
    error(error) {
      options.log.error("http server error", { error: error.message });
      return jsonResponse({ error: "Internal Server Error" }, 500);
    },
    websocket: {
      maxPayloadLength: MAX_FRAME_BYTES,
      open(ws) {
        ws.data.peer = ws.data.open(
          (text) => void ws.send(text),
          () => ws.close(),
        );
      },
      message(ws, message) {
        ws.data.peer?.message(typeof message === "string" ? message : new TextDecoder().decode(message));
      },
      close(ws) {
        ws.data.peer?.close();
      },
    },
  });
  return {
    url: server.url,
    stop: () => server.stop(true),
  };
}
