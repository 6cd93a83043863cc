/**
 * Self-tests for the platform fakes: each is driven by the client the daemon
 * really uses (grammY, @slack/web-api) or by plain fetch/FormData for the
 * Graph API, so the fakes are known to accept exactly what those clients send.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { LogLevel, WebClient } from "@slack/web-api";
import { Api, Bot, GrammyError, InputFile } from "grammy";
import { SLACK_ALICE, SLACK_CHANNEL, SLACK_DM, type SlackFake, type SlackFile, startSlackFake } from "./slack.ts";
import { ALICE, groupChat, parseTelegramHtml, startTelegramFake, type TelegramFake } from "./telegram.ts";
import type { GraphErrorBody } from "./whatsapp/graph.ts";
import { startWhatsAppFake, WA_USER, type WhatsAppFake } from "./whatsapp.ts";

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

function telegram(opts?: Parameters<typeof startTelegramFake>[0]): { tg: TelegramFake; api: Api } {
  const tg = startTelegramFake(opts);
  stops.push(() => tg.stop());
  return { tg, api: new Api(tg.token, { apiRoot: tg.url }) };
}

async function grammyError(p: Promise<unknown>): Promise<GrammyError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GrammyError) return e;
    throw e;
  }
  throw new Error("expected a GrammyError");
}

describe("telegram fake", () => {
  test("getMe and a wrong token", async () => {
    const { tg, api } = telegram();
    const me = await api.getMe();
    expect(me.is_bot).toBe(true);
    expect(me.username).toBe("fermix_test_bot");
    const bad = new Api("1:wrong", { apiRoot: tg.url });
    const err = await grammyError(bad.getMe());
    expect(err.error_code).toBe(401);
    expect(err.description).toBe("Unauthorized");
  });

  test("sendMessage with HTML: recorded body, parsed text and entities, chat transcript", async () => {
    const { tg, api } = telegram();
    const sent = await api.sendMessage(42, '<b>hi</b> &amp; <a href="https://x.test">link</a>', {
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
      disable_notification: true,
    });
    expect(sent.text).toBe("hi & link");
    expect(sent.entities).toEqual([
      { type: "bold", offset: 0, length: 2 },
      { type: "text_link", offset: 5, length: 4, url: "https://x.test" },
    ]);
    const [call] = tg.calls("sendMessage");
    expect(call!.encoding).toBe("json");
    expect(call!.body).toMatchObject({ chat_id: 42, parse_mode: "HTML", link_preview_options: { is_disabled: true } });
    const [entry] = tg.botMessages(42);
    expect(entry).toMatchObject({ text: "hi & link", disable_notification: true, link_preview_disabled: true, deleted: false });
  });

  test("edit, delete and reactions change what the user sees", async () => {
    const { tg, api } = telegram();
    const a = await api.sendMessage(42, "draft");
    const b = await api.sendMessage(42, "💭");
    await api.editMessageText(42, a.message_id, "final answer");
    await api.deleteMessage(42, b.message_id);
    expect(tg.visibleTexts(42)).toEqual(["final answer"]);
    expect(tg.botMessages(42)[0]!.history).toEqual(["draft"]);
    const same = await grammyError(api.editMessageText(42, a.message_id, "final answer"));
    expect(same.description).toStartWith("Bad Request: message is not modified");
    const gone = await grammyError(api.deleteMessage(42, b.message_id));
    expect(gone.description).toBe("Bad Request: message to delete not found");

    const [inbound] = tg.pushMessage(tg.message.text("hello"));
    const userMsgId = inbound!.message!.message_id;
    await api.setMessageReaction(ALICE.id, userMsgId, [{ type: "emoji", emoji: "👀" }]);
    expect(tg.chat(ALICE.id)[0]!.reactions).toEqual([{ type: "emoji", emoji: "👀" }]);
    const invalid = await grammyError(api.setMessageReaction(ALICE.id, userMsgId, [{ type: "emoji", emoji: "✅" as "👀" }]));
    expect(invalid.description).toBe("Bad Request: REACTION_INVALID");
  });

  test("HTML validation and the 4096 limit after parsing", async () => {
    const { api } = telegram();
    const bad = await grammyError(api.sendMessage(1, "<br>x", { parse_mode: "HTML" }));
    expect(bad.description).toBe('Bad Request: can\'t parse entities: Unsupported start tag "br" at byte offset 0');
    const unbalanced = await grammyError(api.sendMessage(1, "<b><i>x</b></i>", { parse_mode: "HTML" }));
    expect(unbalanced.description).toContain('Unmatched end tag at byte offset 7, expected "</i>", found "</b>"');
    // 4096 visible characters inside tags pass; one more fails.
    await api.sendMessage(1, `<b>${"a".repeat(4096)}</b>`, { parse_mode: "HTML" });
    const long = await grammyError(api.sendMessage(1, "a".repeat(4097)));
    expect(long.description).toBe("Bad Request: message is too long");
  });

  test("parseTelegramHtml: allowed tags, entities in UTF-16, errors", () => {
    const ok = parseTelegramHtml('😀<tg-spoiler>s</tg-spoiler><pre><code class="language-ts">x</code></pre><blockquote expandable>q</blockquote>');
    expect(ok).toEqual({
      ok: true,
      text: "😀sxq",
      entities: [
        { type: "spoiler", offset: 2, length: 1 },
        { type: "pre", offset: 3, length: 1, language: "ts" },
        { type: "expandable_blockquote", offset: 4, length: 1 },
      ],
    });
    expect(parseTelegramHtml("a < b")).toEqual({ ok: false, error: 'Unsupported start tag "" at byte offset 2' });
    expect(parseTelegramHtml("<b>x")).toEqual({ ok: false, error: 'Can\'t find end tag corresponding to start tag "b"' });
    expect(parseTelegramHtml('<span class="x">y</span>').ok).toBe(false);
    expect(parseTelegramHtml("x</b>")).toEqual({ ok: false, error: "Unexpected end tag at byte offset 1" });
  });

  test("multipart sendPhoto with InputFile (attach://), then getFile and download", async () => {
    const { tg, api } = telegram();
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
    const sent = await api.sendPhoto(42, new InputFile(bytes, "p.png"), { caption: "<i>pic</i>", parse_mode: "HTML" });
    expect(sent.caption).toBe("pic");
    expect(sent.photo!.length).toBe(2);
    const [call] = tg.calls("sendPhoto");
    expect(call!.encoding).toBe("multipart");
    expect(String(call!.body.photo)).toStartWith("attach://");
    expect(call!.files).toHaveLength(1);
    expect(call!.files[0]).toMatchObject({ filename: "p.png", type: "application/octet-stream", size: 8 });
    expect(call!.files[0]!.field).toBe(String(call!.body.photo).slice("attach://".length));

    const file = await api.getFile(sent.photo!.at(-1)!.file_id);
    const res = await fetch(`${tg.url}/file/bot${tg.token}/${file.file_path}`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    expect(tg.botMessages(42)[0]).toMatchObject({ kind: "photo", caption: "pic", file: { source: "upload", filename: "p.png", size: 8 } });
  });

  test("inbound media: builders register files; getFile refuses over 20 MB", async () => {
    const { tg, api } = telegram();
    const photo = tg.message.photo({ bytes: new Uint8Array(1000), caption: "cap" });
    expect(photo.photo!.map((p) => p.width)).toEqual([...photo.photo!.map((p) => p.width)].sort((x, y) => x - y));
    const voice = tg.message.voice({ bytes: new TextEncoder().encode("OggS..."), duration: 2 });
    const got = await api.getFile(voice.voice!.file_id);
    expect(got.file_path).toMatch(/^voice\/file_\d+\.oga$/);
    const body = await (await fetch(`${tg.url}/file/bot${tg.token}/${got.file_path}`)).text();
    expect(body).toBe("OggS...");
    const big = tg.message.document({ file_name: "big.pdf", mime_type: "application/pdf", size: 30 * 1024 * 1024 });
    const err = await grammyError(api.getFile(big.document!.file_id));
    expect(err.description).toBe("Bad Request: file is too big");
    tg.addFile("custom-id", "abc", { kind: "document", file_name: "a.txt" });
    expect((await api.getFile("custom-id")).file_size).toBe(3);

    const album = tg.message.album([{ photo: {} }, { photo: {} }], { caption: "two" });
    expect(album[0]!.media_group_id).toBe(album[1]!.media_group_id!);
    expect(album[0]!.caption).toBe("two");
    expect(album[1]!.caption).toBeUndefined();
    const topic = tg.message.text("/ask hi", { chat: groupChat({ forum: true }), thread: 7 });
    expect(topic).toMatchObject({ message_thread_id: 7, is_topic_message: true, entities: [{ type: "bot_command", offset: 0, length: 4 }] });
  });

  test("grammY Bot long-polls: getMe, deleteWebhook, getUpdates with offsets", async () => {
    const { tg } = telegram();
    const bot = new Bot(tg.token, { client: { apiRoot: tg.url } });
    const seen: string[] = [];
    bot.on("message:text", async (ctx) => {
      seen.push(ctx.message.text);
      await ctx.reply(`echo: ${ctx.message.text}`);
    });
    const running = bot.start({ allowed_updates: ["message"], timeout: 10, drop_pending_updates: false });
    await tg.waitForRequest("getUpdates");
    // The poll is held open; pushing wakes it.
    const first = tg.pushMessage(tg.message.text("one"))[0]!;
    await tg.waitForTexts(ALICE.id, (t) => t.length === 1);
    tg.pushMessage(tg.message.text("two"));
    await tg.waitForTexts(ALICE.id, (t) => t.length === 2);
    await bot.stop();
    await running;
    expect(seen).toEqual(["one", "two"]);
    expect(tg.calls("getMe")).toHaveLength(1);
    expect(tg.calls("deleteWebhook")).toHaveLength(1);
    const polls = tg.calls("getUpdates").map((r) => r.body);
    expect(polls[0]).toMatchObject({ offset: 1, timeout: 10, allowed_updates: ["message"] });
    expect(polls.some((b) => b.offset === first.update_id + 1)).toBe(true);
    expect(tg.updates.size).toBe(0);
    expect(tg.visibleTexts(ALICE.id)).toEqual(["echo: one", "echo: two"]);
  });

  test("getUpdates: timeout holds the request, limit caps, offset confirms", async () => {
    const { tg, api } = telegram();
    const started = Date.now();
    expect(await api.getUpdates({ timeout: 1 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const ids = [1, 2, 3].map((i) => tg.pushUpdate({ message: tg.message.text(`m${i}`) }).update_id);
    const batch = await api.getUpdates({ limit: 2 });
    expect(batch.map((u) => u.update_id)).toEqual(ids.slice(0, 2));
    const rest = await api.getUpdates({ offset: ids[1]! + 1 });
    expect(rest.map((u) => u.update_id)).toEqual([ids[2]!]);
    expect(await api.getUpdates({ offset: ids[2]! + 1 })).toEqual([]);
    expect(tg.updates.lastOffset).toBe(ids[2]! + 1);
    // A held poll is answered as soon as an update arrives.
    const waiting = api.getUpdates({ offset: ids[2]! + 1, timeout: 20 });
    await Bun.sleep(50);
    const pushed = tg.pushUpdate({ message: tg.message.text("late") });
    expect((await waiting).map((u) => u.update_id)).toEqual([pushed.update_id]);
  });

  test("Bot API rules: allowed_updates, webhooks, replies, file_id resends, topics", async () => {
    const { tg, api } = telegram();
    const reaction = tg.pushUpdate({
      message_reaction: { chat: { id: ALICE.id, type: "private", first_name: "Alice" }, message_id: 1, date: 0, old_reaction: [], new_reaction: [] },
    });
    const text = tg.pushUpdate({ message: tg.message.text("hi") });
    // message_reaction is opt-in: by default it is never delivered.
    expect((await api.getUpdates()).map((u) => u.update_id)).toEqual([text.update_id]);
    expect(reaction.update_id).toBeLessThan(text.update_id);

    await api.setWebhook("https://example.invalid/hook");
    expect((await grammyError(api.getUpdates())).error_code).toBe(409);
    await api.deleteWebhook({ drop_pending_updates: true });
    expect(await api.getUpdates()).toEqual([]);

    const missing = await grammyError(api.sendMessage(ALICE.id, "x", { reply_parameters: { message_id: 999 } }));
    expect(missing.description).toBe("Bad Request: message to be replied not found");
    const replied = await api.sendMessage(ALICE.id, "x", { reply_parameters: { message_id: text.message!.message_id } });
    expect(replied.reply_to_message?.text).toBe("hi");

    const doc = tg.message.document({ file_name: "r.pdf", mime_type: "application/pdf" });
    const resent = await api.sendDocument(ALICE.id, doc.document!.file_id, { caption: "again" });
    expect(resent.document).toMatchObject({ file_name: "r.pdf", mime_type: "application/pdf" });
    const voice = await api.sendVoice(ALICE.id, new InputFile(new TextEncoder().encode("OggS"), "v.ogg"), { message_thread_id: 3 });
    expect(voice).toMatchObject({ voice: { mime_type: "audio/ogg", file_size: 4 }, message_thread_id: 3 });
    const noText = await grammyError(api.editMessageText(ALICE.id, voice.message_id, "x"));
    expect(noText.description).toBe("Bad Request: there is no text in the message to edit");
    const bogus = await grammyError(api.sendPhoto(ALICE.id, "no-such-file-id"));
    expect(bogus.description).toBe("Bad Request: wrong file identifier/HTTP URL specified");
    const wrongAction = await grammyError(api.sendChatAction(ALICE.id, "dancing" as "typing"));
    expect(wrongAction.description).toBe("Bad Request: wrong parameter action in request");
    const twoReactions = api.setMessageReaction(ALICE.id, text.message!.message_id, [
      { type: "emoji", emoji: "👍" },
      { type: "emoji", emoji: "🔥" },
    ]);
    expect((await grammyError(twoReactions)).description).toBe("Bad Request: REACTIONS_TOO_MANY");
    expect(tg.chat(ALICE.id).map((e) => e.sender)).toEqual(["user", "bot", "bot", "bot"]);
  });

  test("injected failures: 409 conflict, 429 with retry_after, entity rejection then plain retry", async () => {
    const { tg, api } = telegram();
    tg.conflictNext();
    const conflict = await grammyError(api.getUpdates());
    expect(conflict.error_code).toBe(409);
    expect(conflict.description).toBe("Conflict: terminated by other getUpdates request; make sure that only one bot instance is running");
    // A second poller terminates the first, as on the real server.
    const firstPoll = api.getUpdates({ timeout: 20 });
    await Bun.sleep(50);
    const secondPoll = api.getUpdates({ timeout: 1 });
    expect((await grammyError(firstPoll)).error_code).toBe(409);
    expect(await secondPoll).toEqual([]);

    tg.rateLimitNext("sendMessage", 3);
    const limited = await grammyError(api.sendMessage(1, "x"));
    expect(limited.error_code).toBe(429);
    expect(limited.description).toBe("Too Many Requests: retry after 3");
    expect(limited.parameters.retry_after).toBe(3);
    expect(tg.calls("sendMessage")[0]!.response).toEqual({
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 3",
      parameters: { retry_after: 3 },
    });

    tg.rejectEntitiesNext("sendMessage");
    const parse = await grammyError(api.sendMessage(1, "<b>x</b>", { parse_mode: "HTML" }));
    expect(parse.description).toStartWith("Bad Request: can't parse entities:");
    const plain = await api.sendMessage(1, "x");
    expect(plain.text).toBe("x");

    tg.failNext("sendChatAction", { error_code: 500, description: "Internal Server Error" });
    expect((await grammyError(api.sendChatAction(1, "typing"))).error_code).toBe(500);
    await api.sendChatAction(1, "typing");
    expect(tg.chatActions(1).map((a) => a.action)).toEqual(["typing"]);
  });
});

function slack(opts?: Parameters<typeof startSlackFake>[0]): { sf: SlackFake; client: WebClient } {
  const sf = startSlackFake(opts);
  stops.push(() => sf.stop());
  return { sf, client: new WebClient(sf.token, { slackApiUrl: sf.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR }) };
}

async function slackError(p: Promise<unknown>): Promise<{ code: string; data: { error: string } }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; data: { error: string } };
  }
  throw new Error("expected the call to fail");
}

describe("slack fake", () => {
  test("auth.test and bad tokens", async () => {
    const { sf, client } = slack();
    const auth = await client.auth.test();
    expect(auth).toMatchObject({ ok: true, user_id: sf.botUserId, team_id: sf.teamId, bot_id: sf.botId });
    const call = sf.calls("auth.test")[0]!;
    expect(call.headers.authorization).toBe(`Bearer ${sf.token}`);
    const bad = new WebClient("xoxb-wrong", { slackApiUrl: sf.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR });
    expect((await slackError(bad.auth.test())).data.error).toBe("invalid_auth");
  });

  test("postMessage in a thread, update, delete: form-encoded body with JSON blocks", async () => {
    const { sf, client } = slack();
    const inbound = sf.events.channelMessage("question?") as { event: { ts: string; channel: string } };
    const parent = inbound.event.ts;
    const blocks = [{ type: "section", text: { type: "mrkdwn", text: "*hi*" } }];
    const posted = await client.chat.postMessage({
      channel: SLACK_CHANNEL,
      thread_ts: parent,
      text: "*hi*",
      blocks,
      unfurl_links: false,
      unfurl_media: false,
      mrkdwn: true,
    });
    expect(posted.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(posted.message).toMatchObject({ text: "*hi*", thread_ts: parent, bot_id: sf.botId, user: sf.botUserId });
    const call = sf.calls("chat.postMessage")[0]!;
    expect(call.encoding).toBe("form");
    expect(call.body).toMatchObject({ channel: SLACK_CHANNEL, thread_ts: parent, unfurl_links: "false", unfurl_media: "false", mrkdwn: "true" });
    expect(JSON.parse(String(call.body.blocks))).toEqual(blocks);

    const thinking = await client.chat.postMessage({ channel: SLACK_CHANNEL, thread_ts: parent, text: "💭" });
    await client.chat.update({ channel: SLACK_CHANNEL, ts: posted.ts!, text: "*hello*" });
    await client.chat.delete({ channel: SLACK_CHANNEL, ts: thinking.ts! });
    expect(sf.visibleTexts(SLACK_CHANNEL, parent)).toEqual(["*hello*"]);
    expect(sf.messages(SLACK_CHANNEL, parent).map((m) => m.sender)).toEqual(["user", "bot", "bot"]);
    expect((await slackError(client.chat.delete({ channel: SLACK_CHANNEL, ts: thinking.ts! }))).data.error).toBe("message_not_found");
    expect((await slackError(client.chat.delete({ channel: SLACK_CHANNEL, ts: parent }))).data.error).toBe("cant_delete_message");
  });

  test("reactions.add: shortcode names, already_reacted, invalid_name", async () => {
    const { sf, client } = slack();
    const ts = (sf.events.dm("hi") as { event: { ts: string } }).event.ts;
    await client.reactions.add({ channel: SLACK_DM, timestamp: ts, name: "eyes" });
    expect(sf.calls("reactions.add")[0]!.body).toMatchObject({ channel: SLACK_DM, timestamp: ts, name: "eyes" });
    expect(sf.messages(SLACK_DM)[0]!.reactions).toEqual(["eyes"]);
    const again = await slackError(client.reactions.add({ channel: SLACK_DM, timestamp: ts, name: "eyes" }));
    expect(again.code).toBe("slack_webapi_platform_error");
    expect(again.data.error).toBe("already_reacted");
    expect((await slackError(client.reactions.add({ channel: SLACK_DM, timestamp: ts, name: ":eyes:" }))).data.error).toBe("invalid_name");
    expect((await slackError(client.reactions.add({ channel: SLACK_DM, timestamp: ts, name: "👀" }))).data.error).toBe("invalid_name");
    await client.reactions.remove({ channel: SLACK_DM, timestamp: ts, name: "eyes" });
    expect(sf.messages(SLACK_DM)[0]!.reactions).toEqual([]);
    const anonymous = new WebClient(undefined, { slackApiUrl: sf.apiUrl, retryConfig: { retries: 0 }, logLevel: LogLevel.ERROR });
    expect((await slackError(anonymous.auth.test())).data.error).toBe("not_authed");
  });

  test("filesUploadV2 end to end: three calls, the bytes, a file message in the thread", async () => {
    const { sf, client } = slack();
    const parent = (sf.events.channelMessage("send me a file") as { event: { ts: string } }).event.ts;
    const result = await client.filesUploadV2({
      channel_id: SLACK_CHANNEL,
      thread_ts: parent,
      file: Buffer.from("hello"),
      filename: "a.txt",
      initial_comment: "here",
    });
    expect(result.ok).toBe(true);
    expect(sf.calls("files.getUploadURLExternal")[0]!.body).toMatchObject({ filename: "a.txt", length: "5" });
    const upload = sf.calls("upload")[0]!;
    expect(upload.status).toBe(200);
    expect(upload.headers.authorization).toBe(`Bearer ${sf.token}`);
    expect(upload.files).toHaveLength(1);
    expect(upload.files[0]).toMatchObject({ field: "body", filename: "Untitled", size: 5 });
    const complete = sf.calls("files.completeUploadExternal")[0]!;
    expect(JSON.parse(String(complete.body.files))).toEqual([{ id: expect.stringMatching(/^F/), title: "a.txt" }]);
    expect(complete.body).toMatchObject({ channel_id: SLACK_CHANNEL, initial_comment: "here", thread_ts: parent });
    const [reply] = sf.messages(SLACK_CHANNEL, parent).filter((m) => m.sender === "bot");
    expect(reply!.text).toBe("here");
    expect(reply!.files![0]!.name).toBe("a.txt");
    // The uploaded file is downloadable with the token, like any hosted file.
    const res = await fetch(reply!.files![0]!.url_private, { headers: { authorization: `Bearer ${sf.token}` } });
    expect(await res.text()).toBe("hello");
  });

  test("url_private needs the bot token; file_share events point at the fake", async () => {
    const { sf } = slack();
    const file = sf.addFile({ name: "notes.txt", mimetype: "text/plain", bytes: "hello world!" });
    const body = sf.events.fileShare([file], "what is this?") as { type: string; event: Record<string, unknown> };
    expect(body.type).toBe("event_callback");
    expect(body.event).toMatchObject({ type: "message", subtype: "file_share", channel: SLACK_DM, channel_type: "im", user: SLACK_ALICE });
    const url = (body.event.files as SlackFile[])[0]!.url_private;
    expect(url.startsWith(sf.url)).toBe(true);
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: "Bearer xoxb-nope" } })).status).toBe(401);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${sf.token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("text/plain");
    expect(await ok.text()).toBe("hello world!");

    const mention = sf.events.appMention("hello") as { event: Record<string, unknown>; authorizations: Array<{ user_id: string }> };
    expect(mention.event).toMatchObject({ type: "app_mention", text: `<@${sf.botUserId}> hello`, channel: SLACK_CHANNEL });
    expect(mention.authorizations[0]!.user_id).toBe(sf.botUserId);
    const reply = sf.events.threadReply("more", String(mention.event.ts)) as { event: Record<string, unknown> };
    expect(reply.event).toMatchObject({ thread_ts: mention.event.ts, channel_type: "channel" });
  });

  test("injected failures: 429 with Retry-After, msg_too_long, invalid_blocks, upload failure", async () => {
    const { sf, client } = slack();
    sf.rateLimitNext("chat.postMessage", 7);
    const strict = new WebClient(sf.token, { slackApiUrl: sf.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logLevel: LogLevel.ERROR });
    const limited = (await slackError(strict.chat.postMessage({ channel: SLACK_DM, text: "x" }))) as unknown as { code: string; retryAfter: number };
    expect(limited.code).toBe("slack_webapi_rate_limited_error");
    expect(limited.retryAfter).toBe(7);
    // With retries on, the client waits Retry-After and succeeds.
    sf.rateLimitNext("chat.postMessage", 1);
    const patient = new WebClient(sf.token, { slackApiUrl: sf.apiUrl, retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 }, logLevel: LogLevel.ERROR });
    expect((await patient.chat.postMessage({ channel: SLACK_DM, text: "x" })).ok).toBe(true);
    expect(sf.calls("chat.postMessage").map((r) => r.status)).toEqual([429, 429, 200]);

    sf.failNext("chat.postMessage", "msg_too_long");
    expect((await slackError(client.chat.postMessage({ channel: SLACK_DM, text: "x" }))).data.error).toBe("msg_too_long");
    expect((await slackError(client.chat.postMessage({ channel: SLACK_DM, text: "y".repeat(40_001) }))).data.error).toBe("msg_too_long");
    sf.failNext("chat.postMessage", "invalid_blocks");
    expect((await slackError(client.chat.postMessage({ channel: SLACK_DM, text: "x" }))).data.error).toBe("invalid_blocks");
    const badBlocks = client.chat.postMessage({
      channel: SLACK_DM,
      text: "x",
      blocks: [{ type: "section", text: { type: "mrkdwn", text: "z".repeat(3001) } }],
    });
    expect((await slackError(badBlocks)).data.error).toBe("invalid_blocks");
    expect((await slackError(client.apiCall("chat.postMessage", { channel: SLACK_DM }))).data.error).toBe("no_text");

    sf.failUploadNext(500);
    await expect(client.filesUploadV2({ channel_id: SLACK_DM, file: Buffer.from("x"), filename: "x.txt" })).rejects.toThrow();
    expect(sf.calls("files.completeUploadExternal")).toHaveLength(0);
  });
});

function whatsapp(opts?: Parameters<typeof startWhatsAppFake>[0]): WhatsAppFake {
  const wa = startWhatsAppFake(opts);
  stops.push(() => wa.stop());
  return wa;
}

/** A Graph API answer's JSON, as these tests read it: an error, a send's ids, an upload's id, or media metadata. */
interface GraphBody {
  error?: GraphErrorBody["error"];
  messaging_product?: string;
  contacts?: Array<{ input: string; wa_id: string }>;
  messages?: Array<{ id: string }>;
  id?: string;
  url?: string;
  file_size?: number | string;
}

