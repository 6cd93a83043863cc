/**
 * The service units: the systemd unit passes `systemd-analyze verify`, the
 * launchd plist has what launchd needs, and install/uninstall drive the
 * service manager as documented (fake executables on PATH record the calls).
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parsePlist } from "plist";
import {
  installService,
  launchdPlist,
  logPath,
  type ServiceContext,
  serviceStatus,
  spawnRunner,
  systemdUnit,
  tailLog,
  uninstallService,
  unitPath,
} from "../../src/setup/service.ts";
import { BINARY, ensureBinary } from "../helpers/binary.ts";
import { type FakeBin, makeFakeBin } from "../helpers/fake-bin.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

function context(platform: "systemd" | "launchd", fake?: FakeBin): ServiceContext {
  const userHome = mkdtempSync(join(tmpdir(), "fermix-user-"));
  cleanups.push(() => rmSync(userHome, { recursive: true, force: true }));
  const fermixHome = join(userHome, ".fermix 100% mine");
  return {
    platform,
    userHome,
    fermixHome,
    execPath: ensureBinary(),
    environment: { FERMIX_HOME: fermixHome, PATH: "/usr/local/bin:/usr/bin:/bin", PORT: "4031", FERMIX_SECRET_STORE: "file" },
    uid: 501,
    user: "alice",
    run: spawnRunner({ PATH: fake?.path ?? "/nonexistent" }),
    configHome: join(userHome, ".config"),
  };
}

function fakeBin(): FakeBin {
  const fake = makeFakeBin();
  cleanups.push(() => fake.cleanup());
  return fake;
}

test("the systemd unit runs `<binary> run` with the environment it needs, and passes systemd-analyze verify", () => {
  const ctx = context("systemd");
  const unit = systemdUnit(ctx);
  expect(unit).toContain(`ExecStart="${BINARY}" run\n`);
  expect(unit).toContain("Restart=on-failure\n");
  expect(unit).toContain("ExecReload=/bin/kill -HUP $MAINPID\n");
  expect(unit).toContain(`Environment="FERMIX_HOME=${ctx.fermixHome.replace("%", "%%")}"\n`);
  expect(unit).toContain('Environment="PORT=4031"\n');
  expect(unit).toContain("WantedBy=default.target\n");

  const dir = mkdtempSync(join(tmpdir(), "fermix-unit-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "fermix.service"), unit);
  // System mode: the --user manager cannot start as root here. The check is real: a unit whose program is missing fails it.
  const verify = Bun.spawnSync(["systemd-analyze", "verify", join(dir, "fermix.service")], { stderr: "pipe", stdout: "pipe" });
  expect(`${verify.stdout}${verify.stderr}`.trim()).toBe("");
  expect(verify.exitCode).toBe(0);
  writeFileSync(join(dir, "fermix.service"), unit.replace(BINARY, join(dir, "no-such-fermix")));
  const broken = Bun.spawnSync(["systemd-analyze", "verify", join(dir, "fermix.service")], { stderr: "pipe" });
  expect(broken.exitCode).not.toBe(0);
  expect(broken.stderr.toString()).toContain("no-such-fermix");
});

test("the launchd plist parses, and has what launchd needs: Label, ProgramArguments, RunAtLoad, KeepAlive, logs in <home>/logs/", () => {
  const ctx = context("launchd");
  const plist = parsePlist(launchdPlist(ctx)) as Record<string, unknown>;
  expect(plist).toEqual({
    Label: "ai.fermix.daemon",
    ProgramArguments: [BINARY, "run"],
    EnvironmentVariables: ctx.environment,
    WorkingDirectory: ctx.fermixHome,
    RunAtLoad: true,
    KeepAlive: true,
    ThrottleInterval: 5,
    ProcessType: "Background",
    StandardOutPath: join(ctx.fermixHome, "logs", "fermix.log"),
    StandardErrorPath: join(ctx.fermixHome, "logs", "fermix.log"),
  });
});

test("systemd: install writes the unit, reloads, enables and restarts it, and hints at lingering; uninstall undoes it", async () => {
  const fake = fakeBin();
  const ctx = context("systemd", fake);
  const installed = await installService(ctx);
  expect(installed.ok).toBe(true);
  const path = join(ctx.configHome, "systemd", "user", "fermix.service");
  expect(unitPath(ctx)).toBe(path);
  expect(readFileSync(path, "utf8")).toBe(systemdUnit(ctx));
  expect(fake.calls()).toEqual([
    "systemctl --user daemon-reload",
    "systemctl --user enable fermix.service",
    "systemctl --user restart fermix.service",
    "loginctl show-user alice --property=Linger",
  ]);
  expect(installed.lines).toContain(
    "lingering is off: the service stops when you log out and starts only at login. To run it from boot: loginctl enable-linger alice",
  );

  fake.setActive("active");
  fake.setLinger("yes");
  expect(await serviceStatus(ctx)).toEqual({ installed: true, active: true, detail: "fermix.service active" });
  const again = await installService(ctx);
  expect(again.lines[0]).toBe(`replaced ${path}`);
  expect(again.lines.some((l) => l.includes("linger"))).toBe(false);

  const removed = await uninstallService(ctx);
  expect(removed.lines).toEqual([`removed ${path}`]);
  expect(existsSync(path)).toBe(false);
  expect(fake.calls().slice(-2)).toEqual(["systemctl --user disable --now fermix.service", "systemctl --user daemon-reload"]);
  expect(await serviceStatus(ctx)).toMatchObject({ installed: false, active: false });
});

test("launchd: install boots out any old agent, writes the plist and bootstraps it; uninstall boots it out and removes it", async () => {
  const fake = fakeBin();
  const ctx = context("launchd", fake);
  const report = await installService(ctx);
  expect(report.ok).toBe(true);
  const path = join(ctx.userHome, "Library", "LaunchAgents", "ai.fermix.daemon.plist");
  expect(readFileSync(path, "utf8")).toBe(launchdPlist(ctx));
  expect(existsSync(join(ctx.fermixHome, "logs"))).toBe(true);
  expect(fake.calls()).toEqual(["launchctl bootout gui/501/ai.fermix.daemon", `launchctl bootstrap gui/501 ${path}`]);
  writeFileSync(join(fake.dir, "launchctl-state"), "running");
  expect(await serviceStatus(ctx)).toEqual({ installed: true, active: true, detail: "ai.fermix.daemon running" });

  await uninstallService(ctx);
  expect(existsSync(path)).toBe(false);
  expect(fake.calls().at(-1)).toBe("launchctl bootout gui/501/ai.fermix.daemon");
});

test("launchd: `service logs` shows the last lines of <home>/logs/fermix.log, a line still being written included", () => {
  const ctx = context("launchd");
  expect(tailLog(ctx, 3)).toBe("");
  mkdirSync(join(ctx.fermixHome, "logs"), { recursive: true });
  const lines = Array.from({ length: 6 }, (_, i) => `ts=2026-12-01T10:0${i}:00Z level=info msg="line ${i + 1}"`);
  writeFileSync(logPath(ctx), `${lines.join("\n")}\n`);
  expect(tailLog(ctx, 2)).toBe(`${lines[4]}\n${lines[5]}\n`);
  expect(tailLog(ctx, 50)).toBe(`${lines.join("\n")}\n`);
  writeFileSync(logPath(ctx), `${lines.join("\n")}\npartial`);
  expect(tailLog(ctx, 2)).toBe(`${lines[5]}\npartial\n`);
});

test("a failing service manager is reported with its command and message; a service never runs `bun`", async () => {
  const fake = fakeBin();
  writeFileSync(join(fake.dir, "systemctl"), '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n');
  const ctx = context("systemd", fake);
  const report = await installService(ctx);
  expect(report.ok).toBe(false);
  expect(report.lines.at(-1)).toBe("`systemctl --user daemon-reload` failed (exit 1): Failed to connect to bus: No medium found");

  const fromSource = await installService({ ...context("systemd", fake), execPath: "/usr/local/bin/bun" });
  expect(fromSource.ok).toBe(false);
  expect(fromSource.lines[0]).toContain("a service must run the installed fermix binary");
});
