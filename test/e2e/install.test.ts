/**
 * install.sh as a user runs it: piped from curl with no checkout, against a
 * loopback release server that serves `fermix-<os>-<arch>.tar.xz` archives
 * and their SHA256SUMS, made by build.ts's own archive and checksum code.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { archiveBinary, writeChecksums } from "../../build.ts";
import pkg from "../../package.json" with { type: "json" };
import { ensureBinary } from "../helpers/binary.ts";

const SCRIPT = resolve(import.meta.dir, "../../install.sh");
const platform = `${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`;
const ASSET = `fermix-${platform}.tar.xz`;
let server: ReturnType<typeof Bun.serve>;
const served: string[] = [];
let scratch: string;

/** A release directory holding `archive` as the platform's archive, with its SHA256SUMS (unless `noSums`). */
async function release(name: string, archive: string, options: { corrupt?: boolean; noSums?: boolean } = {}): Promise<void> {
  const dir = join(scratch, "releases", name);
  mkdirSync(dir, { recursive: true });
  copyFileSync(archive, join(dir, ASSET));
  if (!options.noSums) await writeChecksums([join(dir, ASSET)], join(dir, "SHA256SUMS"));
  if (options.corrupt) {
    const bytes = readFileSync(join(dir, ASSET));
    const middle = bytes.length >> 1;
    bytes[middle] = bytes[middle]! ^ 0xff;
    writeFileSync(join(dir, ASSET), bytes);
  }
}

beforeAll(async () => {
  const binary = ensureBinary();
  scratch = mkdtempSync(join(tmpdir(), "fermix-install-"));
  const broken = join(scratch, "broken-fermix");
  writeFileSync(broken, "#!/bin/sh\necho 'cannot execute binary file: Exec format error' >&2\nexit 126\n");
  chmodSync(broken, 0o755);
  // The archive code is the release's own; level 0 on every core because xz -9 would only make the test slower.
  const good = join(scratch, "good.tar.xz");
  archiveBinary(binary, good, 0, 0);
  const bad = join(scratch, "broken.tar.xz");
  archiveBinary(broken, bad, 0, 0);
  await release("latest/download", good);
  await release("download/v9.9.9", good);
  await release("download/v6.6.6", good, { corrupt: true });
  await release("download/v5.5.5", good, { noSums: true });
  await release("download/v7.7.7", bad);
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      served.push(path);
      const file = join(scratch, "releases", path.replace(/^\/releases\//, ""));
      if (path.startsWith("/releases/") && !path.includes("..") && existsSync(file)) return new Response(Bun.file(file));
      return new Response("not found", { status: 404 });
    },
  });
  // Archiving a 100 MB binary (and building it, when src is newer) takes seconds on a busy 2-core machine.
}, 120_000);
afterAll(() => {
  server.stop(true);
  rmSync(scratch, { recursive: true, force: true });
});