/** A call to the fake Graph API; its body is the JSON (as `T`), or the text when the answer is not JSON (a download: `graph<string>`). */
async function graph<T = GraphBody>(
  wa: WhatsAppFake,
  path: string,
  init: RequestInit & { json?: unknown; token?: string | null } = {},
): Promise<{ status: number; body: T }> {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? wa.token : init.token;
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const res = await fetch(path.startsWith("http") ? path : `${wa.graphBase("v25.0")}${path}`, { ...init, headers, body });
  return { status: res.status, body: (res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text()) as T };
}

/** A webhook body the fake built, as WhatsApp's reference shapes it: one entry, one change. */
interface WebhookBody {
  object: string;
  entry: Array<{ changes: Array<{ field: string; value: { metadata: unknown; contacts?: unknown; messages?: WebhookMessage[]; statuses?: unknown[] } }> }>;
}
/** A message in a webhook: the fields these tests follow; the rest is compared whole. */
interface WebhookMessage {
  id: string;
  type: string;
  timestamp: string;
  image?: { id: string; sha256: string };
  sticker?: { mime_type: string };
  document?: unknown;
  reaction?: unknown;
}
// The builders return plain records; this is the shape they build (test/fakes/whatsapp/webhooks.ts).
const changeOf = (payload: Record<string, unknown>) => (payload as unknown as WebhookBody).entry[0]!.changes[0]!;
const firstMessage = (payload: Record<string, unknown>) => changeOf(payload).value.messages![0]!;

