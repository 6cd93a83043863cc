/**
 * The Talk page and its WebSocket route, without a port: the page as it is
 * served (its script pinned by the Content-Security-Policy, what it says
 * while realtime voice is off), and who the socket route lets in — the
 * same Host check and, beyond loopback, the same token as the status page,
 * then an Origin that must be the page's own.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { buildHealthReport } from "../../src/daemon/health.ts";
import type { AccessPolicy } from "../../src/http/access.ts";
import { createApp, socketRoutes } from "../../src/http/app.ts";
import { SetupGate } from "../../src/http/setup/index.ts";
import { TALK_SCRIPT } from "../../src/http/talk/client.ts";
import { type Accounts, sameOrigin, type TalkSource, talkSocket } from "../../src/http/talk/index.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { READY_CONFIG } from "../helpers/home.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const quiet = new Logger({ write() {} }, "error", new Redactor());
const loaded = loadedFrom(READY_CONFIG);
const report = () => buildHealthReport({ version: "t", now: new Date(), loaded, channels: new Map(), databaseReady: true, restartRequired: false });
const TOKEN = "talk-test-dashboard-token-000";

function talkWith(enabled: boolean) {
  const connected: string[] = [];
  const source: TalkSource = {
    enabled: () => enabled,
    connect: (send) => {
      connected.push("page");
      send('{"type":"hello"}');
      return { message() {}, close() {} };
    },
  };
  return { source, connected };
}

const LOOPBACK: AccessPolicy = { allowedHosts: () => [] };
const BEYOND: AccessPolicy = { allowedHosts: () => [], dashboardTokens: () => [TOKEN] };

async function get(path: string, access: AccessPolicy, enabled: boolean, headers: Record<string, string> = {}) {
  const app = createApp({ access, report, setupGate: new SetupGate(), log: quiet, talk: talkWith(enabled).source });
  const res = await app.handle(new Request(`http://127.0.0.1:4030${path}`, { headers: { host: "127.0.0.1:4030", ...headers } }));
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** The daemon runs as uid 1000 here; the kernel says the client on port 50000 is `clientUid`'s (undefined: not listed). */
const accountsWith = (clientUid: number | undefined): Accounts => ({ own: 1000, of: (client) => (client.port === 50_000 ? clientUid : undefined) });
const FROM_LOOPBACK = { client: { address: "127.0.0.1", port: 50_000 }, serverPort: 4030 };

/** The socket route's answer to an upgrade request with these headers: its status, or "upgrade". */
function upgrade(access: AccessPolicy, enabled: boolean, headers: Record<string, string>, accounts: Accounts | null = accountsWith(1000)): number | "upgrade" {
  const route = talkSocket(talkWith(enabled).source, access, accounts);
  const request = new Request("http://127.0.0.1:4030/talk/ws", { headers: { upgrade: "websocket", connection: "Upgrade", ...headers } });
  const answer = route.accept(request, FROM_LOOPBACK);
  return answer instanceof Response ? answer.status : "upgrade";
}

describe("the Talk page", () => {
  test("is served with its script pinned by hash and the microphone allowed for itself only", async () => {
    const page = await get("/talk", LOOPBACK, true);
    expect(page.status).toBe(200);
    const hash = createHash("sha256").update(TALK_SCRIPT).digest("base64");
    expect(page.headers.get("content-security-policy")).toContain(`script-src 'sha256-${hash}'`);
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(page.headers.get("permissions-policy")).toBe("microphone=(self)");
    expect(page.body).toContain('<button id="start" type="button">Start</button>');
    expect(page.body).toContain('<meter id="level"');
    expect(page.body).not.toContain('id="off"');
  });

  test("says how to turn realtime voice on while it is off", async () => {
    const page = await get("/talk", LOOPBACK, false);
    expect(page.body).toContain('id="off"');
    expect(page.body).toContain("[fermix_core.realtime] enabled = true");
  });

  test("answers only an allowed Host, and beyond loopback only with the dashboard token", async () => {
    expect((await get("/talk", LOOPBACK, true, { host: "evil.example" })).status).toBe(421);
    expect((await get("/talk", BEYOND, true)).status).toBe(401);
    expect((await get("/talk", BEYOND, true, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });
});

describe("the Talk socket", () => {
  const own = { host: "127.0.0.1:4030", origin: "http://127.0.0.1:4030" };

  test("opens for its own page", () => {
    expect(upgrade(LOOPBACK, true, own)).toBe("upgrade");
  });

  test("refuses another Host (421) before anything else, and another site's page or no Origin at all (403)", () => {
    expect(upgrade(LOOPBACK, true, { host: "evil.example:4030", origin: "http://evil.example:4030" })).toBe(421);
    expect(upgrade(LOOPBACK, true, { host: own.host, origin: "https://evil.example" })).toBe(403);
    expect(upgrade(LOOPBACK, true, { host: own.host, origin: "http://127.0.0.1:9999" })).toBe(403);
    expect(upgrade(LOOPBACK, true, { host: own.host })).toBe(403);
  });

  test("beyond loopback it needs the dashboard token, as the status page does", () => {
    expect(upgrade(BEYOND, true, own)).toBe(401);
    expect(upgrade(BEYOND, true, { ...own, authorization: `Bearer ${TOKEN}` })).toBe("upgrade");
  });

  test("while realtime voice is off it is 503", () => {
    expect(upgrade(LOOPBACK, false, own)).toBe(503);
  });

  test("there is no socket route without realtime voice in the app, and one with it", () => {
    expect(socketRoutes({ access: LOOPBACK })).toEqual([]);
    expect(socketRoutes({ access: LOOPBACK, talk: talkWith(true).source }).map((r) => r.path)).toEqual(["/talk/ws"]);
  });

  test("on a loopback bind, only the account Fermix runs as may open it: another account, or one the kernel does not list, is 403", () => {
    expect(upgrade(LOOPBACK, true, own, accountsWith(1000))).toBe("upgrade");
    expect(upgrade(LOOPBACK, true, own, accountsWith(1001))).toBe(403);
    expect(upgrade(LOOPBACK, true, own, accountsWith(undefined))).toBe(403);
    // Where the system cannot say (off Linux), the Host and Origin checks are what there is.
    expect(upgrade(LOOPBACK, true, own, null)).toBe("upgrade");
  });

  test("beyond loopback the token is the check, whoever's connection it is (a proxy under another account)", () => {
    expect(upgrade(BEYOND, true, { ...own, authorization: `Bearer ${TOKEN}` }, accountsWith(1001))).toBe("upgrade");
  });

  test("sameOrigin compares host and port, in any case; a missing or malformed Origin is not the same", () => {
    expect(sameOrigin("http://LOCALHOST:4030", "localhost:4030")).toBe(true);
    expect(sameOrigin("https://fermix.example", "fermix.example")).toBe(true);
    expect(sameOrigin("http://localhost:4031", "localhost:4030")).toBe(false);
    expect(sameOrigin("null", "localhost:4030")).toBe(false);
    expect(sameOrigin(null, "localhost:4030")).toBe(false);
  });
});
