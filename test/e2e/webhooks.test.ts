/**
 * The webhook routes of the compiled daemon, over real HTTP: the body limit
 * and idempotency keys that survive a restart. (The SIGKILL replay is
 * test/e2e/replay.test.ts.)
 */
import { expect, test } from "bun:test";
import { dmEvent, envelope, USER } from "../channels/slack/fixtures.ts";
import { lastInputParts, reply } from "../fakes/model-server.ts";
import type { RunningDaemon } from "../helpers/binary.ts";
import { CHANNELS_OFF, OPENAI_TEST, providerToml, slackToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { rawStatus } from "../helpers/raw-http.ts";
import { postSlackWebhook } from "../helpers/sign.ts";

const SECRET = "slack-signing-secret-e2e";

const { model, slack, home, daemon } = e2eResources();

/** The fake model, the Slack fake (replies land there, never on slack.com) and a home configured for both. */
async function setup() {
  const fake = await model();
  const platform = slack();
  const h = home();
  h.writeConfig(
    providerToml(fake.url, OPENAI_TEST) +
      CHANNELS_OFF +
      slackToml({ botToken: platform.token, signingSecret: SECRET, ownerUserId: USER, apiUrl: platform.apiUrl }),
  );
  return { fake, home: h };
}

function postSlack(d: RunningDaemon, event: Record<string, unknown>) {
  const body = JSON.stringify(envelope(event));
  return postSlackWebhook(d.url, body, SECRET);
}

/** POST `size` spaces to `path` as one chunk, with no Content-Length, and return the status code. */
function chunkedStatus(port: number, path: string, size: number): Promise<number> {
  const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n`;
  const text = (chunk: string) => new TextEncoder().encode(chunk);
  return rawStatus(port, head, [text(`${size.toString(16)}\r\n`), new Uint8Array(size).fill(0x20), text("\r\n0\r\n\r\n")]);
}

test("1,000,001 bytes to either webhook route is 413, with and without Content-Length", async () => {
  const { fake, home } = await setup();
  const d = await daemon(home);
  for (const path of ["/webhook/slack", "/webhook/whatsapp"]) {
    const sized = await fetch(new URL(path, d.url), { method: "POST", body: new Uint8Array(1_000_001), headers: { "content-type": "application/json" } });
    expect(sized.status).toBe(413);
    expect(await chunkedStatus(Number(d.url.port), path, 1_000_001)).toBe(413);
  }
  expect(fake.requests).toHaveLength(0);
});

test("idempotency keys survive a restart: a redelivery after restart is not answered twice", async () => {
  const { fake, home } = await setup();
  fake.reply(reply.text("first and only"));
  const event = dmEvent({ text: "remember me", ts: "1700000100.000100" });
  const first = await daemon(home);
  expect((await postSlack(first, event)).status).toBe(200);
  await fake.waitForRequests(1);
  expect(await first.stop("SIGTERM")).toBe(0);

  const second = await daemon(home);
  expect((await postSlack(second, event)).status).toBe(200);
  // A fresh message after it proves the daemon is processing; the redelivery never reached the model.
  fake.reply(reply.text("new one"));
  expect((await postSlack(second, dmEvent({ text: "something new", ts: "1700000200.000100" }))).status).toBe(200);
  await fake.waitForRequests(2);
  // The fresh message was processed after the redelivery was answered: had the redelivery become a turn, it would be request 2.
  expect(fake.requests.map((r) => lastInputParts(r)[0]?.text)).toEqual(["remember me", "something new"]);
});
