/** `fermix ask` with the compiled binary: in-process with no daemon, through the control socket with one. */
import { describe, expect, test } from "bun:test";
import { type FakeModel, reply, userText, userTexts } from "../fakes/model-server.ts";
import { ensureBinary, runFermix } from "../helpers/binary.ts";
import { CHANNELS_OFF, providerToml } from "../helpers/config.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { within } from "../helpers/gateway.ts";

const { defer, model, home, daemon } = e2eResources();

const config = (fake: FakeModel) => providerToml(fake.url, { api: "responses", apiKey: "sk-fake-0000" }) + CHANNELS_OFF;

/** Every user text the model was shown in one request. */
describe("fermix ask", () => {
  test("with no daemon it runs the turn in-process and prints the reply", async () => {
    const fake = await model();
    fake.reply(reply.text("Paris is the ", "capital of France."));
    const h = home();
    h.writeConfig(config(fake));
    const r = await runFermix(["ask", "What", "is", "the capital of France?"], h.env);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("Paris is the capital of France.");
    expect(fake.requests).toHaveLength(1);
    expect(userText(fake.requests[0]!)).toBe("What is the capital of France?");
  });

  test("with a daemon running it goes through the daemon: its provider, its store, its queues", async () => {
    const daemonModel = await model();
    const localModel = await model();
    const h = home();
    h.writeConfig(config(daemonModel));
    const d = await daemon(h);
    // From here the file points elsewhere: only the daemon still knows daemonModel.
    h.writeConfig(config(localModel));

    daemonModel.reply(reply.text("Noted: your name is Ada."));
    const first = await runFermix(["ask", "my name is Ada"], h.env);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain("Noted: your name is Ada.");
    expect(daemonModel.requests).toHaveLength(1);
    expect(localModel.requests).toHaveLength(0);

    // Slash commands work the same way, with no model call.
    const help = await runFermix(["ask", "/help"], h.env);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("/whoami");
    expect(daemonModel.requests).toHaveLength(1);

    // Once the daemon is gone, ask runs in-process on the same store: the conversation carries over.
    expect(await d.stop("SIGTERM")).toBe(0);
    localModel.reply(reply.text("You are Ada."));
    const second = await runFermix(["ask", "what is my name?"], h.env);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toContain("You are Ada.");
    expect(localModel.requests).toHaveLength(1);
    expect(userTexts(localModel.requests[0]!)).toEqual(["my name is Ada", "what is my name?"]);
  });

  test("a provider failure is printed and exits 1", async () => {
    const fake = await model();
    fake.reply(reply.status(401, "Incorrect API key provided"));
    const h = home();
    h.writeConfig(config(fake));
    const r = await runFermix(["ask", "hello"], h.env);
    expect(r.exitCode).toBe(1);
    expect(r.stdout + r.stderr).toContain("Incorrect API key provided");
  });

  test("with no provider configured it points at `fermix setup` and exits 1, daemon or not", async () => {
    const h = home();
    h.writeConfig(CHANNELS_OFF);
    const alone = await runFermix(["ask", "hello"], h.env);
    expect(alone.exitCode).toBe(1);
    expect(alone.stderr).toContain("fermix setup");
    expect(alone.stdout).toBe("");

    await daemon(h);
    const withDaemon = await runFermix(["ask", "hello"], h.env);
    expect(withDaemon.exitCode).toBe(1);
    expect(withDaemon.stderr).toContain("fermix setup");
  });

  for (const mode of ["in-process", "through the daemon"] as const) {
    test(`Ctrl-C (SIGINT) stops a slow turn ${mode}: the provider request is aborted, exit 130`, async () => {
      const fake = await model();
      fake.reply(reply.hang());
      const h = home();
      h.writeConfig(config(fake));
      if (mode === "through the daemon") await daemon(h);
      const proc = Bun.spawn([ensureBinary(), "ask", "write a very long essay"], { env: h.env as Record<string, string>, stdout: "pipe", stderr: "pipe" });
      defer(() => proc.exitCode === null && proc.kill("SIGKILL"));
      const [request] = await fake.waitForRequests(1);
      proc.kill("SIGINT");
      await within(request!.untilAborted, "the provider request to be aborted");
      expect(await proc.exited).toBe(130);
    });
  }

  test("nothing to ask is a usage error", async () => {
    const r = await runFermix(["ask"], home().env);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("fermix ask");
  });
});
