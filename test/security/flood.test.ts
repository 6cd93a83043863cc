/**
 * A flood of strangers leaves nothing behind, tried from outside: the
 * compiled binary takes 10,000 correctly signed Slack events from a sender
 * who is on no list (a leaked Slack app, a spam wave). Each is answered
 * 200 as the platform expects, and none is recorded: the database's rows —
 * de-duplication keys, inbox, outbox, history — are where they were, the
 * model is never asked, and the log sums the drops up instead of a line per
 * event. The owner's own event is still de-duplicated: delivered twice, it
 * is answered once.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { reply } from "../fakes/model-server.ts";
import { SLACK_ALICE, SLACK_DM } from "../fakes/slack.ts";
import { CHANNELS_OFF, providerToml, slackToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { postSlackWebhook } from "../helpers/sign.ts";
import { until } from "../helpers/wait.ts";

const SIGNING_SECRET = "flood-slack-signing-secret-0123456789";
const STRANGER = "U0STRANGER1";
const EVENTS = 10_000;
/** How many signed posts are in flight at once: enough to be a flood, few enough for a 2-core machine. */
const CONCURRENCY = 64;

const start = e2eResources();

/** The rows the daemon keeps, table by table, read from its database beside it (WAL lets a reader in). */
function rowCounts(path: string): { idempotency: number; inbox: number; outbox: number; messages: number } {
  const db = new Database(path, { readonly: true });
  try {
    const count = (table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { idempotency: count("idempotency"), inbox: count("inbox"), outbox: count("outbox"), messages: count("messages") };
  } finally {
    db.close();
  }
}

test("10,000 signed events from a stranger leave no row behind; the owner's event delivered twice is answered once", async () => {
  const model = await start.model();
  const slack = start.slack();
  const home = start.home();
  home.writeConfig(
    providerToml(model.url, { api: "chat" }) +
      CHANNELS_OFF +
      slackToml({ botToken: slack.token, signingSecret: SIGNING_SECRET, ownerUserId: SLACK_ALICE, apiUrl: slack.apiUrl }),
  );
  const daemon = await start.daemon(home);
  const database = join(home.home, "fermix.db");
  const before = rowCounts(database);

  let next = 0;
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (next < EVENTS) {
      next++;
      const body = JSON.stringify(slack.events.dm(`buy cheap followers #${next}`, { user: STRANGER }));
      const res = await postSlackWebhook(daemon.url, body, SIGNING_SECRET);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  // Every one authentic, so every one acknowledged as Slack expects.
  expect(Object.fromEntries(statuses)).toEqual({ 200: EVENTS });
  expect(rowCounts(database)).toEqual(before);
  expect(model.requests).toHaveLength(0);
  // The first drop is said at once; the rest are summed up a minute later, not written line by line.
  expect(daemon.logs().match(/unauthorized sender/g)?.length ?? 0).toBeLessThanOrEqual(2);

  // The owner's event, delivered twice (a platform retry): recorded once, answered once.
  model.reply(reply.text("Hello Alice."));
  const owners = JSON.stringify(slack.events.dm("hello, are you there?"));
  expect((await postSlackWebhook(daemon.url, owners, SIGNING_SECRET)).status).toBe(200);
  expect((await postSlackWebhook(daemon.url, owners, SIGNING_SECRET)).status).toBe(200);
  await slack.waitForTexts(SLACK_DM, (texts) => texts.includes("Hello Alice."), undefined, 15_000);
  await until("the owner's turn to be recorded", () => rowCounts(database).messages === before.messages + 2);
  expect(model.requests).toHaveLength(1);
  expect(rowCounts(database).idempotency).toBe(before.idempotency + 1);
}, 120_000);
