/**
 * Self-tests for the Discord fake, driven by a bare WebSocket and fetch (not
 * Fermix's client), so the fake is known to speak the documented protocol on
 * its own: Hello first, 4004 for a wrong token, ACKs, READY's resume URL,
 * replay on Resume, op 9 for an unknown session, Discord's REST answers,
 * buttons and the rules of answering a press.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { type APIMessageComponentInteraction, GatewayOpcodes } from "discord-api-types/v10";
import { DISCORD_ALICE, DISCORD_BOB, DISCORD_CHANNEL, DISCORD_DM, DISCORD_GUILD, type DiscordFake, startDiscordFake } from "./discord.ts";

let fake: DiscordFake;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.close();
  await fake?.stop();
});

/** A raw socket that collects parsed frames and its close event. */
async function open(url: string) {
  const ws = new WebSocket(url);
  sockets.push(ws);
  const frames: Array<{ op: number; d: unknown; s: number | null; t: string | null }> = [];
  const closed = new Promise<CloseEvent>((resolve) => ws.addEventListener("close", resolve));
  ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve);
    ws.addEventListener("error", reject);
  });
  const next = async (op: number, t?: string) => {
    for (let i = 0; i < 400; i++) {
      const found = frames.find((f) => f.op === op && (t === undefined || f.t === t));
      if (found) return found;
      await Bun.sleep(5);
    }
    throw new Error(`no frame op ${op} ${t ?? ""}`);
  };
  return { ws, frames, closed, next, send: (payload: unknown) => ws.send(JSON.stringify(payload)) };
}

