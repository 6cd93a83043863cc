/**
 * The status dashboard: `GET /` renders the page, `GET /events` keeps it
 * live over Server-Sent Events. Each update is the page's live part
 * rendered again on the server (the same function as the first load) and
 * swapped in by a few lines of inline script; an update is sent when
 * something was recorded, and at most every `refreshMs` while anything
 * shown changes (uptime, a channel's status).
 */
import { Elysia } from "elysia";
import { html } from "../html.ts";
import { page } from "../page.ts";
import { renderLive } from "./render.ts";
import type { DashboardSource } from "./types.ts";

export type { DashboardSource, DashboardView, DesktopView } from "./types.ts";

/** The browser side: open the stream, swap each update in, show whether it is connected. */
const CLIENT = `(()=>{const live=document.getElementById("live"),conn=document.getElementById("conn");
const es=new EventSource("/events");
es.addEventListener("dashboard",(e)=>{live.innerHTML=e.data;});
es.onopen=()=>{conn.className="conn live";conn.textContent="live";};
es.onerror=()=>{conn.className="conn lost";conn.textContent="reconnecting…";};})();`;

export interface DashboardOptions {
  /** How often the stream looks for a change to send, in ms (default 1000). */
  refreshMs?: number;
  /** How long after an event the update goes out, gathering a burst into one (ms, default 150). */
  debounceMs?: number;
  /** A comment line this often keeps idle connections (and proxies) open (ms, default 5000). */
  keepAliveMs?: number;
}

/** One SSE event whose data is `body` (one `data:` line per line of it). */
export function sseEvent(name: string, body: string): string {
  return `event: ${name}\n${body
    .split("\n")
    .map((line) => `data: ${line}`)
    .join("\n")}\n\n`;
}

export function dashboardRoutes(source: DashboardSource, options: DashboardOptions = {}) {
  const refreshMs = options.refreshMs ?? 1000;
  const debounceMs = options.debounceMs ?? 150;
  const keepAliveMs = options.keepAliveMs ?? 5000;

  const events = (signal: AbortSignal) => {
    const encoder = new TextEncoder();
    let cleanup = () => {};
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        let last = "";
        let closed = false;
        let pending: ReturnType<typeof setTimeout> | undefined;
        let sending = false;
        const send = (text: string) => {
          if (closed) return;
          try {
            controller.enqueue(encoder.encode(text));
          } catch {
            cleanup();
          }
        };
        const push = async () => {
          if (closed || sending) return;
          sending = true;
          try {
            const body = String(renderLive(await source.view()));
            if (body !== last) {
              last = body;
              send(sseEvent("dashboard", body));
            }
          } catch {
            // The daemon is shutting down (its database closed under the view): the next tick, if any, tries again.
          } finally {
            sending = false;
          }
        };
        const soon = () => {
          if (pending !== undefined) return;
          pending = setTimeout(() => {
            pending = undefined;
            void push();
          }, debounceMs);
        };
        // An open page never keeps the process alive on its own.
        const ticker = setInterval(() => void push(), refreshMs);
        ticker.unref();
        const keepAlive = setInterval(() => send(": keep-alive\n\n"), keepAliveMs);
        keepAlive.unref();
        const unsubscribe = source.onChange(soon);
        cleanup = () => {
          if (closed) return;
          closed = true;
          clearInterval(ticker);
          clearInterval(keepAlive);
          clearTimeout(pending);
          unsubscribe();
          try {
            controller.close();
          } catch {
            // Already closed by the client going away.
          }
        };
        signal.addEventListener("abort", cleanup, { once: true });
        send("retry: 2000\n\n");
        void push();
      },
      cancel() {
        cleanup();
      },
    });
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
        "x-content-type-options": "nosniff",
      },
    });
  };

  return new Elysia({ name: "dashboard" })
    .get("/", async () => {
      const live = renderLive(await source.view());
      const body = html`<header class="top"><h1 class="brand"><span class="mark"></span>Fermix</h1><span id="conn" class="conn">connecting…</span></header>
<main id="live">${live}</main>
<footer>Fermix status · <a href="/health/ready?pretty=1">health report</a> · <a href="/metrics">metrics</a></footer>`;
      return page({ title: "Fermix status", body, script: CLIENT });
    })
    .get("/events", ({ request }) => events(request.signal));
}
