/**
 * The webhook routes of the compiled daemon, over real HTTP: the body limit
 * and idempotency keys that survive a restart. (The SIGKILL replay is
 * test/e2e/replay.test.ts.)
 */
import { afterEach, expect, test } from "bun:test";
import { connect } from "node:net";
import { dmEvent, envelope } from "../channels/slack/fixtures.ts";
import { reply, startFakeModel, type FakeModel } from "../fakes/model-server.ts";
import { startDaemon, type RunningDaemon } from "../helpers/binary.ts";
import { makeHome, type TestHome } from "../helpers/home.ts";
import { nowSeconds, signSlack } from "../helpers/sign.ts";

const SECRET = "slack-signing-secret-e2e";
const config = (modelUrl: string) => `
[fermix_core.providers.openai]
model = "gpt-test"
api_key = "sk-test-0000000000"
base_url = "${modelUrl}"

[fermix_channels.telegram]
enabled = false
[fermix_channels.acp]
enabled = false

[fermix_channels.slack]
enabled = true
bot_token = "xoxb-test-token"
signing_secret = "${SECRET}"
owner_user_id = "U2CERLKJA"
# Replies are not what these tests look at: send them nowhere (a closed loopback port), never to slack.com.
api_url = "http://127.0.0.1:9/api/"
`;

let fake: FakeModel | undefined;
const homes: TestHome[] = [];
const daemons: RunningDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) if (d.proc.exitCode === null) await d.stop("SIGKILL");
  for (const h of homes.splice(0)) h.cleanup();
  await fake?.stop();
});

async function setup() {
  fake = await startFakeModel();
  const home = makeHome();
  homes.push(home);
  home.writeConfig(config(fake.url));
  return home;
}
async function daemon(home: TestHome) {
  const d = await startDaemon(home.env);
  daemons.push(d);
  return d;
}
function postSlack(d: RunningDaemon, event: Record<string, unknown>) {
  const body = JSON.stringify(envelope(event));
  return fetch(new URL("/webhook/slack", d.url), {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...signSlack(body, SECRET, nowSeconds()) },
  });
}

function chunkedStatus(port: number, path: string, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on("error", (e) => (got ? undefined : reject(e)));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n`);
    socket.write(`${size.toString(16)}\r\n`);
    socket.write(new Uint8Array(size).fill(0x20));
    socket.write("\r\n0\r\n\r\n");
  });
}

test("1,000,001 bytes to either webhook route is 413, with and without Content-Length", async () => {
  const d = await daemon(await setup());
  for (const path of ["/webhook/slack", "/webhook/whatsapp"]) {
    const sized = await fetch(new URL(path, d.url), { method: "POST", body: new Uint8Array(1_000_001), headers: { "content-type": "application/json" } });
    expect(sized.status).toBe(413);
    expect(await chunkedStatus(Number(d.url.port), path, 1_000_001)).toBe(413);
  }
  expect(fake!.requests).toHaveLength(0);
});

test("idempotency keys survive a restart: a redelivery after restart is not answered twice", async () => {
  const home = await setup();
  fake!.reply(reply.text("first and only"));
  const event = dmEvent({ text: "remember me", ts: "1700000100.000100" });
  const first = await daemon(home);
  expect((await postSlack(first, event)).status).toBe(200);
  await fake!.waitForRequests(1);
  expect(await first.stop("SIGTERM")).toBe(0);

  const second = await daemon(home);
  expect((await postSlack(second, event)).status).toBe(200);
  // A fresh message after it proves the daemon is processing; the redelivery never reached the model.
  fake!.reply(reply.text("new one"));
  expect((await postSlack(second, dmEvent({ text: "something new", ts: "1700000200.000100" }))).status).toBe(200);
  await fake!.waitForRequests(2);
  // The fresh message was processed after the redelivery was answered: had the redelivery become a turn, it would be request 2.
  expect(fake!.requests.map((r) => r.body.input.at(-1).content[0].text)).toEqual(["remember me", "something new"]);
});
