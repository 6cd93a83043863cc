/**
 * A small web site on loopback for web_fetch, and a listener that only
 * records connections, to prove a refused address was never connected to.
 *
 * The site (`startWebSite(host)`, bound to `host`, default 127.0.0.1):
 * `/article` a real-looking news page (navigation, an ad, a footer and a
 * script around the article), `/redirect?to=URL` a 302 to URL, `/hop`
 * redirects to `/article` through two hops, `/big` a page of `bigBytes`
 * whose last line says so, `/notes.txt`, `/data.json`, `/paper.pdf`,
 * `/image.png`. It records each request's path and Host header.
 */
import type { Server, TCPSocketListener } from "bun";

export const ARTICLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>How the tide tables are made | Coast News</title>
<meta name="description" content="The harbour office's yearly tables, and why storms break them.">
<script>window.analytics = { track() {} };</script>
<style>nav a { margin: 0 1em }</style></head>
<body>
<nav class="site-nav"><a href="/">Home</a> <a href="/sports">Sports</a> <a href="/weather">Weather</a> <a href="/login">Log in</a></nav>
<header class="masthead"><h1>Coast News</h1><p>Your harbour, every morning</p></header>
<div class="ad">Advertisement: BOATS HALF PRICE at Marina Mart</div>
<main><article>
<h1>How the tide tables are made</h1>
<p class="byline">By Ada Marsh · 4 March</p>
<p>Every spring the harbour office publishes the <a href="/tables/2026">tide tables</a> for the year. They are computed from <strong>harmonic constants</strong> measured over decades at the pier gauge.</p>
<p>The method goes back to Lord Kelvin's tide-predicting machine, a brass contraption of pulleys and gears that summed the constituents mechanically. Today the same sums run on a laptop in a fraction of a second, but the constants still come from patient measurement at each port.</p>
<h2>Why they can be wrong</h2>
<p>Storm surges and strong winds push water around in ways no table can foresee. Sailors are told to add a margin, especially in winter, when low pressure raises the sea level by up to half a metre.</p>
<ul><li>Check the forecast before leaving.</li><li>Add a margin of half a metre in winter.</li></ul>
<p>The harbour master, Tom Reyes, put it simply: "The table tells you what the moon wants. The weather decides what you get."</p>
</article></main>
<aside class="related"><h3>Most read</h3><ul><li><a href="/x">Council votes on parking</a></li><li><a href="/y">Lifeboat day</a></li></ul></aside>
<footer><p>© Coast News. All rights reserved.</p><p><a href="/privacy">Privacy</a></p></footer>
<script>document.querySelector('.ad').remove()</script>
</body></html>`;

export interface WebSite {
  url: string;
  /** Paths asked, in order, with the Host header each came with. */
  requests: Array<{ path: string; host: string }>;
  stop(): void;
}

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

export function startWebSite(options: { host?: string; bigBytes?: number } = {}): WebSite {
  const host = options.host ?? "127.0.0.1";
  const bigBytes = options.bigBytes ?? 200_000;
  const requests: WebSite["requests"] = [];
  const server: Server<undefined> = Bun.serve({
    hostname: host,
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      requests.push({ path: url.pathname, host: req.headers.get("host") ?? "" });
      switch (url.pathname) {
        case "/article":
          return new Response(ARTICLE_HTML, { headers: { "content-type": "text/html; charset=utf-8" } });
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: url.searchParams.get("to") ?? "/article" } });
        case "/hop":
          return new Response(null, { status: 301, headers: { location: "/hop2" } });
        case "/hop2":
          return new Response(null, { status: 307, headers: { location: "/article" } });
        case "/loop":
          return new Response(null, { status: 302, headers: { location: "/loop" } });
        case "/big": {
          const line = "<p>filler filler filler filler filler filler filler filler filler filler</p>\n";
          const body = `<html><head><title>Big</title></head><body>${line.repeat(Math.ceil(bigBytes / line.length))}<p>THE LAST LINE OF THE BIG PAGE</p></body></html>`;
          return new Response(body, { headers: { "content-type": "text/html" } });
        }
        case "/notes.txt":
          return new Response("plain notes\nline two\n", { headers: { "content-type": "text/plain; charset=utf-8" } });
        case "/data.json":
          return new Response('{"tide":"high","at":"06:12"}', { headers: { "content-type": "application/json" } });
        case "/paper.pdf":
          return new Response("%PDF-1.7\n%fake\n", { headers: { "content-type": "application/pdf" } });
        case "/image.png":
          return new Response(PNG, { headers: { "content-type": "image/png" } });
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
  const shown = host.includes(":") ? `[${host}]` : host;
  return { url: `http://${shown}:${server.port}`, requests, stop: () => server.stop(true) };
}

export interface ConnectionRecorder {
  port: number;
  /** Connections accepted so far, by the address they came to. */
  connections: string[];
  stop(): void;
}

/** A TCP listener on 127.0.0.1 and [::1] (one port) that records every connection and closes it. */
export function recordConnections(): ConnectionRecorder {
  const connections: string[] = [];
  const handler = (at: string) => ({
    open(socket: { end(): void }) {
      connections.push(at);
      socket.end();
    },
    data() {},
  });
  const v4: TCPSocketListener<undefined> = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: handler("127.0.0.1") });
  let v6: TCPSocketListener<undefined> | undefined;
  try {
    v6 = Bun.listen({ hostname: "::1", port: v4.port, socket: handler("::1") });
  } catch {
    // No IPv6 loopback on this machine: the [::1] URLs then cannot connect anyway.
  }
  return {
    port: v4.port,
    connections,
    stop() {
      v4.stop(true);
      v6?.stop(true);
    },
  };
}