describe("whatsapp fake", () => {
  const to = WA_USER.wa_id;

  test("send text: validated, answered like the Cloud API, kept per recipient", async () => {
    const wa = whatsapp();
    const res = await graph(wa, `/${wa.phoneNumberId}/messages`, {
      method: "POST",
      json: { messaging_product: "whatsapp", recipient_type: "individual", to, type: "text", text: { preview_url: false, body: "hello" } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ messaging_product: "whatsapp", contacts: [{ input: to, wa_id: to }], messages: [{ id: expect.stringMatching(/^wamid\./) }] });
    expect(wa.visibleTexts(to)).toEqual(["hello"]);
    expect(wa.calls("messages")[0]!.body).toMatchObject({ text: { preview_url: false, body: "hello" } });

    const send = (json: unknown) => graph(wa, `/${wa.phoneNumberId}/messages`, { method: "POST", json });
    const tooLong = await send({ messaging_product: "whatsapp", to, type: "text", text: { body: "x".repeat(4097) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({
      code: 100,
      type: "OAuthException",
      error_data: { details: "Param text['body'] must be at most 4096 characters long." },
    });
    expect((await send({ to, type: "text", text: { body: "x" } })).body.error!.message).toBe("(#100) The parameter messaging_product is required.");
    expect((await send({ messaging_product: "whatsapp", type: "text", text: { body: "x" } })).body.error!.message).toBe("(#100) The parameter to is required.");
    expect((await send({ messaging_product: "whatsapp", to, type: "image" })).body.error!.message).toBe("(#100) The parameter image is required.");
    expect((await send({ messaging_product: "whatsapp", to, type: "voice", voice: {} })).status).toBe(400);
    const wrongPhone = await graph(wa, `/999/messages`, { method: "POST", json: { messaging_product: "whatsapp", to, text: { body: "x" } } });
    expect(wrongPhone.body.error).toMatchObject({ code: 100, error_subcode: 33, type: "GraphMethodException" });
  });

  test("Bearer check: 401 with a Graph OAuthException, code 190", async () => {
    const wa = whatsapp();
    for (const token of [null, "EAAwrong"]) {
      const res = await graph(wa, `/${wa.phoneNumberId}/messages`, { method: "POST", token, json: { messaging_product: "whatsapp", to, text: { body: "x" } } });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: "OAuthException", code: 190 });
      expect(typeof res.body.error!.fbtrace_id).toBe("string");
    }
    expect(wa.sent()).toHaveLength(0);
  });

  test("media: multipart upload, send by id, GET /{media-id}, download with Bearer", async () => {
    const wa = whatsapp();
    const form = new FormData();
    form.append("messaging_product", "whatsapp");
    form.append("type", "audio/ogg");
    form.append("file", new Blob([new Uint8Array([0x4f, 0x67, 0x67, 0x53, 9])], { type: "audio/ogg" }), "reply.ogg");
    const up = await graph(wa, `/${wa.phoneNumberId}/media`, { method: "POST", body: form });
    expect(up.status).toBe(200);
    const id = up.body.id!;
    expect(id).toMatch(/^\d+$/);
    expect(wa.calls("media")[0]!.files[0]).toMatchObject({ field: "file", filename: "reply.ogg", type: "audio/ogg", size: 5 });
    expect(wa.calls("media")[0]!.body).toEqual({ messaging_product: "whatsapp", type: "audio/ogg" });

    const sent = await graph(wa, `/${wa.phoneNumberId}/messages`, {
      method: "POST",
      json: { messaging_product: "whatsapp", to, type: "audio", audio: { id, voice: true } },
    });
    expect(sent.status).toBe(200);
    expect(wa.sent(to)[0]).toMatchObject({ type: "audio", payload: { id, voice: true } });
    const unknown = await graph(wa, `/${wa.phoneNumberId}/messages`, {
      method: "POST",
      json: { messaging_product: "whatsapp", to, type: "image", image: { id: "42" } },
    });
    expect(unknown.body.error!.code).toBe(131009);

    // Inbound: a webhook references media the fake serves.
    const image = firstMessage(wa.webhook.image({ bytes: "JPEGDATA", caption: "look" })).image!;
    const meta = await graph(wa, `/${image.id}`);
    expect(meta.body).toMatchObject({ messaging_product: "whatsapp", mime_type: "image/jpeg", sha256: image.sha256, file_size: "8", id: image.id });
    expect(meta.body.url!.startsWith(wa.url)).toBe(true);
    expect((await graph(wa, meta.body.url!, { token: null })).status).toBe(401);
    const bytes = await graph<string>(wa, meta.body.url!);
    expect(bytes).toEqual({ status: 200, body: "JPEGDATA" });
    expect(new Bun.CryptoHasher("sha256").update("JPEGDATA").digest("hex")).toBe(image.sha256);

    const tooBig = new FormData();
    tooBig.append("messaging_product", "whatsapp");
    tooBig.append("type", "image/png");
    tooBig.append("file", new Blob([new Uint8Array(5 * 1024 * 1024 + 1)]), "big.png");
    expect((await graph(wa, `/${wa.phoneNumberId}/media`, { method: "POST", body: tooBig })).body.error!.code).toBe(131053);
  });

  test("reactions: single emoji on an inbound message, empty to remove", async () => {
    const wa = whatsapp();
    const inbound = firstMessage(wa.webhook.text("hi"));
    const react = (emoji: string) =>
      graph(wa, `/${wa.phoneNumberId}/messages`, {
        method: "POST",
        json: { messaging_product: "whatsapp", recipient_type: "individual", to, type: "reaction", reaction: { message_id: inbound.id, emoji } },
      });
    expect((await react("👀")).status).toBe(200);
    expect(wa.reactionOn(inbound.id)).toBe("👀");
    expect((await react("👍🏽")).status).toBe(200);
    expect((await react("ok")).body.error!.code).toBe(131009);
    expect((await react("👀👀")).status).toBe(400);
    expect((await react("")).status).toBe(200);
    expect(wa.reactionOn(inbound.id)).toBeUndefined();
    expect(wa.visibleTexts(to)).toEqual([]);
  });

  test("webhook builders follow the official example's shape", () => {
    const wa = whatsapp();
    const text = wa.webhook.text("Does it come in another color?");
    expect(text.object).toBe("whatsapp_business_account");
    const { value, field } = changeOf(text);
    expect(field).toBe("messages");
    expect(value.metadata).toEqual({ display_phone_number: wa.displayPhoneNumber, phone_number_id: wa.phoneNumberId });
    expect(value.contacts).toEqual([{ profile: { name: WA_USER.name }, wa_id: WA_USER.wa_id }]);
    expect(value.messages![0]).toMatchObject({ from: WA_USER.wa_id, type: "text", text: { body: "Does it come in another color?" } });
    expect(value.messages![0]!.timestamp).toMatch(/^\d+$/);
    const voice = firstMessage(wa.webhook.audio({ voice: true }));
    expect(voice).toMatchObject({ type: "audio", audio: { voice: true, mime_type: "audio/ogg; codecs=opus" } });
    const doc = firstMessage(wa.webhook.document({ filename: "a.pdf", caption: "c" }));
    expect(doc.document).toMatchObject({ filename: "a.pdf", caption: "c", mime_type: "application/pdf" });
    expect(firstMessage(wa.webhook.video()).type).toBe("video");
    expect(firstMessage(wa.webhook.sticker()).sticker!.mime_type).toBe("image/webp");
    const removed = firstMessage(wa.webhook.reaction("wamid.X"));
    expect(removed.reaction).toEqual({ message_id: "wamid.X" });
    const status = changeOf(wa.webhook.status("wamid.Y", "read")).value;
    expect(status.messages).toBeUndefined();
    expect(status.statuses![0]).toMatchObject({ id: "wamid.Y", status: "read", recipient_id: WA_USER.wa_id });
  });

  test("injected failures: 429 rate limit, then success; 500 on media", async () => {
    const wa = whatsapp({ fileSizeAs: "number" });
    wa.rateLimitNext("messages");
    const json = { messaging_product: "whatsapp", to, type: "text", text: { body: "x" } };
    const limited = await graph(wa, `/${wa.phoneNumberId}/messages`, { method: "POST", json });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: 130429, message: "(#130429) Rate limit hit" });
    expect((await graph(wa, `/${wa.phoneNumberId}/messages`, { method: "POST", json })).status).toBe(200);
    const { id } = wa.addMedia("abc", { mime_type: "text/plain" });
    wa.failNext("media.get", { status: 500, code: 1, message: "(#1) An unknown error occurred" });
    expect((await graph(wa, `/${id}`)).status).toBe(500);
    expect((await graph(wa, `/${id}`)).body.file_size).toBe(3);
  });
});

