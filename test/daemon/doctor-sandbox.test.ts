/** Doctor's sandbox rows: run_command's OS sandbox found and run once, or how to install it; who fermix runs as. */
import { afterEach, expect, test } from "bun:test";
import { runDoctor } from "../../src/daemon/doctor.ts";
import { makeHome, READY_CONFIG, type TestHome } from "../helpers/home.ts";

let home: TestHome;
afterEach(() => home?.cleanup());

const sandboxRow = async (path: string) => {
  home = makeHome({ PATH: path });
  home.writeConfig(READY_CONFIG);
  const rows = await runDoctor({ env: home.env, probeDaemon: async () => false });
  return rows.find((r) => r.check === "sandbox");
};

test("with bubblewrap on PATH: ok, after running it once", async () => {
  const row = await sandboxRow(process.env.PATH ?? "/usr/bin:/bin");
  expect(row).toEqual({ check: "sandbox", status: "ok", detail: expect.stringMatching(/^bubblewrap [\d.]+ \(.*bwrap\): run_command runs sandboxed$/) });
});

test("without it: a warning that run_command is not offered, and how to install bubblewrap", async () => {
  const row = await sandboxRow("/nonexistent");
  expect(row?.status).toBe("warn");
  expect(row?.detail).toContain("run_command is not offered");
  expect(row?.detail).toContain("apt-get install bubblewrap");
});

test("the user row: root is a warning naming who commands run as; anyone else is ok", async () => {
  home = makeHome();
  home.writeConfig(READY_CONFIG);
  const rows = await runDoctor({ env: home.env, probeDaemon: async () => false });
  const user = rows.find((r) => r.check === "user");
  if (process.getuid!() === 0) {
    expect(user?.status).toBe("warn");
    expect(user?.detail).toStartWith("fermix runs as root: run_command's commands run as uid 1000 (sandbox) in the sandbox");
  } else {
    expect(user?.status).toBe("ok");
  }
});