describe("discord fake", () => {
  test("GET /gateway/bot needs the Bot token and names the socket and the session start limit", async () => {
    fake = startDiscordFake();
    const denied = await fetch(`${fake.apiBase}/gateway/bot`);
    expect(denied.status).toBe(401);
    const res = await fetch(`${fake.apiBase}/gateway/bot`, { headers: { authorization: `Bot ${fake.token}` } });
    expect(await res.json()).toEqual({
      url: `${fake.wsUrl}/gateway`,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    });
    expect(res.headers.get("x-ratelimit-bucket")).toBeTruthy();
  });

  test("Hello first; a wrong token is closed with 4004", async () => {
    fake = startDiscordFake();
    const c = await open(`${fake.wsUrl}/gateway?v=10&encoding=json`);
    expect(await c.next(GatewayOpcodes.Hello)).toMatchObject({ d: { heartbeat_interval: 41_250 } });
    c.send({ op: GatewayOpcodes.Identify, d: { token: "wrong", intents: 37377, properties: {} } });
    expect((await c.closed).code).toBe(4004);
  });

  test("Identify → READY (with resume_gateway_url) and GUILD_CREATE; heartbeat → ACK; Resume replays what was missed, then RESUMED", async () => {
    fake = startDiscordFake();
    const a = await open(`${fake.wsUrl}/gateway?v=10&encoding=json`);
    a.send({ op: GatewayOpcodes.Identify, d: { token: fake.token, intents: 37377, properties: { os: "linux", browser: "x", device: "x" } } });
    const readyFrame = await a.next(GatewayOpcodes.Dispatch, "READY");
    const readyData = readyFrame.d as { session_id: string; resume_gateway_url: string };
    expect(readyFrame.s).toBe(1);
    expect(readyData.resume_gateway_url).toBe(`${fake.wsUrl}/resume`);
    expect(await a.next(GatewayOpcodes.Dispatch, "GUILD_CREATE")).toMatchObject({ s: 2 });
    a.send({ op: GatewayOpcodes.Heartbeat, d: 2 });
    await a.next(GatewayOpcodes.HeartbeatAck);

    a.ws.close(4200);
    await a.closed;
    fake.userMessage("while you were away");
    const b = await open(`${readyData.resume_gateway_url}?v=10&encoding=json`);
    b.send({ op: GatewayOpcodes.Resume, d: { token: fake.token, session_id: readyData.session_id, seq: 2 } });
    const replayed = await b.next(GatewayOpcodes.Dispatch, "MESSAGE_CREATE");
    expect(replayed).toMatchObject({ s: 3, d: { content: "while you were away", channel_id: DISCORD_DM } });
    expect(await b.next(GatewayOpcodes.Dispatch, "RESUMED")).toMatchObject({ s: 4 });

    const c = await open(`${fake.wsUrl}/resume?v=10&encoding=json`);
    c.send({ op: GatewayOpcodes.Resume, d: { token: fake.token, session_id: "no-such-session", seq: 1 } });
    expect(await c.next(GatewayOpcodes.InvalidSession)).toMatchObject({ d: false });
  });

  test("REST: content over 2,000 characters is 400 50035, an empty message 400 50006, an unknown message 404 10008", async () => {
    fake = startDiscordFake();
    const post = (body: unknown) =>
      fetch(`${fake.apiBase}/channels/${DISCORD_DM}/messages`, {
        method: "POST",
        headers: { authorization: `Bot ${fake.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect(await (await post({ content: "x".repeat(2001) })).json()).toMatchObject({ code: 50035, errors: { content: {} } });
    expect(await (await post({ content: "" })).json()).toMatchObject({ code: 50006 });
    const ok = await post({ content: "x".repeat(2000), flags: 4 });
    expect(ok.status).toBe(200);
    const gone = await fetch(`${fake.apiBase}/channels/${DISCORD_DM}/messages/1`, { method: "DELETE", headers: { authorization: `Bot ${fake.token}` } });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ message: "Unknown Message", code: 10008 });
  });

  test("REST: a file upload's attachments[].id is a string naming its files[n] part, as the OpenAPI spec types it; a number is refused", async () => {
    fake = startDiscordFake();
    const upload = (attachments: unknown) => {
      const form = new FormData();
      form.append("payload_json", JSON.stringify({ attachments }));
      form.append("files[0]", new File([new TextEncoder().encode("# answer\n")], "answer.md", { type: "text/markdown" }));
      return fetch(`${fake.apiBase}/channels/${DISCORD_DM}/messages`, { method: "POST", headers: { authorization: `Bot ${fake.token}` }, body: form });
    };
    const asNumber = await upload([{ id: 0, filename: "answer.md" }]);
    expect(asNumber.status).toBe(400);
    expect(await asNumber.json()).toMatchObject({ code: 50035, errors: { attachments: { "0": { id: {} } } } });
    const noSuchPart = await upload([{ id: "1", filename: "answer.md" }]);
    expect(noSuchPart.status).toBe(400);
    const asString = await upload([{ id: "0", filename: "answer.md" }]);
    expect(asString.status).toBe(200);
    expect(await asString.json()).toMatchObject({ attachments: [{ filename: "answer.md" }] });
  });

  describe("buttons and interactions", () => {
    const postAs = (path: string, body: unknown, token?: string) =>
      fetch(`${fake.apiBase}${path}`, {
        method: "POST",
        headers: { ...(token ? { authorization: `Bot ${token}` } : {}), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const row = (...buttons: unknown[]) => ({ type: 1, components: buttons });
    const button = (label: string, custom_id: string, style = 1) => ({ type: 2, style, label, custom_id });

    test("components are checked as Discord does: rows of buttons, a custom_id each, unique and at most 100 characters", async () => {
      fake = startDiscordFake();
      const post = (components: unknown) => postAs(`/channels/${DISCORD_DM}/messages`, { content: "pick", components }, fake.token);
      for (const bad of [
        [{ type: 2, style: 1, label: "not in a row", custom_id: "a" }],
        [row({ type: 2, style: 1, label: "no id" })],
        [row(button("long", "x".repeat(101)))],
        [row(button("one", "same"), button("two", "same"))],
        [row(button("x".repeat(81), "a"))],
        Array.from({ length: 6 }, (_, i) => row(button(`b${i}`, `id${i}`))),
      ]) {
        const res = await post(bad);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ code: 50035, errors: { components: {} } });
      }
      const ok = await post([row(button("✅ Approve", "fx:ok:ABCDEFGH"), button("✖️ Deny", "fx:no:ABCDEFGH", 2))]);
      expect(ok.status).toBe(200);
      const { id } = (await ok.json()) as { id: string; components: unknown[] };
      expect(fake.buttons(id)).toEqual([
        { style: 1, label: "✅ Approve", customId: "fx:ok:ABCDEFGH" },
        { style: 2, label: "✖️ Deny", customId: "fx:no:ABCDEFGH" },
      ]);
    });

    test("a press is INTERACTION_CREATE (member in a guild, user in a DM); its callback needs its own token, once, within the deadline", async () => {
      fake = startDiscordFake();
      const c = await open(`${fake.wsUrl}/gateway?v=10&encoding=json`);
      c.send({ op: GatewayOpcodes.Identify, d: { token: fake.token, intents: 37377, properties: {} } });
      await c.next(GatewayOpcodes.Dispatch, "READY");
      const inGuild = (await (
        await postAs(`/channels/${DISCORD_CHANNEL}/messages`, { content: "ok?", components: [row(button("Yes", "y"), button("No", "n"))] }, fake.token)
      ).json()) as { id: string };
      const inDm = (await (await postAs(`/channels/${DISCORD_DM}/messages`, { content: "ok?", components: [row(button("Yes", "y"))] }, fake.token)).json()) as {
        id: string;
      };

      const first = fake.pressButton(inGuild.id, { user: DISCORD_BOB, customId: "n" });
      const frame = await c.next(GatewayOpcodes.Dispatch, "INTERACTION_CREATE");
      const d = frame.d as APIMessageComponentInteraction;
      expect(d).toMatchObject({
        id: first,
        type: 3,
        guild_id: DISCORD_GUILD,
        channel_id: DISCORD_CHANNEL,
        member: { user: { id: DISCORD_BOB.id } },
        data: { custom_id: "n", component_type: 2 },
      });
      expect(d.message.id).toBe(inGuild.id);
      expect(d.user).toBeUndefined();
      const token = d.token;

      // Wrong token: unknown interaction. Type 4 with flags 64: only the presser sees it; no bot token needed.
      expect((await postAs(`/interactions/${first}/wrong-token/callback`, { type: 4, data: { content: "hi" } })).status).toBe(404);
      expect((await postAs(`/interactions/${first}/${token}/callback`, { type: 4, data: { content: "not yours", flags: 64 } })).status).toBe(204);
      expect(fake.interaction(first)!.answer).toMatchObject({ type: 4, data: { content: "not yours", flags: 64 } });
      expect(fake.visibleTexts(DISCORD_CHANNEL)).toEqual(["ok?"]);
      const again = await postAs(`/interactions/${first}/${token}/callback`, { type: 4, data: { content: "again" } });
      expect(again.status).toBe(400);
      expect(await again.json()).toMatchObject({ code: 40060 });

      // Type 7 updates the message: buttons off, content replaced.
      const second = fake.pressButton(inDm.id);
      const interactionFrame = () => c.frames.find((f) => f.t === "INTERACTION_CREATE" && (f.d as { id: string }).id === second);
      for (let i = 0; i < 400 && !interactionFrame(); i++) await Bun.sleep(5);
      const dm = interactionFrame()!.d as APIMessageComponentInteraction;
      expect(dm).toMatchObject({ id: second, channel_id: DISCORD_DM, user: { id: DISCORD_ALICE.id } });
      expect(dm.guild_id).toBeUndefined();
      expect((await postAs(`/interactions/${second}/${dm.token}/callback`, { type: 7, data: { components: [], content: "ok?\n\nApproved." } })).status).toBe(
        204,
      );
      expect(fake.buttons(inDm.id)).toEqual([]);
      expect(fake.visibleTexts(DISCORD_DM)).toEqual(["ok?\n\nApproved."]);

      // Too late: Discord forgets an interaction nobody answered within three seconds.
      fake.rest.interactions.deadlineMs = 0;
      const late = fake.pressButton(inGuild.id);
      await Bun.sleep(5);
      const lateToken = fake.interaction(late)!.token;
      expect(await (await postAs(`/interactions/${late}/${lateToken}/callback`, { type: 6 })).json()).toMatchObject({ code: 10062 });
    });
  });
});
