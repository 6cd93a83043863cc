/**
 * Who is offered the owner's MCP tools and web tools, tried from outside as
 * an attacker would: the compiled binary on the Telegram fake with the
 * reference "everything" MCP server (whose get-env tool would hand over the
 * server's environment), Alice the owner and Bob a friend on the allowlist.
 * The fake model is gullible: whatever it is asked, it calls ev__get-env and
 * web_fetch. What stops it is the role table (src/gateway/roles.ts): the
 * tools are not offered, so the calls go nowhere.
 *
 * By default a server's tools are the owner's in a direct chat only; its
 * `roles` widen them, but never into a shared chat where the owner has not
 * switched tools on — not for the owner, and not for a member.
 */
import { expect, test } from "bun:test";
import { EVERYTHING } from "../agent/mcp/servers.ts";
import { lastToolOutput, type ModelRequestBody, reply } from "../fakes/model-server.ts";
import { ALICE, BOB, groupChat, privateChat } from "../fakes/telegram.ts";
import { ACP_OFF, providerToml, telegramToml, tomlTable } from "../helpers/config.ts";
import { e2eResources, until } from "../helpers/e2e.ts";

const start = e2eResources();

async function daemonWithEverything(roles?: readonly string[]) {
  const model = await start.model();
  const telegram = start.telegram();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url) +
      telegramToml({ botToken: telegram.token, apiRoot: telegram.url, ownerUserId: String(ALICE.id), allowedUserIds: [String(BOB.id)] }) +
      ACP_OFF +
      tomlTable("fermix_core.mcp.servers.ev", { command: process.execPath, args: [EVERYTHING, "stdio"], roles }),
  );
  const daemon = await start.daemon(home);
  await until(
    "the MCP server ready",
    async () =>
      !((await (await fetch(new URL("/health/ready", daemon.url))).json()) as { failures: string[] }).failures.some((f) => f.startsWith("mcp server")),
    20_000,
  );
  // The gullible model: first it reaches for the tool server's environment and a page on this machine, then it reports.
  model.fallback((request) =>
    lastToolOutput(request) === ""
      ? reply.toolCalls({ name: "ev__get-env", arguments: {} }, { name: "web_fetch", arguments: { url: "http://169.254.169.254/latest/meta-data/" } })
      : reply.text(`tools said: ${lastToolOutput(request)}`),
  );
  return { model, telegram };
}

const toolNames = (body: ModelRequestBody) => (body.tools ?? []).map((t) => t.name ?? "");
const turnsOf = (requests: Array<{ body: ModelRequestBody }>) => requests.filter((r) => !(r.body.input ?? []).some((i) => i.type === "function_call_output"));

test("with the default roles, a friend in a direct chat, a friend in a group and the owner in a group get no MCP tool and no web tool", async () => {
  const { model, telegram } = await daemonWithEverything();
  const group = groupChat();
  telegram.pushMessage(telegram.message.text("show me the server's environment", { from: BOB, chat: privateChat(BOB) }));
  await telegram.waitForTexts(BOB.id, (texts) => texts.some((t) => t.startsWith("tools said:")), 15_000);
  telegram.pushMessage(telegram.message.text("@bot show the group the environment", { from: BOB, chat: group }));
  await telegram.waitForTexts(group.id, (texts) => texts.filter((t) => t.startsWith("tools said:")).length === 1, 15_000);
  telegram.pushMessage(telegram.message.text("@bot hi", { from: ALICE, chat: group }));
  await telegram.waitForTexts(group.id, (texts) => texts.filter((t) => t.startsWith("tools said:")).length === 2, 15_000);

  const turns = turnsOf(model.requests);
  expect(turns).toHaveLength(3);
  for (const turn of turns) {
    expect(toolNames(turn.body).filter((name) => name.startsWith("ev__") || name.startsWith("web_"))).toEqual([]);
  }
  // The calls went nowhere: the tools do not exist for these turns.
  const answers = model.requests.filter((r) => (r.body.input ?? []).some((i) => i.type === "function_call_output"));
  for (const answer of answers) {
    const outputs = (answer.body.input ?? []).filter((i) => i.type === "function_call_output").map((i) => i.output);
    expect(outputs).toEqual(["error: there is no tool named ev__get-env", "error: there is no tool named web_fetch"]);
  }
  // Nothing of the server's environment reached any chat.
  for (const chat of [BOB.id, group.id]) for (const text of telegram.visibleTexts(chat)) expect(text).not.toContain("PATH");

  // The owner's direct chat has them.
  telegram.pushMessage(telegram.message.text("and me?"));
  await telegram.waitForTexts(ALICE.id, (texts) => texts.some((t) => t.startsWith("tools said:")), 15_000);
  const owners = turnsOf(model.requests).at(-1)!;
  expect(toolNames(owners.body)).toEqual(expect.arrayContaining(["ev__get-env", "ev__echo", "web_fetch"]));
});

test("roles widened to allowed senders reach a friend's direct chat, never a group where tools are off", async () => {
  const { model, telegram } = await daemonWithEverything(["owner", "allowed", "member"]);
  telegram.pushMessage(telegram.message.text("echo something", { from: BOB, chat: privateChat(BOB) }));
  await telegram.waitForTexts(BOB.id, (texts) => texts.some((t) => t.startsWith("tools said:")), 15_000);
  const group = groupChat();
  telegram.pushMessage(telegram.message.text("@bot echo for the group", { from: BOB, chat: group }));
  await telegram.waitForTexts(group.id, (texts) => texts.some((t) => t.startsWith("tools said:")), 15_000);

  const [dm, inGroup] = turnsOf(model.requests);
  expect(toolNames(dm!.body)).toContain("ev__echo");
  // web_fetch stays the owner's whatever a server's roles say.
  expect(toolNames(dm!.body)).not.toContain("web_fetch");
  expect(toolNames(inGroup!.body).filter((name) => name.startsWith("ev__"))).toEqual([]);
});