/** Run install.sh the way `curl … | sh` does: the script on stdin, no checkout next to it. */
async function pipedInstall(args: string[], home: string, path = "/usr/bin:/bin") {
  const proc = Bun.spawn(["sh", "-s", "--", ...args], {
    cwd: scratch,
    env: { PATH: path, HOME: home, SHELL: "/bin/bash", FERMIX_RELEASE_URL: `http://127.0.0.1:${server.port}/releases` },
    stdin: new TextEncoder().encode(readFileSync(SCRIPT, "utf8")),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code, lastLine: stdout.trimEnd().split("\n").at(-1) };
}

const versionOf = (binary: string) => Bun.spawnSync([binary, "--version"]).stdout.toString().trim();

test("piped from curl: downloads the platform's archive, verifies its checksum and says so, unpacks it, puts it on PATH once", async () => {
  const home = join(scratch, "home1");
  const first = await pipedInstall([], home);
  expect(first.stderr).toBe("");
  expect(first.code).toBe(0);
  expect(served).toContain(`/releases/latest/download/${ASSET}`);
  expect(served).toContain("/releases/latest/download/SHA256SUMS");
  expect(first.stdout).toMatch(new RegExp(`verified ${ASSET.replaceAll(".", "\\.")}: sha256 [0-9a-f]{64} matches SHA256SUMS`));
  const installed = join(home, ".local/bin/fermix");
  expect(versionOf(installed)).toStartWith(`fermix ${pkg.version} (`);
  expect(first.stdout).toContain(`installed ${versionOf(installed)} to ${installed}`);
  // Not on PATH before: the next step names the full path, which works in this very shell.
  expect(first.lastLine).toBe(`install.sh: next: ${installed} setup`);

  // Idempotent: a second run upgrades in place and does not add the PATH line again.
  const second = await pipedInstall([], home);
  expect(second.code).toBe(0);
  expect(second.stdout).toContain(`upgraded ${installed}: ${versionOf(installed)} -> ${versionOf(installed)}`);
  const rc = readFileSync(join(home, ".bashrc"), "utf8");
  expect(rc.split(`export PATH="${home}/.local/bin:$PATH"`).length - 1).toBe(1);
});

test("--version picks that release; --dir is honoured; a directory already on PATH leaves the rc alone and the next step is `fermix setup`", async () => {
  const home = join(scratch, "home2");
  const dir = join(scratch, "bin2");
  const r = await pipedInstall(["--version", "v9.9.9", "--dir", dir], home, `${dir}:/usr/bin:/bin`);
  expect(r.code).toBe(0);
  expect(served).toContain(`/releases/download/v9.9.9/${ASSET}`);
  expect(existsSync(join(home, ".bashrc"))).toBe(false);
  expect(r.lastLine).toBe("install.sh: next: fermix setup");
  expect(Bun.spawnSync([join(dir, "fermix"), "--version"]).exitCode).toBe(0);

  const quiet = await pipedInstall(["--version", "9.9.9", "--dir", join(scratch, "bin2b"), "--no-modify-path"], join(scratch, "home2b"));
  expect(quiet.stdout).toContain(`add ${join(scratch, "bin2b")} to your PATH`);
  expect(existsSync(join(scratch, "home2b", ".bashrc"))).toBe(false);
});

test("a corrupted archive is refused: checksum mismatch, nothing installed", async () => {
  const dir = join(scratch, "bin3");
  const r = await pipedInstall(["--version", "6.6.6", "--dir", dir], join(scratch, "home3"));
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`install.sh: error: checksum mismatch for ${ASSET}`);
  expect(r.stderr).toContain("nothing was installed");
  expect(existsSync(join(dir, "fermix"))).toBe(false);
});

test("a release without SHA256SUMS is refused: nothing is installed unverified", async () => {
  const dir = join(scratch, "bin5");
  const r = await pipedInstall(["--version", "5.5.5", "--dir", dir], join(scratch, "home5"));
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("cannot download");
  expect(r.stderr).toContain("SHA256SUMS");
  expect(existsSync(join(dir, "fermix"))).toBe(false);
});

test("an upgrade whose new binary fails --version keeps the installed one, byte for byte", async () => {
  const dir = join(scratch, "bin4");
  const home = join(scratch, "home4");
  expect((await pipedInstall(["--dir", dir, "--no-modify-path"], home)).code).toBe(0);
  const before = readFileSync(join(dir, "fermix"));
  const old = versionOf(join(dir, "fermix"));
  const r = await pipedInstall(["--version", "7.7.7", "--dir", dir, "--no-modify-path"], home);
  expect(r.code).toBe(1);
  expect(r.stdout).toContain("matches SHA256SUMS");
  expect(r.stderr).toContain(`the new fermix does not run on this machine`);
  expect(r.stderr).toContain(`kept the installed one: ${old}`);
  expect(readFileSync(join(dir, "fermix")).equals(before)).toBe(true);
  expect(versionOf(join(dir, "fermix"))).toBe(old);
  expect(existsSync(join(dir, ".fermix.new"))).toBe(false);
});

test("a release that does not exist is a clear error", async () => {
  const r = await pipedInstall(["--version", "0.0.1", "--dir", join(scratch, "bin6")], join(scratch, "home6"));
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`install.sh: error: download failed: http://127.0.0.1:${server.port}/releases/download/v0.0.1/${ASSET}`);
});

test("--help and unknown options", async () => {
  const help = Bun.spawnSync(["sh", SCRIPT, "--help"]);
  expect(help.exitCode).toBe(0);
  expect(help.stdout.toString()).toContain("Usage: install.sh");
  const bad = Bun.spawnSync(["sh", SCRIPT, "--bogus"]);
  expect(bad.exitCode).toBe(1);
  expect(bad.stderr.toString()).toContain("unknown option '--bogus'");
});
