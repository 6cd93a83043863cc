/**
 * Slack and WhatsApp check their token when they start, so a revoked or
 * mistyped one shows up in health at once instead of at the first reply
 * that cannot be sent; the error never contains the token.
 */
import { afterEach, expect, test } from "bun:test";
import { slackAdapter } from "../../src/channels/slack/index.ts";
import type { AdapterContext } from "../../src/channels/types.ts";
import { whatsAppAdapter } from "../../src/channels/whatsapp/index.ts";
import { describeForLog } from "../../src/kernel/fault-line.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import { startSlackFake } from "../fakes/slack.ts";
import { startWhatsAppFake } from "../fakes/whatsapp.ts";
import { slackToml, whatsappToml } from "../helpers/config.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const stops: Array<() => unknown> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});
const context = () => ({ log: new Logger({ write() {} }, "error", new Redactor()) }) as unknown as AdapterContext;

test("Slack: a token the workspace accepts starts; a wrong one fails the start with Slack's reason", async () => {
  const fake = startSlackFake();
  stops.push(() => fake.stop());
  const good = slackAdapter(loadedFrom(slackToml({ botToken: fake.token, signingSecret: "s", ownerUserId: "U1", apiUrl: fake.apiUrl })).config);
  await good.start(context());
  expect(good.state().status).toBe("ready");
  expect(fake.calls("auth.test")).toHaveLength(1);

  const wrongToken = "xoxb-not-the-right-token";
  const bad = slackAdapter(loadedFrom(slackToml({ botToken: wrongToken, signingSecret: "s", ownerUserId: "U1", apiUrl: fake.apiUrl })).config);
  const error = await bad.start(context()).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(error?.message).toContain("Slack did not accept the bot token");
  // The message is what health shows: our words only; Slack's reason rides in the cause, for the log.
  expect(error?.message).not.toContain("invalid_auth");
  expect(describeForLog(error)).toContain("invalid_auth");
  expect(describeForLog(error)).not.toContain(wrongToken);
  expect(error?.message).not.toContain(wrongToken);
  expect(bad.state().status).not.toBe("ready");
});

test("WhatsApp: the number and token are checked with Graph; a wrong token fails the start without showing it", async () => {
  const fake = startWhatsAppFake();
  stops.push(() => fake.stop());
  const toml = (token: string) =>
    whatsappToml({
      accessToken: token,
      phoneNumberId: fake.phoneNumberId,
      verifyToken: "v-token",
      appSecret: "a-secret",
      ownerUserId: "1555",
      graphApiBase: fake.graphBase(),
    });
  const good = whatsAppAdapter(loadedFrom(toml(fake.token)).config);
  await good.start(context());
  expect(good.state().status).toBe("ready");

  const wrongToken = "EAAG-not-the-right-token";
  const bad = whatsAppAdapter(loadedFrom(toml(wrongToken)).config);
  const error = await bad.start(context()).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(error?.message).toContain("WhatsApp did not accept the access token");
  expect(error?.message).not.toContain(wrongToken);
  expect(bad.state().status).not.toBe("ready");
});
