/** The fake model server's own promises, which other suites (agent, gateway, e2e) rely on. */
import { expect, test } from "bun:test";
import { type RecordedRequest, reply, startFakeModel, userText } from "../../fakes/model-server.ts";

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

test("binds 127.0.0.1 on a free port, and its url ends in /v1", async () => {
  await using fake = await startFakeModel();
  expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  const models = (await (await fetch(`${fake.url}/models`)).json()) as { data: Array<{ id: string }> };
  expect(models.data[0]?.id).toBe("fake-model");
});

test("with nothing scripted it answers 400 (not retried), and a fallback can answer instead", async () => {
  await using fake = await startFakeModel();
  const res = await post(`${fake.url}/chat/completions`, { model: "m", messages: [] });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { message: string } }).error.message).toContain("no scripted reply for request #0");
  fake.fallback("fallback text");
  const text = await (await post(`${fake.url}/chat/completions`, { model: "m", messages: [] })).text();
  expect(text).toContain("fallback text");
  expect(text).toContain("data: [DONE]");
});

test("a function reply sees the request; userText reads the user's words in either format", async () => {
  await using fake = await startFakeModel();
  const echo = (req: RecordedRequest) => reply.text(`you said: ${userText(req)}`);
  fake.reply(echo, echo);
  const chat = await (await post(`${fake.url}/chat/completions`, { model: "m", messages: [{ role: "user", content: "hello" }] })).text();
  expect(chat).toContain("you said: hello");
  const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "bonjour" }] }];
  const responses = await (await post(`${fake.url}/responses`, { model: "m", input })).text();
  expect(responses).toContain("event: response.output_text.delta");
  expect(responses).toContain("you said: bonjour");
});

test("records path, lower-case headers and the parsed body; waitForRequests waits; reset forgets", async () => {
  await using fake = await startFakeModel();
  fake.reply(reply.text("a"));
  const waiting = fake.waitForRequests(1);
  await (await post(`${fake.url}/responses`, { model: "m", input: [] }, { "X-Trace": "t1" })).text();
  const [request] = await waiting;
  expect(request).toMatchObject({ index: 0, method: "POST", path: "/v1/responses", api: "responses", body: { model: "m" }, aborted: false });
  expect(request?.headers["x-trace"]).toBe("t1");
  expect(fake.pending).toBe(0);
  fake.reply(reply.text("b"));
  fake.reset();
  expect([fake.requests.length, fake.pending]).toEqual([0, 0]);
  await expect(fake.waitForRequests(1, 50)).rejects.toThrow("0 of 1 requests");
});

test("unknown paths are 404 and bodies without a model are 400, without using a scripted reply", async () => {
  await using fake = await startFakeModel();
  fake.reply(reply.text("kept"));
  expect((await post(`${fake.url}/embeddings`, { model: "m" })).status).toBe(404);
  expect((await post(`${fake.url}/responses`, { input: [] })).status).toBe(400);
  expect(fake.pending).toBe(1);
});

test("chat usage is sent only when the request asks for it, as real servers do", async () => {
  await using fake = await startFakeModel();
  fake.reply(reply.text("a"), reply.text("b"));
  const without = await (await post(`${fake.url}/chat/completions`, { model: "m", messages: [] })).text();
  const withUsage = await (await post(`${fake.url}/chat/completions`, { model: "m", messages: [], stream_options: { include_usage: true } })).text();
  expect(without).not.toContain("prompt_tokens");
  expect(withUsage).toContain('"prompt_tokens":10');
});

test("stop() ends hanging and stalled requests", async () => {
  const fake = await startFakeModel();
  fake.reply(reply.hang("x"), reply.stall());
  const hanging = post(`${fake.url}/chat/completions`, { model: "m", messages: [] })
    .then((r) => r.text())
    .catch((e: unknown) => e);
  const stalled = post(`${fake.url}/responses`, { model: "m", input: [] }).catch((e: unknown) => e);
  await fake.waitForRequests(2);
  await fake.stop();
  await Promise.all([hanging, stalled]);
});

test("on /messages it speaks Anthropic's dialect: a 400 of its own shape without the version header or max_tokens, its event stream, its error types", async () => {
  await using fake = await startFakeModel();
  const anthropic = { "anthropic-version": "2023-06-01" };
  const body = { model: "claude", max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
  const noVersion = await post(`${fake.url}/messages`, body);
  expect(noVersion.status).toBe(400);
  expect(await noVersion.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "anthropic-version: header is required" } });
  const { max_tokens: _, ...noLimit } = body;
  expect((await post(`${fake.url}/messages`, noLimit, anthropic)).status).toBe(400);

  fake.reply(reply.text("Hel", "lo"), reply.overloaded());
  const stream = await (await post(`${fake.url}/messages`, body, anthropic)).text();
  const types = [...stream.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
  expect(types).toEqual([
    "message_start",
    "ping",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  const overloaded = await post(`${fake.url}/messages`, body, anthropic);
  expect(overloaded.status).toBe(529);
  expect(await overloaded.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded (fake)" } });
  expect(fake.requests.map((r) => r.api)).toEqual(["anthropic", "anthropic", "anthropic", "anthropic"]);
});