describe("telegram fake: inline buttons", () => {
  test("a keyboard under a message, a press as a callback_query, one answer per query, the keyboard taken off", async () => {
    const { tg, api } = telegram();
    const sent = await api.sendMessage(ALICE.id, "Approve?", {
      reply_markup: {
        inline_keyboard: [
          [
            { text: "Yes", callback_data: "fx:ok:ABCD2345" },
            { text: "No", callback_data: "fx:no:ABCD2345" },
          ],
        ],
      },
    });
    expect(
      tg
        .chat(ALICE.id)
        .at(-1)
        ?.reply_markup?.inline_keyboard[0]?.map((b) => b.text),
    ).toEqual(["Yes", "No"]);
    const id = tg.pressButton(ALICE.id, sent.message_id, { data: "fx:no:ABCD2345" });
    const [update] = await api.getUpdates({ timeout: 0, allowed_updates: ["message", "callback_query"] });
    expect(update!.callback_query).toMatchObject({
      id,
      from: { id: ALICE.id },
      data: "fx:no:ABCD2345",
      message: { message_id: sent.message_id, chat: { id: ALICE.id } },
    });
    expect(() => tg.pressButton(ALICE.id, sent.message_id, { data: "fx:ok:OTHER" })).toThrow();

    expect(await api.answerCallbackQuery(id, { text: "Denied." })).toBe(true);
    expect(await tg.waitForCallbackAnswer(id)).toEqual({ text: "Denied." });
    expect((await grammyError(api.answerCallbackQuery(id))).description).toContain("query ID is invalid");
    await api.editMessageReplyMarkup(ALICE.id, sent.message_id, { reply_markup: { inline_keyboard: [] } });
    expect(tg.chat(ALICE.id).at(-1)!.reply_markup).toEqual({ inline_keyboard: [] });
    expect((await grammyError(api.editMessageReplyMarkup(ALICE.id, sent.message_id, { reply_markup: { inline_keyboard: [] } }))).description).toContain(
      "not modified",
    );
    expect(
      (await grammyError(api.sendMessage(ALICE.id, "x", { reply_markup: { inline_keyboard: [[{ text: "t", callback_data: "x".repeat(65) }]] } }))).description,
    ).toContain("BUTTON_DATA_INVALID");
  });

  test("callback queries are delivered only to a bot that asked for them", async () => {
    const { tg, api } = telegram();
    const sent = await api.sendMessage(ALICE.id, "Approve?", { reply_markup: { inline_keyboard: [[{ text: "Yes", callback_data: "y" }]] } });
    tg.pressButton(ALICE.id, sent.message_id);
    expect(await api.getUpdates({ timeout: 0, allowed_updates: ["message"] })).toEqual([]);
  });
});
