/**
 * Setup's live checks against loopback fakes: the provider's /models answer
 * named by failure, local servers found on probed ports, and Telegram owner
 * pairing (the next private message, confirmed so the daemon does not answer
 * it; a group message or a timeout pairs nobody).
 */
import { afterEach, expect, test } from "bun:test";
import { pairTelegramOwner, telegramGetMe } from "../../src/channels/telegram/setup-api.ts";
import { checkProvider } from "../../src/setup/check.ts";
import { probeLocalServers, probeTargets } from "../../src/setup/probe.ts";
import { startFakeModel } from "../fakes/model-server.ts";
import { ALICE, BOB, groupChat, startTelegramFake } from "../fakes/telegram.ts";

const stops: Array<() => unknown> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

test("checkProvider names the failure: unreachable, key refused, unknown model; and passes a listed model", async () => {
  const model = await startFakeModel();
  stops.push(() => model.stop());
  const refusing = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ error: { message: "bad key" } }, { status: 401 }) });
  stops.push(() => refusing.stop(true));

  expect(await checkProvider({ baseUrl: model.url, model: "fake-model" })).toEqual({ ok: true, models: ["fake-model"] });
  expect(await checkProvider({ baseUrl: model.url, model: "gpt-9" })).toMatchObject({
    ok: false,
    reason: "unknown_model",
    message: 'the server does not list the model "gpt-9" (it has: fake-model)',
  });
  const refused = await checkProvider({ baseUrl: `http://127.0.0.1:${refusing.port}/v1`, apiKey: "sk-secret-value-123", model: "m" });
  expect(refused).toMatchObject({
    ok: false,
    reason: "unauthorized",
    message: `the server refused the API key (HTTP 401 from http://127.0.0.1:${refusing.port}/v1/models)`,
  });
  expect(JSON.stringify(refused)).not.toContain("sk-secret-value-123");
  expect((await checkProvider({ baseUrl: "http://127.0.0.1:9/v1", model: "m" })).ok).toBe(false);
});

test("probing finds the servers that answer with a model list, and names the usual ports", async () => {
  const model = await startFakeModel();
  stops.push(() => model.stop());
  expect(probeTargets({})).toEqual(["127.0.0.1:11434", "127.0.0.1:8080", "127.0.0.1:1234", "127.0.0.1:8000"]);
  const targets = probeTargets({ FERMIX_SETUP_PROBES: `127.0.0.1:9, 127.0.0.1:${model.port}` });
  expect(await probeLocalServers(targets)).toEqual([{ label: "OpenAI-compatible server", id: "local", baseUrl: model.url, models: ["fake-model"] }]);
});

test("getMe names the bot; a wrong token is refused without showing it", async () => {
  const telegram = startTelegramFake();
  stops.push(() => telegram.stop());
  expect(await telegramGetMe(telegram.token, { apiRoot: telegram.url })).toEqual({ id: 7000000001, username: "fermix_test_bot", firstName: "Fermix Test" });
  const wrong = telegramGetMe("123:not-the-token", { apiRoot: telegram.url });
  await expect(wrong).rejects.toThrow("Telegram refused the bot token");
  await expect(wrong).rejects.not.toThrow("not-the-token");
});

test("pairing takes the next private message's sender and confirms it; an old pending message and group messages do not pair", async () => {
  const telegram = startTelegramFake();
  stops.push(() => telegram.stop());
  telegram.pushMessage(telegram.message.text("sent an hour ago", { from: BOB, date: Math.floor(Date.now() / 1000) - 3600 }));
  const pairing = pairTelegramOwner(telegram.token, { apiRoot: telegram.url, timeoutMs: 10_000, pollSeconds: 2 });
  // Pairing has looked at what was pending before the next messages come.
  await telegram.waitForRequest("getUpdates");
  telegram.pushMessage(telegram.message.text("hello all", { from: BOB, chat: groupChat() }));
  const [mine] = telegram.pushMessage(telegram.message.text("it's me"));
  expect(await pairing).toEqual({ id: String(ALICE.id), name: "Alice Liddell", username: "alice" });
  // Confirmed: a daemon polling later starts after the pairing message.
  expect(telegram.updates.lastOffset).toBe(mine!.update_id + 1);
});

test("pairing gives up at its deadline", async () => {
  const telegram = startTelegramFake();
  stops.push(() => telegram.stop());
  const started = Date.now();
  expect(await pairTelegramOwner(telegram.token, { apiRoot: telegram.url, timeoutMs: 1500, pollSeconds: 1 })).toBeUndefined();
  expect(Date.now() - started).toBeLessThan(8000);
  // It long-polls up to the deadline rather than asking again and again once less than a second is left.
  expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  expect(telegram.calls("getUpdates").length).toBeLessThanOrEqual(3);
});
