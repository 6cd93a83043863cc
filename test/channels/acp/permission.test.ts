/** On ACP the agent's access request is the editor's own permission dialog (session/request_permission). */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastToolOutput, reply } from "../../fakes/model-server.ts";
import { connectEditor, type Editor } from "./editor.ts";
import { type AcpHarness, startAcp } from "./harness.ts";

let h: AcpHarness;
let e: Editor;
let data: string;

beforeAll(async () => {
  h = await startAcp();
});
afterEach(async () => {
  await e?.close();
  h.fake.reset();
  rmSync(data, { recursive: true, force: true });
});
afterAll(async () => {
  await h.close();
});

async function ask(answer: Editor["permissionAnswer"]) {
  data = realpathSync(mkdtempSync(join("/var/tmp", "fermix-acp-data-")));
  writeFileSync(join(data, "notes.txt"), "from the editor's project\n");
  h.fake.reply(reply.toolCall("request_access", { path: data, mode: "rw", reason: "to update your notes" }), reply.text("Done."));
  e = await connectEditor(h.socket);
  await e.initialize();
  e.permissionAnswer = answer;
  const session = await e.newSession();
  expect((await e.prompt(session, "update my notes")).stopReason).toBe("end_turn");
  return session;
}

test("allowed in the editor: the access is granted and the turn goes on", async () => {
  const session = await ask("allow");
  expect(e.permissions).toHaveLength(1);
  expect(e.permissions[0]).toMatchObject({
    sessionId: session,
    toolCall: { title: `Allow read-write access to ${data}?`, kind: "edit", locations: [{ path: data }], rawInput: { reason: "to update your notes" } },
    options: [
      { optionId: "allow", kind: "allow_once" },
      { optionId: "deny", kind: "reject_once" },
    ],
  });
  expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("granted: read-write access");
  expect(h.core.sandbox.control.store.grants()).toEqual([expect.objectContaining({ path: data, mode: "rw" })]);
  // No confirmation code was shown: the editor asked instead.
  expect(e.chunks(session).join("")).not.toContain("/confirm");
  h.core.sandbox.control.store.revoke(data);
});

test("denied or dismissed in the editor: no access", async () => {
  await ask("deny");
  expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("denied");
  h.fake.reset();
  rmSync(data, { recursive: true, force: true });
  await e.close();
  await ask("cancelled");
  expect(lastToolOutput(h.fake.requests[1]!)).toStartWith("denied");
  expect(h.core.sandbox.control.store.grants()).toEqual([]);
});
