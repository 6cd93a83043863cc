/**
 * The Talk page (`GET /talk`) and its WebSocket (`/talk/ws`): realtime voice
 * in the browser, speaking the companion protocol (docs/realtime.md) one
 * JSON object per text frame. Hands-free (the provider hears when the owner
 * stops) or push-to-talk, a live transcript, a level meter, the answer
 * played as it streams, Approve/Deny buttons on an access request.
 *
 * Who may use it is decided before either route runs (src/http/access.ts):
 * an allowed Host, and beyond loopback the dashboard token, like the status
 * page. The WebSocket also needs an `Origin` naming this very server: a
 * browser sends the page's own origin on every WebSocket, so a page of any
 * other site (which could otherwise open a socket to 127.0.0.1 from the
 * owner's browser) is refused with 403. On a loopback bind, where no token
 * is asked, the connection must come from the account Fermix runs as (on
 * Linux, where the kernel says whose a loopback connection is): the same
 * promise as the companion socket's file mode.
 */
import { Elysia } from "elysia";
import { loopbackPeerUid } from "../../kernel/peer.ts";
import { type AccessPolicy, checkAccess } from "../access.ts";
import { jsonResponse } from "../health.ts";
import { html } from "../html.ts";
import { page } from "../page.ts";
import type { SocketRoute } from "../server.ts";
import { TALK_SCRIPT } from "./client.ts";

export const TALK_PATH = "/talk";
export const TALK_SOCKET_PATH = "/talk/ws";

/** One page on the socket, as the daemon drives it. */
export interface TalkPeer {
  /** A text frame from the page. */
  message(text: string): void;
  /** The page went away. */
  close(): void;
}

/** What the daemon hands the Talk page. */
export interface TalkSource {
  /** Realtime voice is on (`[fermix_core.realtime] enabled`). */
  enabled(): boolean;
  /** A page connected: `send` writes a frame to it, `close` ends its socket. */
  connect(send: (text: string) => void, close: () => void): TalkPeer;
}

const OFF = html`<div class="banner warn" id="off">Realtime voice is off. Turn it on with <code>fermix setup</code> (or
<code>[fermix_core.realtime] enabled = true</code> in config.toml and a reload), then open this page again.</div>`;

export function talkRoutes(source: TalkSource) {
  return new Elysia({ name: "talk" }).get(TALK_PATH, () => {
    const body = html`<header class="top"><h1 class="brand"><span class="mark"></span>Fermix · Talk</h1><span id="conn" class="conn">not connected</span></header>
<main>
${source.enabled() ? "" : OFF}
<section class="card talk" aria-label="Voice">
<p id="state" class="talk-state" data-state="idle">Press Start and speak: Fermix answers aloud.</p>
<meter id="level" min="0" max="1" value="0" aria-label="Microphone level"></meter>
<fieldset class="modes"><legend>How you talk</legend>
<label class="check"><input type="radio" name="mode" value="server" checked> Hands-free <span class="help">Fermix answers when you pause; speak over it to cut it off.</span></label>
<label class="check"><input type="radio" name="mode" value="manual"> Push to talk <span class="help">Hold the button while you speak.</span></label>
</fieldset>
<div class="actions">
<button id="start" type="button">Start</button>
<button id="ptt" type="button" hidden>Hold to talk</button>
<button id="end" type="button" class="secondary" disabled>End</button>
<span class="muted">Heard: <output id="played" data-ms="0">0.0 s</output></span>
</div>
<div id="notices"></div>
</section>
<section aria-label="Transcript"><h2>Transcript</h2><div class="card"><ol id="transcript" class="transcript"></ol></div></section>
</main>
<footer>Fermix · <a href="/">status</a> · what is said here is kept in the voice conversation's history</footer>`;
    return page({ title: "Fermix · Talk", body, script: TALK_SCRIPT, headers: { "permissions-policy": "microphone=(self)" } });
  });
}

/** Whether `origin` is this very server, as the request's Host names it (scheme aside: a proxy may end TLS). */
export function sameOrigin(origin: string | null, host: string | null): boolean {
  if (!origin || !host) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.trim().toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Who opened a connection from this machine: this process's own account,
 * and the account behind a loopback client, where the system says (Linux);
 * null where it cannot tell (the check is then the Host and Origin alone).
 */
export interface Accounts {
  own: number;
  of(client: { address: string; port: number }, serverPort: number): number | undefined;
}

/** This machine's accounts, as the kernel lists its TCP sockets (src/kernel/peer.ts); null off Linux. */
export const systemAccounts = (): Accounts | null =>
  process.platform === "linux" && process.getuid ? { own: process.getuid(), of: (client, port) => loopbackPeerUid(client, port) } : null;

const isLoopbackAddress = (address: string) => /^(127\.|::1$|::ffff:127\.)/i.test(address);

/**
 * The WebSocket route: the access check every page gets, then the Origin,
 * then — on a loopback bind, where no token is asked — the account behind
 * the connection, which must be the daemon's own, as for the companion
 * socket: another account on the machine cannot talk with the owner's tools.
 */
export function talkSocket(source: TalkSource, access: AccessPolicy, accounts: Accounts | null = systemAccounts()): SocketRoute {
  return {
    path: TALK_SOCKET_PATH,
    accept(request, connection) {
      const refused = checkAccess(request, access);
      if (refused) return refused;
      if (!sameOrigin(request.headers.get("origin"), request.headers.get("host"))) {
        return jsonResponse({ error: "Forbidden", hint: "the Talk socket answers only its own page" }, 403);
      }
      const client = connection.client;
      if (!access.dashboardTokens && accounts && client && isLoopbackAddress(client.address) && accounts.of(client, connection.serverPort) !== accounts.own) {
        return jsonResponse(
          {
            error: "Forbidden",
            hint: "without the dashboard token the Talk socket answers only the account Fermix runs as; a proxy under another account: bind beyond loopback and use the token",
          },
          403,
        );
      }
      if (!source.enabled()) return jsonResponse({ error: "Service Unavailable", hint: "realtime voice is off ([fermix_core.realtime] enabled)" }, 503);
      return (send, close) => source.connect(send, close);
    },
  };
}
