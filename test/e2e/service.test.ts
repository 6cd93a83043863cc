/**
 * `fermix service` from the compiled binary on Linux, with fake systemctl,
 * loginctl and journalctl on PATH that record their arguments: install
 * writes the user unit for this binary and starts it, status and logs hand
 * over to systemctl and journalctl, uninstall removes it; doctor reports
 * whether the service is installed and active.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, runFermix } from "../helpers/binary.ts";
import { e2eResources } from "../helpers/e2e.ts";
import { makeFakeBin } from "../helpers/fake-bin.ts";
import { READY_CONFIG } from "../helpers/home.ts";

const start = e2eResources();

test("install, status, logs, doctor, uninstall", async () => {
  const fake = makeFakeBin();
  start.defer(() => fake.cleanup());
  const home = start.home({ PATH: fake.path, USER: "alice", PORT: "4555" });
  home.writeConfig(READY_CONFIG);
  const unit = join(home.env.HOME!, ".config", "systemd", "user", "fermix.service");

  const install = await runFermix(["service", "install"], home.env);
  expect(install.stderr).toBe("");
  expect(install.exitCode).toBe(0);
  expect(install.stdout).toContain(`wrote ${unit}`);
  expect(install.stdout).toContain("enabled and started fermix.service");
  expect(install.stdout).toContain("loginctl enable-linger alice");
  const text = readFileSync(unit, "utf8");
  expect(text).toContain(`ExecStart="${BINARY}" run\n`);
  expect(text).toContain(`Environment="FERMIX_HOME=${home.home}"\n`);
  expect(text).toContain('Environment="PORT=4555"\n');
  expect(text).toContain('Environment="FERMIX_SECRET_STORE=file"\n');
  expect(fake.calls()).toEqual([
    "systemctl --user daemon-reload",
    "systemctl --user enable fermix.service",
    "systemctl --user restart fermix.service",
    "loginctl show-user alice --property=Linger",
  ]);

  const inactive = await runFermix(["doctor", "--json"], home.env);
  const row = (out: string) => (JSON.parse(out) as { rows: Array<{ check: string; status: string; detail: string }> }).rows.find((r) => r.check === "service");
  expect(row(inactive.stdout)).toEqual({
    check: "service",
    status: "warn",
    detail: "installed but not running (fermix.service inactive): see fermix service status and fermix service logs",
  });
  fake.setActive("active");
  expect(row((await runFermix(["doctor", "--json"], home.env)).stdout)).toEqual({
    check: "service",
    status: "ok",
    detail: "installed and active (fermix.service active)",
  });

  const status = await runFermix(["service", "status"], home.env);
  expect(status.exitCode).toBe(0);
  expect(status.stdout).toContain(`installed: ${unit}`);
  expect(status.stdout).toContain("Active: active");
  const logs = await runFermix(["service", "logs", "--lines=20"], home.env);
  expect(logs.exitCode).toBe(0);
  expect(logs.stdout).toContain('msg="fermix listening"');
  expect(fake.calls()).toContain("journalctl --user -u fermix.service -n 20 --no-pager");
  expect(fake.calls()).toContain("systemctl --user status --no-pager fermix.service");

  const reinstall = await runFermix(["service", "install"], home.env);
  expect(reinstall.stdout).toContain(`replaced ${unit}`);

  const uninstall = await runFermix(["service", "uninstall"], home.env);
  expect(uninstall.exitCode).toBe(0);
  expect(uninstall.stdout).toContain(`removed ${unit}`);
  expect(existsSync(unit)).toBe(false);
  expect(fake.calls().slice(-2)).toEqual(["systemctl --user disable --now fermix.service", "systemctl --user daemon-reload"]);
  const gone = await runFermix(["service", "status"], home.env);
  expect(gone.exitCode).toBe(3);
  expect(gone.stdout).toContain("not installed");
});

test("an unknown action is a usage error", async () => {
  const home = start.home();
  const r = await runFermix(["service", "restart-everything"], home.env);
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toContain('unknown action "restart-everything"');
});
