/** install.sh as a user runs it: piped from curl with no checkout, against a loopback release server. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { ensureBinary } from "../helpers/binary.ts";

const SCRIPT = resolve(import.meta.dir, "../../install.sh");
const platform = `${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`;
let server: ReturnType<typeof Bun.serve>;
const served: string[] = [];
let scratch: string;

beforeAll(() => {
  const binary = ensureBinary();
  scratch = mkdtempSync(join(tmpdir(), "fermix-install-"));
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      served.push(path);
      if (path === `/releases/latest/download/fermix-${platform}` || path === `/releases/download/v9.9.9/fermix-${platform}`) {
        return new Response(Bun.file(binary));
      }
      return new Response("not found", { status: 404 });
    },
  });
});
afterAll(() => {
  server.stop(true);
  rmSync(scratch, { recursive: true, force: true });
});

/** Run install.sh the way `curl … | sh` does: the script on stdin, no checkout next to it. */
async function pipedInstall(args: string[], home: string) {
  const proc = Bun.spawn(["sh", "-s", "--", ...args], {
    cwd: scratch,
    env: { PATH: "/usr/bin:/bin", HOME: home, SHELL: "/bin/bash", FERMIX_RELEASE_URL: `http://127.0.0.1:${server.port}/releases` },
    stdin: new TextEncoder().encode(readFileSync(SCRIPT, "utf8")),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

test("piped from curl: downloads the platform's binary from FERMIX_RELEASE_URL and puts it on PATH once", async () => {
  const home = join(scratch, "home1");
  const first = await pipedInstall([], home);
  expect(first.stderr).toBe("");
  expect(first.code).toBe(0);
  expect(served).toContain(`/releases/latest/download/fermix-${platform}`);
  expect(first.stdout).toContain(`installed fermix ${pkg.version} to ${home}/.local/bin/fermix`);
  const installed = Bun.spawnSync([join(home, ".local/bin/fermix"), "--version"]).stdout.toString();
  expect(installed).toBe(`fermix ${pkg.version}\n`);
  // Idempotent: a second run replaces the binary and does not add the PATH line again.
  const second = await pipedInstall([], home);
  expect(second.code).toBe(0);
  const rc = readFileSync(join(home, ".bashrc"), "utf8");
  expect(rc.split(`export PATH="${home}/.local/bin:$PATH"`).length - 1).toBe(1);
});

test("--version picks that release; --dir and --no-modify-path are honoured", async () => {
  const home = join(scratch, "home2");
  const dir = join(scratch, "bin2");
  const r = await pipedInstall(["--version", "v9.9.9", "--dir", dir, "--no-modify-path"], home);
  expect(r.code).toBe(0);
  expect(served).toContain(`/releases/download/v9.9.9/fermix-${platform}`);
  expect(r.stdout).toContain(`add ${dir} to your PATH`);
  expect(Bun.spawnSync([join(dir, "fermix"), "--version"]).exitCode).toBe(0);
});

test("a release that does not exist is a clear error", async () => {
  const r = await pipedInstall(["--version", "0.0.1", "--dir", join(scratch, "bin3")], join(scratch, "home3"));
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`install.sh: error: download failed: http://127.0.0.1:${server.port}/releases/download/v0.0.1/fermix-${platform}`);
});

test("--help and unknown options", async () => {
  const help = Bun.spawnSync(["sh", SCRIPT, "--help"]);
  expect(help.exitCode).toBe(0);
  expect(help.stdout.toString()).toContain("Usage: install.sh");
  const bad = Bun.spawnSync(["sh", SCRIPT, "--bogus"]);
  expect(bad.exitCode).toBe(1);
  expect(bad.stderr.toString()).toContain("unknown option '--bogus'");
});
